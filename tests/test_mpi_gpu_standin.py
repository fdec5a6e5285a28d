"""The GPU rank's bookkeeping (sim/particles/ranks_gpu.py) over CPU ranks under mpiexec: binning.cu's rank
kernels replaced by a numba stand-in with the same arguments and pointer arithmetic (tests/standin_kernels.py),
numpy for CuPy, MPI for NCCL; and the same on a GPU with binning.cu (pytest -m gpu), one rank and several.
One rank in this process, and what a rank needs, are tested in tests/test_mpi_gpu_one_rank.py.

What it proves without a GPU: ghosts and their slots and bin starts, the slots kept for arriving particles,
migration, the interior and boundary launches and the slow path for particles that jump past a neighbour
keep every particle exactly once and give each the forces of all its neighbours. The stand-in adds
neighbours in bin order, not id order, so it matches the CPU to rounding: over a calm run at the end, and
with fast particles (whose close encounters magnify any rounding, as on a GPU) step by step, each step
checked against a CPU step from the same state. (Numpy ranks run both streams in the host's order: what
they cannot show is a race between the streams.)

Run as a script under mpiexec by the tests: python tests/test_mpi_gpu_standin.py N STEPS SEED OUT [KICKS]
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mpi_support import run  # noqa: E402
from standin_kernels import SideFirst, StandIn  # noqa: E402
from test_mpi_particles import initial, serial  # noqa: E402

KICK_VX_DIVISOR = -3.0  # fast particles: they cross several bin rows (and strips) a step


def run_standin(
    comm,
    n: int,
    steps: int,
    seed: int,
    kicks: dict[int, float],
    verify: bool = False,
    variant: str = "plain",
    gpu: bool = False,
    precision: str = "fp64",
    order: str = "-",
    more: int = 0,
):
    """GpuRank over ``comm`` on numpy with the stand-in kernels (or, with ``gpu``, CuPy and binning.cu on
    the rank's GPU): (state on rank 0 or None, rank, particle count after each step, largest difference of a
    step from a CPU step from the same state (verify)). ``order`` "side-first": the side stream's work before
    the interior step's; "tight": arrays start at the particles' count and grow by exactly what is needed
    (they grow in many steps), the interior queued before the step's read covers half the slots it needs, and
    the queued place and interior are taken back whenever a particle moves strips. ``more``: room for that many
    steps after these (the caller steps the rank on)."""
    from sim.gpu.timing import StageTimer
    from sim.mpi.links import HostLink
    from sim.particles import world
    from sim.particles.ranks import gather_state
    from sim.particles.ranks_gpu import GpuRank, bins_per_side, rows_of
    from sim.particles.strips import Strips

    if order == "tight":
        from sim.particles import rank_memory, ranks_gpu

        rank_memory._more = lambda needed: needed
        ranks_gpu.RankMemory = lambda xp, real, rows, head: rank_memory.RankMemory(xp, real, rows - head, 0)
        ranks_gpu.GpuRank._cover = lambda rank: rank.n // 2
        # below the window's slots whenever a particle moves strips (the rows at first, before the first binning)
        ranks_gpu.GpuRank._cap = lambda rank: rank.n if hasattr(rank, "hi") else rank.mem.rows
    x, y, vx, vy = initial(n, seed, kicks, KICK_VX_DIVISOR)
    size = world.box_size(n)
    mine = np.flatnonzero(Strips(bins_per_side(size), comm.size).owners(rows_of(y, size, precision)) == comm.rank)
    if gpu:
        import cupy

        from sim.mpi import gpu_of
        from sim.mpi.links import gpu_link

        device = gpu_of(comm)
        cupy.cuda.Device(device).use()
        rank = GpuRank(
            comm,
            gpu_link(comm, device),
            x[mine],
            y[mine],
            vx[mine],
            vy[mine],
            mine,
            size,
            steps + more,
            variant,
            precision,
            device=device,
        )
    else:
        rank = GpuRank(
            comm,
            HostLink(comm),
            x[mine],
            y[mine],
            vx[mine],
            vy[mine],
            mine,
            size,
            steps + more,
            variant,
            xp=np,
            kernels=StandIn(),
            timer=StageTimer(),
        )
        if order == "side-first":
            rank.streams = SideFirst(rank.k)
            rank.streams.mark()
    counts, worst = [], 0.0
    before = gather_state(comm, rank, n) if verify else None
    for _ in range(steps):
        rank.step()
        counts.append(int(comm.allreduce(np.array([rank.n], np.int64))[0]))
        if verify:
            after = gather_state(comm, rank, n)
            if comm.is_root:
                from sim.particles import binning_cpu, pipeline_cpu

                cpu = pipeline_cpu.stepped_copy(*before.T, size, binning_cpu.bin_count(size))
                worst = max(worst, step_difference(after, cpu, size))
            before = after
    return gather_state(comm, rank, n), rank, counts, worst


def step_difference(after: np.ndarray, cpu, size: float) -> float:
    """The largest difference of a step's (x, y, vx, vy) rows from the CPU's, at the scale of the box: a
    position's as it is, a velocity's as the same share of the fastest particle's speed as of the box.
    Rounding is relative: close encounters with the kicked particles fling some to speeds of 2000-5000,
    where one fp32 unit in the last place is 2.4e-4-4.9e-4 (above 1e-5 of the box side, 3.2e-5)."""
    position = np.abs(after[:, :2] - np.column_stack([cpu.x, cpu.y])).max()
    velocity = np.abs(after[:, 2:] - np.column_stack([cpu.vx, cpu.vy])).max()
    fastest = max(float(np.hypot(cpu.vx, cpu.vy).max()), 1.0)
    return float(max(position, velocity * size / fastest))


def mpirun(ranks: int, *args, timeout: int = 120, env=None):
    return run([sys.executable, *args], ranks, timeout, env)


# --- tests ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "ranks, variant, order",
    [
        (2, "plain", "-"),
        (4, "plain", "-"),
        (3, "blockscan", "-"),
        (4, "plain", "side-first"),
        (2, "blockscan", "tight"),
    ],
)
def test_calm_run_over_ranks_matches_the_cpu_run(tmp_path, ranks, variant, order):
    out = tmp_path / "state.npy"
    done = mpirun(ranks, __file__, "3000", "60", "5", str(out), "-", variant, order)
    assert done.returncode == 0, done.stderr[-3000:]
    assert np.abs(np.load(out) - serial(3000, 60, 5, {})).max() < 1e-9
    summary = done.stdout.split()
    assert summary[1] == "3000" and int(summary[5]) > 0, done.stdout
    assert int(summary[3]) == 0 and 2 <= int(summary[13]) <= 20, "calm: renumbered every few steps, never slow"
    assert_requeued(summary, order)


def assert_requeued(summary: list[str], order: str) -> None:
    """The place and interior queued before a step's read ran again where the window outgrew the arrays, and
    the interior's missed slots were stepped after it: every step of a tight run (arrays grown by exactly what
    is needed, the queued interior half what it needs), never in the others (arrays with room to spare from
    the start, and the last step's particles and a row more covered)."""
    outgrown, topped = int(summary[9]), int(summary[11])
    if order == "tight":
        assert outgrown > 0 and topped > 0, summary
    else:
        assert outgrown == topped == 0, summary


@pytest.mark.parametrize("ranks, order", [(2, "-"), (3, "-"), (4, "-"), (3, "side-first"), (4, "tight")])
def test_fast_particles_over_ranks_step_like_the_cpu(tmp_path, ranks, order):
    out = tmp_path / "state.npy"
    kicks = "3:300,1111:-260,42:90"
    done = mpirun(ranks, __file__, "3000", "50", "11", str(out), kicks, "plain", order)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.stdout.split()
    assert summary[0] == "counts" and set(summary[1].split(",")) == {"3000"}, "no particle lost or doubled"
    assert int(summary[3]) > 0, "the jumps took the slow way at least once"
    assert int(summary[5]) > 0, "particles crossed between strips the usual way"
    assert float(summary[7]) < 1e-12, "every step is a CPU step from the same state, to rounding"
    assert_requeued(summary, order)


# --- the same on a GPU, with binning.cu (pytest -m gpu) ---------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize(
    "variant, precision", [("plain", "fp64"), ("tiled", "fp64"), ("blockscan", "fp64"), ("plain", "fp32")]
)
def test_gpu_one_rank_steps_like_the_cpu(variant, precision):
    from sim.mpi.comm import Comm

    kicks = {3: 300.0, 700: -250.0}
    _, rank, counts, worst = run_standin(Comm(), 20000, 30, 4, kicks, True, variant, gpu=True, precision=precision)
    assert counts == [20000] * 30
    assert worst < (1e-12 if precision == "fp64" else 1e-5) * 3.17  # the box side: sqrt(0.0005 * 20000)


@pytest.mark.gpu
@pytest.mark.parametrize("variant", ["plain", "tiled"])
def test_gpu_one_rank_calm_steps_like_the_cpu(variant):
    from sim.mpi.comm import Comm

    _, rank, counts, worst = run_standin(Comm(), 20000, 40, 4, {}, True, variant, gpu=True)
    assert counts == [20000] * 40 and worst < 1e-12 * 3.17
    assert 2 <= rank.renumbered_steps <= 15 and rank.everywhere_steps == 0


@pytest.mark.gpu
@pytest.mark.parametrize(
    "variant, ranks, kicks",
    [
        ("plain", 2, "3:300,19000:-260"),
        ("tiled", 2, "3:300,19000:-260"),
        ("blockscan", 2, "3:300,19000:-260"),
        ("plain", 4, "3:300,19000:-260"),
        ("tiled", 4, "3:300,19000:-260"),
        ("plain", 4, "0:0"),  # calm (particle 0 at rest): steps that keep their slots, each checked
        ("tiled", 2, "0:0"),
    ],
)
def test_gpu_ranks_step_like_the_cpu(tmp_path, variant, ranks, kicks):
    import cupy

    # ranks sharing a GPU go through the host (NCCL wants one GPU a rank); 20000 particles: 31 bin rows a rank
    # at 4 ranks, so each has interior rows stepped while its messages travel
    env = {"KERNEL_LAB_TRANSPORT": "host"} if cupy.cuda.runtime.getDeviceCount() < 2 else None
    out = tmp_path / "state.npy"
    done = mpirun(ranks, __file__, "20000", "30", "4", str(out), kicks, variant, "gpu", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.stdout.split()
    assert set(summary[1].split(",")) == {"20000"} and int(summary[5]) > 0
    assert float(summary[7]) < 1e-12 * 3.17
    if kicks == "0:0":
        assert int(summary[3]) == 0 and 2 <= int(summary[13]) <= 12, summary
    else:
        assert int(summary[3]) > 0


@pytest.mark.gpu
@pytest.mark.parametrize("ranks", [1, 2])
def test_gpu_tiled_ranks_step_like_plain(tmp_path, ranks):
    """200000 particles: a bin row holds about 500 slots, more than a block's copy holds whole, so each tiled
    block copies the three runs around its particles, one a bin row, and reads what lies outside from memory
    (the rows at a strip's ends included). The copy only caches what plain reads: the same state, but for the
    order in which the binning's atomics put a bin's particles (the sums' order)."""
    import cupy

    env = {"KERNEL_LAB_TRANSPORT": "host"} if cupy.cuda.runtime.getDeviceCount() < ranks else None
    states = []
    for variant in ("plain", "tiled"):
        out = tmp_path / f"{variant}.npy"
        done = mpirun(ranks, __file__, "200000", "25", "8", str(out), "3:300,150000:-260", variant, "gpu", env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        states.append(np.load(out))
    assert np.isfinite(states[0]).all()
    np.testing.assert_allclose(states[1], states[0], rtol=0, atol=1e-12 * 10.0)  # the box side: sqrt(0.0005 n)


def _main(argv: list[str]) -> int:
    from sim.mpi import world

    n, steps, seed, out = int(argv[0]), int(argv[1]), int(argv[2]), argv[3]
    kicks = (
        {int(a): float(b) for a, b in (k.split(":") for k in argv[4].split(","))} if argv[4:] and argv[4] != "-" else {}
    )
    comm = world()
    variant = argv[5] if len(argv) > 5 else "plain"
    gpu, order = argv[6:7] == ["gpu"], (argv[6] if len(argv) > 6 else "-")
    state, rank, counts, worst = run_standin(comm, n, steps, seed, kicks, bool(kicks), variant, gpu, order=order)
    if variant == "blockscan" and not gpu:  # the report's scan on every renumbering (and the first binning)
        scans = rank.renumbered_steps + rank.everywhere_steps + 1
        assert rank.k.launches["scan_blocks"] == rank.k.launches["add_sums"] == scans, (rank.k.launches, scans)
    if not gpu and not kicks:  # (calm) the steps that kept the slots read by row, the ghosts at their slots
        assert rank.k.launches["step_rows"] > 0, rank.k.launches
    slow = int(comm.allreduce(np.array([rank.everywhere_steps], np.int64), "max")[0])
    crossed = int(comm.allreduce(np.array([rank.migrants], np.int64))[0])
    requeued = comm.allreduce(np.array([rank.outgrown_steps, rank.topped_up_steps], np.int64))
    renumbered = int(comm.allreduce(np.array([rank.renumbered_steps], np.int64), "max")[0])
    if comm.is_root:
        np.save(out, state)
        print(
            f"counts {','.join(map(str, sorted(set(counts))))} slow {slow} crossed {crossed} worst {worst:.3g}"
            f" outgrown {requeued[0]} topped {requeued[1]} renumbered {renumbered}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
