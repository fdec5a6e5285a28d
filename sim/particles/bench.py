"""The particles scene's benchmark: the timed frames, and over MPI ranks the strong and weak scaling tables
(``ranks_bench``). Declared here, light: every command line's look-ahead parser reads each scene's benchmark
options, and the rank code (numba, the ranks' kernels) loads only when ranks run."""

from __future__ import annotations

import dataclasses

from sim.cmdline import timed_frames
from sim.cmdline.requests import BenchRequest
from sim.contract import SceneSpec


def scaling(request: BenchRequest, spec: SceneSpec) -> int:
    """``mpiexec -n R python main.py bench particles ...``: sim.particles.ranks_bench.scaling."""
    from sim.particles import ranks_bench

    return ranks_bench.scaling(request, spec)


BENCH = dataclasses.replace(timed_frames.BENCH, over_ranks=scaling)
