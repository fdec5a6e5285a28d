"""The particles scene's benchmark: the timed frames and the figures its record adds (``ParticleFigures``), and
over MPI ranks the strong and weak scaling tables (``ranks_bench``). Declared here, light: every command line's
look-ahead parser reads each scene's benchmark options, and the rank code (numba, the ranks' kernels) loads only
when ranks run."""

from __future__ import annotations

import dataclasses

from sim.cmdline import timed_frames
from sim.cmdline.requests import BenchRequest
from sim.contract import SceneSpec
from sim.framework.scene_bench import BenchFigures

FERMI_SECONDS = {5000: 0.168, 1_280_000: 23.05, 5_120_000: 93.10}  # the report's GPU, whole run, 1000 steps


def scaling(request: BenchRequest, spec: SceneSpec) -> int:
    """``mpiexec -n R python main.py bench particles ...``: sim.particles.ranks_bench.scaling."""
    from sim.particles import ranks_bench

    return ranks_bench.scaling(request, spec)


BENCH = dataclasses.replace(timed_frames.BENCH, over_ranks=scaling)


class ParticleFigures(BenchFigures):
    """The CS 267 report's Fermi GPU time for this size (1000 steps), where it gave one, and whether the timed
    frames were replayed as CUDA graphs (the "graph" toggle)."""

    def figures(self, wall_s: float) -> dict:
        scene = self.scene
        graph = scene.gpu is not None and scene.controls.toggles["graph"]
        return {"fermi_s": FERMI_SECONDS.get(scene.n), "cuda_graph": graph}

    @staticmethod
    def lines(record: dict) -> list[str]:
        fermi = record.get("fermi_s")
        lines = ["each frame's ten steps replayed as one CUDA graph"] if record.get("cuda_graph") else []
        return lines + ([f"the CS 267 report's Fermi GPU: {fermi:.2f} s for 1000 steps"] if fermi else [])
