"""Particles over MPI ranks on the CPU: bit-identical to one process for any rank count.

Each multi-rank run is a subprocess under mpiexec (bounded in time); the state is compared bit for bit
(positions and velocities as integers) with the one-process CPU step. This file is also the script
the tests launch: python tests/test_mpi_particles.py N STEPS SEED OUT [KICKS]
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mpi_support import run  # noqa: E402


def mpirun(ranks: int, *args, timeout: int = 180, script: str | None = None):
    return run([sys.executable, script or ROOT / "main.py", *args], ranks, timeout)


def initial(n: int, seed: int, kicks: dict[int, float], vx_divisor: float = 2.0):
    """The 2020 starter's state with particle i kicked to vy = speed, vx = speed / vx_divisor."""
    from sim.particles.init import INITS

    x, y, vx, vy = INITS["2020"](n, seed)
    for i, speed in kicks.items():  # jumps of many bin rows a step: across strips and off the walls
        vy[i], vx[i] = speed, speed / vx_divisor
    return x, y, vx, vy


def serial(n: int, steps: int, seed: int, kicks: dict[int, float], vx_divisor: float = 2.0) -> np.ndarray:
    """x, y, vx, vy after ``steps`` steps of one CPU process from ``initial``."""
    from sim.gpu.timing import NULL_TIMER
    from sim.particles import binning_cpu, pipeline_cpu, world

    p = pipeline_cpu.HostParticles(*initial(n, seed, kicks, vx_divisor))
    size = world.box_size(n)
    for _ in range(steps):
        pipeline_cpu.step(p, size, binning_cpu.bin_count(size), NULL_TIMER)
    return np.column_stack([p.x, p.y, p.vx, p.vy])


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, np.float64).view(np.uint64)


CASES = [
    (1, 1200, 7, ""),
    (2, 2500, 3, "5:120"),
    (3, 2000, 12345, "17:-200,1800:90"),
    (4, 3000, 2**32 - 1, "0:300,2999:-150"),
]


@pytest.mark.parametrize("ranks, n, seed, kicks", CASES)
def test_state_is_bit_identical_to_one_process(tmp_path, ranks, n, seed, kicks):
    out = tmp_path / "state.npy"
    done = mpirun(ranks, "60", str(n), str(seed), str(out), kicks or "-", script=__file__)
    assert done.returncode == 0, done.stderr[-3000:]
    parsed = {int(a): float(b) for a, b in (k.split(":") for k in kicks.split(","))} if kicks else {}
    state = np.load(out)
    assert np.array_equal(bits(state), bits(serial(n, 60, seed, parsed)))
    moved = [int(v) for v in done.stdout.split()[1::2]]
    if ranks > 1:
        assert moved[0] > 0, "particles migrated between strips"


def test_course_command_same_file_and_line_as_one_process(tmp_path):
    one = subprocess.run(
        [
            sys.executable,
            str(ROOT / "main.py"),
            "particles",
            "-n",
            "1500",
            "-s",
            "9",
            "--steps",
            "120",
            "-o",
            str(tmp_path / "one.out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert one.returncode == 0, one.stderr
    three = mpirun(3, "particles", "-n", "1500", "-s", "9", "--steps", "120", "-o", str(tmp_path / "three.out"))
    assert three.returncode == 0, three.stderr
    assert (tmp_path / "one.out").read_bytes() == (tmp_path / "three.out").read_bytes()
    strip = re.compile(r"simulation time = \S+ seconds")
    assert strip.sub("", three.stdout) == strip.sub("", one.stdout), "the same lines, printed once"
    assert "3 ranks on 1 host(s)" in three.stderr


def test_too_many_ranks_for_the_box_is_refused_once():
    done = mpirun(4, "particles", "-n", "2")  # 2 particles: a box of three bin rows
    assert done.returncode == 2
    assert done.stderr.count("fewer than the 4 ranks") == 1, done.stderr


def test_gpu_ranks_with_too_few_rows_each_are_refused_once_before_the_gpu_is_asked():
    """A GPU rank reads two rows of each neighbour: 60 particles make 6 bin rows, enough for 3 GPU ranks, not 4
    (refused the same on a machine without a GPU: the box is checked first)."""
    done = mpirun(4, "particles", "-n", "60", "--backend", "gpu")
    assert done.returncode == 2
    assert done.stderr.count("6 bin rows, fewer than the 4 ranks need (each takes at least 2") == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_unwritable_output_refused_before_any_step(tmp_path):
    done = mpirun(2, "particles", "-n", "500", "-o", str(tmp_path / "missing" / "x.out"))
    assert done.returncode == 2
    assert done.stderr.count("does not exist") == 1, done.stderr


def _main(argv: list[str]) -> int:
    from sim.mpi import world
    from sim.particles import binning_cpu
    from sim.particles import world as box
    from sim.particles.ranks import gather_state
    from sim.particles.ranks_cpu import CpuRank, bin_rows
    from sim.particles.strips import Strips

    steps, n, seed, out = int(argv[0]), int(argv[1]), int(argv[2]), argv[3]
    kicks = {int(a): float(b) for a, b in (k.split(":") for k in argv[4].split(","))} if argv[4] != "-" else {}
    comm = world()
    x, y, vx, vy = initial(n, seed, kicks)
    size = box.box_size(n)
    rows = bin_rows(y, size, binning_cpu.bin_count(size))
    mine = np.flatnonzero(Strips(binning_cpu.bin_count(size), comm.size).owners(rows) == comm.rank)
    rank = CpuRank(comm, x[mine], y[mine], vx[mine], vy[mine], mine, size)
    moved = 0
    for _ in range(steps):
        before = set(rank.ids.tolist())
        rank.step()
        moved += len(set(rank.ids.tolist()) - before)
    state = gather_state(comm, rank, n)
    moved = int(comm.allreduce(np.array([moved], np.int64))[0])
    if comm.is_root:
        np.save(out, state)
        print(f"moved {moved}")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
