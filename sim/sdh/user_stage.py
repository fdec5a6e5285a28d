"""The sdh scene's replaceable stage ``histogram``: a user's kernel counts every pair of atoms into its
distance bucket (``templates/histogram.cu``), compared bucket for bucket with the exact CPU histogram.

The kernel's signature is the built-in ``naive`` kernel's (sdh.cu), so it is a drop-in: the same
arguments, one thread per atom, the counts zeroed before each launch. The live scene hands its atoms
over as ``arrays`` lays them out (``HistogramScene.user_stage_inputs``) and takes the counts back.
"""

from __future__ import annotations

import numpy as np

from sim.framework.user_stages import Values, comparison, exact_wrong, one_per_item
from sim.sdh import data, kernels, sdh_cpu
from sim.userkernel.adapter import Arrays, Comparison, Output

WIDTH = 500.0  # the course preset's bucket width: 80 buckets in the course's cube


class HistogramStage:
    item = "bin"
    reference = kernels.histogram("naive", 256, False)
    builtin = ("naive", "naive-priv", "tiled", "tiled-priv", "fast", "tensor")

    def sizes(self) -> tuple[int, ...]:
        return (1, 2, 255, 257, 1001, 20_000)  # atoms: no pair, one pair, around a block, odd, large

    def default_block(self) -> int:
        return 256

    def inputs(self, size: int, seed: int) -> Arrays:
        points = np.random.default_rng(seed).uniform(0.0, data.BOX_SIZE, (size, 3))
        return arrays(points, WIDTH, data.bucket_count(WIDTH))

    def outputs(self, inputs: Arrays) -> dict[str, Output]:
        return {"hist": Output((int(inputs["nb"]),), np.uint64, start="zero")}

    def expected(self, inputs: Arrays) -> Arrays:
        points = np.stack([inputs["x"], inputs["y"], inputs["z"]], axis=1)
        counts = sdh_cpu.histogram(points, float(inputs["w"]), int(inputs["nb"]))
        return {"hist": counts.astype(np.uint64)}

    def launch(self, inputs: Arrays, block) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        return one_per_item(inputs["n"], block)

    def args(self, inputs: Arrays, device: dict) -> tuple:
        return (device["x"], device["y"], device["z"], inputs["n"], inputs["w"], inputs["nb"], device["hist"])

    def compare(self, inputs: Arrays, expected: Arrays, got: Arrays) -> Comparison:
        want, have = expected["hist"], np.asarray(got["hist"])
        bins = np.arange(want.shape[0])
        values = Values(want, have, exact_wrong(want, have), bins, lambda k: f"bin {k}", "hist")
        return comparison([values], want.shape[0], "exact")

    def builtin_launch(self, variant: str, inputs: Arrays, block):
        """The product's own launch of ``variant`` (``sim.sdh.gpu.launcher``) on these atoms, its counts zeroed
        before each, untimed, as the user's are. The fast and tensor kernels' converted copies of the atoms
        (float32 in bucket units, squared norms) are made once beforehand, as the product makes them."""
        from sim.sdh import gpu
        from sim.userkernel.timing import Launch, zero

        points = np.stack([inputs["x"], inputs["y"], inputs["z"]], axis=1)
        run, hist, _ = gpu.launcher(points, float(inputs["w"]), int(inputs["nb"]), variant, int(block))
        return Launch(run, zero([hist]))

    def model_setup(self, inputs: Arrays, variant: str, block, expected=None):
        """The speed-of-light model's setup (``sim.sdh.kernels.models``): one histogram of these atoms."""
        from sim.gpu.roofline import Setup

        return Setup(int(inputs["n"]), 1.0, variant, int(block), stats={"buckets": int(inputs["nb"])})


def arrays(points: np.ndarray, width: float, buckets: int) -> Arrays:
    """The stage's inputs for ``points`` (n, 3) counted in ``buckets`` buckets of ``width``."""
    p = np.asarray(points, np.float64)
    return {
        "x": np.ascontiguousarray(p[:, 0]),
        "y": np.ascontiguousarray(p[:, 1]),
        "z": np.ascontiguousarray(p[:, 2]),
        "n": np.int64(p.shape[0]),
        "w": np.float64(width),
        "nb": np.int32(buckets),
    }
