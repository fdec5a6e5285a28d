"""The heat scene's replaceable stage: one stencil step (``step``), a drop-in for ``step_global``.

The user's kernel takes ``step_global``'s parameters (``sim/heat/stencil.cu``) and is launched one
thread per cell on a 2D grid; its result is compared bit for bit with the CPU twin
(``sim.heat.stencil_cpu``), as the product's own builds are (``--fmad=false``). A size is a cell
count, laid out as the grid nearest 4:3 with whole rows (``shape``). The built-in variants it is
timed beside run through ``sim.heat.gpu.HeatGpu``.
"""

from __future__ import annotations

import math

import numpy as np

from sim.contract import UserStage
from sim.cuda import ceil_div
from sim.heat import kernels
from sim.userkernel.adapter import Comparison, Output, Worst

STAGE = UserStage(
    name="step",
    summary="one explicit heat step: every interior cell moves towards its four neighbours, the ring held fixed",
    entry="step",
    signature="extern \"C\" __global__ void step(int ni, int nj, long long stride, float tfac, "
              "const float* tin, float* tout)",
    params=(("ni", "cells across (columns), at least 3"), ("nj", "cells down (rows), at least 3"),
            ("stride", "elements from one row to the next (ni: rows are dense)"),
            ("tfac", "diffusion factor, below 0.25"),
            ("tin", "the field now, ni x nj float32, cell (i, j) at j * stride + i"),
            ("tout", "the field after the step: every cell, the boundary ring copied from tin")),
    launch="one thread per cell: block (bx, by), default 32x8; grid (ceil(ni / bx), ceil(nj / by))",
    compare="exact (bit for bit, as the product's --fmad=false builds)",
    template="sim/heat/templates/step.cu",
    adapter="sim.heat.user_stage:StepStage",
)
ASPECT = 4 / 3  # the shape a cell count is laid out as
WORST = 8  # wrong cells listed


def shape(size: int) -> tuple[int, int]:
    """(ni, nj) for ``size`` cells: the whole-row factorisation nearest 4:3 (37 x 29 for 1073); a count with
    none near (a prime) gets the 4:3 grid of about that many cells. ValueError below 3 x 3."""
    if size < 9:
        raise ValueError(f"a heat step needs a grid of at least 3x3 = 9 cells, got {size}")
    pairs = [(size // nj, nj) for nj in range(3, math.isqrt(size) + 1) if size % nj == 0]
    best = min(pairs, key=lambda p: abs(math.log(p[0] / p[1] / ASPECT)), default=None)
    if best is None or not 1 / 4 <= best[0] / best[1] / ASPECT <= 4:
        nj = max(3, round(math.sqrt(size / ASPECT)))
        best = (max(3, size // nj), nj)
    return best


class StepStage:
    """``sim.userkernel.adapter.StageAdapter`` for the heat step."""

    item = "cell"
    reference = kernels.simple(fma=False)
    builtin = ("global", "shared", "temporal")

    def sizes(self) -> tuple[int, ...]:
        # 3x3 (one interior cell), 37x29 (odd both ways), 100x70 (neither a multiple of the 32x8 block), 2000x1500
        return 9, 37 * 29, 100 * 70, 2000 * 1500

    def default_block(self):
        return (32, 8)

    def inputs(self, size: int, seed: int) -> dict:
        ni, nj = shape(size)
        rng = np.random.default_rng(seed)
        return {"tin": rng.uniform(1.0, 100.0, (nj, ni)).astype(np.float32),
                "tfac": np.float32(rng.uniform(0.05, 0.24))}

    def outputs(self, inputs: dict) -> dict[str, Output]:
        return {"tout": Output(inputs["tin"].shape, np.float32)}

    def expected(self, inputs: dict) -> dict:
        from sim.heat.stencil_cpu import HeatCpu

        twin = HeatCpu(inputs["tin"], inputs["tfac"])
        twin.advance(1)
        return {"tout": twin.field}

    def launch(self, inputs: dict, block):
        bx, by = block
        nj, ni = inputs["tin"].shape
        return (ceil_div(ni, bx), ceil_div(nj, by)), (bx, by, 1), 0

    def args(self, inputs: dict, device: dict) -> tuple:
        nj, ni = inputs["tin"].shape
        return (np.int32(ni), np.int32(nj), np.int64(ni), np.float32(inputs["tfac"]), device["tin"], device["tout"])

    def compare(self, inputs: dict, expected: dict, got: dict) -> Comparison:
        return compare_fields(expected["tout"], got["tout"])

    def time_builtin(self, variant: str, inputs: dict, block, repeats: int) -> list[float]:
        """Milliseconds per step of a built-in variant (temporal: a launch of its default k steps, divided)."""
        from sim.heat import DEFAULT_K
        from sim.heat.gpu import HeatGpu

        k = DEFAULT_K if variant == "temporal" else 1
        sim = HeatGpu(inputs["tin"], kernel=variant, block=tuple(block), k=k, tfac=float(inputs["tfac"]))
        sim.time_steps(k)  # the warm-up: compiles, clocks up
        return [sim.time_steps(k) / k for _ in range(repeats)]

    # --- the live scene -----------------------------------------------------------------------------
    def scene_inputs(self, scene) -> dict:
        field = scene.gpu.get() if scene.gpu is not None else scene.cpu.field.copy()
        return {"tin": field, "tfac": np.float32(scene.sim.tfac)}

    def apply(self, scene, outputs: dict, comparison: Comparison | None) -> None:
        scene.take_step(outputs["tout"], comparison)


def compare_fields(expected: np.ndarray, got: np.ndarray) -> Comparison:
    """Bit for bit; the worst cells by absolute difference (a NaN, such as a cell never written, first)."""
    mismatch = (got.view(np.uint32) != expected.view(np.uint32)).reshape(-1)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(got.astype(np.float64) - expected.astype(np.float64)).reshape(-1)
    diff[mismatch & ~np.isfinite(diff)] = np.inf
    diff[~mismatch] = 0.0
    rel = diff / np.maximum(np.abs(expected.astype(np.float64)).reshape(-1), np.finfo(np.float32).tiny)
    ni = expected.shape[1]
    order = np.flatnonzero(mismatch)
    order = order[np.argsort(-diff[order], kind="stable")][:WORST]
    worst = [Worst(int(c), f"cell ({c % ni}, {c // ni})", float(expected.flat[c]), float(got.flat[c])) for c in order]
    return Comparison(mismatch, float(diff.max(initial=0.0)), float(rel.max(initial=0.0)), worst,
                      rule="exact (bit for bit)")
