"""The heat scene's replaceable stage: one stencil step (``step``), a drop-in for ``step_global``.

The user's kernel takes ``step_global``'s parameters (``sim/heat/stencil.cu``) and is launched one
thread per cell on a 2D grid; its result is compared bit for bit with the CPU twin
(``sim.heat.stencil_cpu``), as the product's own builds are (``--fmad=false``). A size is a cell
count, laid out as the grid nearest 4:3 with whole rows (``shape``). The built-in variants it is
timed beside run through ``sim.heat.gpu.HeatGpu``. The live scene hands over its field
(``HeatScene.user_stage_inputs``) and takes the user's field as its next (``HeatScene.apply_user_stage``).
"""

from __future__ import annotations

import math

import numpy as np

from sim.framework.user_stages import Values, comparison
from sim.gpu.cuda import ceil_div
from sim.heat import kernels
from sim.userkernel.adapter import Comparison, Output

ASPECT = 4 / 3  # the shape a cell count is laid out as


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
        return {
            "tin": rng.uniform(1.0, 100.0, (nj, ni)).astype(np.float32),
            "tfac": np.float32(rng.uniform(0.05, 0.24)),
        }

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

    def builtin_launch(self, variant: str, inputs: dict, block):
        """One launch of the variant from ``tin`` into the other buffer, as the user's kernel does (temporal:
        a launch of its default k steps, timed per step: its point is to fuse them)."""
        from sim.heat import DEFAULT_K
        from sim.heat.gpu import HeatGpu
        from sim.userkernel.timing import Launch

        k = DEFAULT_K if variant == "temporal" else 1
        sim = HeatGpu(inputs["tin"], kernel=variant, block=tuple(block), k=k, tfac=float(inputs["tfac"]))
        fn, grid, threads, args, shared = sim.prepared(k)
        return Launch(lambda: fn(grid, threads, args, shared_mem=shared), steps=k)

    def model_setup(self, inputs: dict, variant: str, block, expected=None):
        """The speed-of-light model's setup (``sim.heat.kernels.models``) for one step of ``variant`` on these
        cells: the temporal kernel at its default k, as its built-in column times it."""
        from sim.gpu.roofline import Setup
        from sim.heat import DEFAULT_K

        options = {"k": DEFAULT_K} if variant == "temporal" else {}
        return Setup(int(inputs["tin"].size), 1.0, variant, tuple(block), options)


def compare_fields(expected: np.ndarray, got: np.ndarray) -> Comparison:
    """Bit for bit, cell by cell (``sim.framework.user_stages.comparison``): the worst cells by absolute difference, a
    NaN (such as a cell never written) first."""
    ni = expected.shape[1]
    want, have = expected.reshape(-1), got.reshape(-1)
    wrong = have.view(np.uint32) != want.view(np.uint32)
    return comparison(
        [Values(want, have, wrong, np.arange(want.size), lambda c: f"cell ({c % ni}, {c // ni})", "tout")],
        want.size,
        "exact (bit for bit)",
    )
