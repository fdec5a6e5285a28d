"""kernel-lab over several processes (MPI ranks, one GPU each), on one host or many.

    mpiexec -n 2 python main.py sdh 2000000 500 --backend gpu
    mpiexec -n 4 python main.py particles -n 1000000 -o out.txt
    mpiexec -n 2 python main.py bench particles --sizes 100M --backend gpu --json F

- comm.py      ranks from the launcher's environment; MPI through mpi4py (imported only with > 1 rank)
- links.py     moving arrays: numpy over MPI; CuPy over NCCL, a CUDA-aware MPI, or through the host
- launch.py    every rank runs the command line; rank 0 prints; a failure ends the whole job
- bench.py     strong and weak scaling over 1, 2, 4 ... R ranks in one launch, the scene's own runs
               (its benchmark's ``over_ranks``); tables.py prints them

What each scene splits over ranks lives in its folder: sim/sdh/bands.py (the triangle of pairs in bands
balanced by pair count), sim/particles/ranks*.py and strips.py (strips of bin rows, ghosts, migration).

Nothing here imports mpi4py or CuPy at module level.
"""

from sim.mpi.comm import Comm, launched_size, world
from sim.mpi.launch import begin, check_interrupts, end, ranks


def gpu_of(comm: Comm) -> int:
    """The CUDA device of this rank: its rank among the ranks of its host, modulo the host's GPUs."""
    import cupy

    return comm.local_rank % max(1, cupy.cuda.runtime.getDeviceCount())


__all__ = ["Comm", "begin", "check_interrupts", "end", "gpu_of", "launched_size", "ranks", "world"]
