"""One GPU rank (sim/particles/ranks_gpu.py) in this process, on numpy with the stand-in kernels
(tests/standin_kernels.py): it matches the CPU run, calm steps keep their slots and step like the CPU, a step
that outruns the forecast takes the slow way, fast particles and a box of a single bin row step like the CPU;
and what a rank needs: two bin rows each (GpuRank and the command refuse fewer), memory that keeps what it
holds when it grows."""

import numpy as np
import pytest
from standin_kernels import StandIn
from test_mpi_gpu_standin import run_standin
from test_mpi_particles import serial


def test_one_rank_matches_the_cpu_run():
    from sim.mpi.comm import Comm

    state, rank, counts, _ = run_standin(Comm(), 1500, 60, 7, {})
    assert counts == [1500] * 60
    reference = serial(1500, 60, 7, {})
    assert np.abs(state - reference).max() < 1e-9
    assert rank.everywhere_steps == 0
    assert 2 <= rank.renumbered_steps <= 20, "calm particles keep their slots for several steps"


def test_calm_steps_keep_their_slots_and_step_like_the_cpu():
    """Steps that do not renumber read the particles by the slots of the last numbering, each drifted since:
    every one of them is a CPU step from the same state, and the scan and place run only when renumbering."""
    from sim.mpi.comm import Comm

    _, rank, counts, worst = run_standin(Comm(), 1500, 40, 3, {}, verify=True)
    assert counts == [1500] * 40 and worst < 1e-12
    assert 2 <= rank.renumbered_steps <= 15 and rank.everywhere_steps == 0
    assert rank.k.launches["scan_tiles"] == rank.renumbered_steps + 1  # (and the first binning)
    assert rank.k.launches["step_rows"] >= 40 - rank.renumbered_steps, "the steps that kept the slots read by row"
    assert 1 <= rank.k.launches["slots_as_rows"] <= rank.renumbered_steps, "once a run of steps keeping slots"


def test_a_step_that_outruns_the_forecast_takes_the_slow_way():
    """A particle flung mid-run on a step planned not to renumber: the drift passes the margin, and the rank
    rebins everything before the next step instead of reading a neighbour that left its bins."""
    from sim.mpi.comm import Comm

    _, rank, counts, worst = run_standin(Comm(), 1500, 12, 3, {}, verify=True, more=13)
    assert rank.everywhere_steps == 0
    for _ in range(10):  # into a run of steps that keep their slots
        rank.step()
        if not rank.renumbering and rank.slots_are_rows:
            break
    assert not rank.renumbering
    for vel in rank.mem.vel:  # (the next step's interior ran already: numpy ranks run what is queued) slot lo's
        vel[rank.lo, :] = (40.0, 30.0)  # row in both sets (after a step that kept the slots): 0.02 along x a step
    slow = rank.everywhere_steps
    for _ in range(3):
        rank.step()
    assert rank.everywhere_steps == slow + 1


def test_one_rank_with_fast_particles_steps_like_the_cpu():
    from sim.mpi.comm import Comm

    kicks = {3: 300.0, 700: -250.0}
    state, rank, counts, worst = run_standin(Comm(), 1500, 40, 2, kicks, verify=True)
    assert counts == [1500] * 40
    assert worst < 1e-12
    assert rank.everywhere_steps == 0, "one rank's window is the whole box"


def test_gpu_ranks_need_two_bin_rows_each():
    """A rank reads two of each neighbour's rows: a box of 9 bin rows takes at most 4 GPU ranks."""
    from types import SimpleNamespace

    from sim.particles.ranks_gpu import GpuRank

    empty = np.zeros(0)
    comm = SimpleNamespace(size=5, rank=0)
    with pytest.raises(ValueError, match="9 bin rows for 5 GPU ranks: each needs at least 2"):
        GpuRank(comm, None, empty, empty, empty, empty, empty, 0.23, 1, xp=np, kernels=StandIn())


def test_the_command_refuses_gpu_ranks_without_two_rows_each_before_they_start():
    from sim.cmdline.cli import UsageError
    from sim.particles.ranks import check_ranks, strip_rows

    assert strip_rows(110, on_gpu=True) == 9
    check_ranks(110, 4, on_gpu=True)  # 2, 2, 2 and 3 rows
    with pytest.raises(UsageError, match="9 bin rows, fewer than the 5 ranks need .each takes at least 2"):
        check_ranks(110, 5, on_gpu=True)
    check_ranks(2, 1, on_gpu=True)  # one rank reads no neighbour: one row will do
    check_ranks(110, 5, on_gpu=False)  # a CPU rank reads one row of each neighbour


def test_one_gpu_rank_of_a_single_bin_row_steps_like_the_cpu():
    """One rank reads no neighbour's rows: a box of one bin row runs (4 particles), every step a CPU step."""
    from sim.mpi.comm import Comm
    from sim.particles import world
    from sim.particles.ranks_gpu import bins_per_side

    assert bins_per_side(world.box_size(4)) == 1
    _, rank, counts, worst = run_standin(Comm(), 4, 20, 3, {}, verify=True)
    assert counts == [4] * 20 and worst < 1e-12


def test_rank_memory_keeps_what_it_holds_when_it_grows():
    from sim.particles.rank_memory import RankMemory

    mem = RankMemory(np, np.float64, 10, 4)
    rows, head = mem.rows, mem.head
    mem.pos_rows(1, -head, rows)[...] = np.arange(2 * (head + rows)).reshape(head + rows, 2)
    mem.ids[0][:rows] = np.arange(rows) + 7

    def slots(m):  # perm's slots -head .. rows - 1 (a negative index into the view would wrap)
        return m.perm.base[m.head - head : m.head + rows]

    slots(mem)[...] = np.arange(-head, rows) * 3
    mem.fit(rows, head)
    assert (mem.rows, mem.head) == (rows, head), "enough room: nothing grows"
    mem.fit(rows + 1, head + 5)
    assert mem.rows > rows and mem.head >= head + 5
    assert (mem.pos_rows(1, -head, rows) == np.arange(2 * (head + rows)).reshape(head + rows, 2)).all()
    assert (mem.pos[1][:rows] == mem.pos_rows(1, 0, rows)).all(), "pos's row 0 is the room's row head"
    assert (mem.ids[0][:rows] == np.arange(rows) + 7).all()
    assert (slots(mem) == np.arange(-head, rows) * 3).all(), "slots keep their numbers, before 0 too"
    mem.fit_sends(mem.send_rows + 1)
    assert all(a.shape[0] == mem.send_rows for side in ("below", "above") for a in mem.leavers[side])
