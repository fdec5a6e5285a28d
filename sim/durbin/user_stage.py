"""The durbin scene's replaceable stage ``batched``: a user's kernel solves many independent systems
(``templates/batched.cu``: one thread per system), compared bit for bit with the CPU twin's batched
solve (``durbin_cpu.batched``: C summation order; the built-in thread and register kernels match it
exactly).

The kernel's signature is durbin.cu's ``batched`` (PolyBench 4.x), so it is a drop-in. In the viewer it
solves the lpc preset's frames (a frame's system is one item: a wrong coefficient marks its frame), handed
over as ``arrays`` lays them out (``DurbinScene.user_stage_inputs``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sim.durbin import durbin_cpu, inputs, kernels
from sim.framework.user_stages import Values, comparison, exact_wrong, one_per_item
from sim.userkernel.adapter import Arrays, Comparison, Output

ORDER = 24  # the grader's systems: an LPC-like order (10 to 50), within the register kernel's 32
KAPPA_BOUND = 0.7  # reflection coefficients in (-0.7, 0.7): well-conditioned systems


class BatchedStage:
    item = "system"
    reference = kernels.batched("thread")
    builtin = tuple(kernels.GROUPS)

    def sizes(self) -> tuple[int, ...]:
        return (1, 63, 65, 1001, 20_000)  # systems: one, around the default block, odd, many

    def default_block(self) -> int:
        return 64

    def inputs(self, size: int, seed: int) -> Arrays:
        """``size`` AR(ORDER) autocorrelations from random reflection coefficients: every alpha and every
        entry of y is non-zero."""
        rng = np.random.default_rng(seed)
        r = (
            np.stack([inputs.ar_autocorr(ORDER, inputs.random_kappas(rng, ORDER, KAPPA_BOUND)) for _ in range(size)])
            if size
            else np.zeros((0, ORDER))
        )
        return arrays(r)

    def outputs(self, inputs: Arrays) -> dict[str, Output]:
        shape = inputs["r"].shape
        return {
            "y": Output(shape, np.float64),
            "alphas": Output(shape, np.float64),
            "betas": Output((shape[0],), np.float64),
        }

    def expected(self, inputs: Arrays) -> Arrays:
        y, alphas, betas = durbin_cpu.batched(inputs["r"])
        return {"y": y, "alphas": alphas, "betas": betas}

    def launch(self, inputs: Arrays, block) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        return one_per_item(inputs["systems"], block)

    def args(self, inputs: Arrays, device: dict) -> tuple:
        return (device["r"], device["y"], device["alphas"], device["betas"], inputs["systems"], inputs["order"])

    def compare(self, inputs: Arrays, expected: Arrays, got: Arrays) -> Comparison:
        systems, order = inputs["r"].shape
        every = np.arange(systems * order)
        labels = {"y": "coefficient", "alphas": "alpha"}
        values = [
            Values(
                expected[name].ravel(),
                np.asarray(got[name]).ravel(),
                exact_wrong(expected[name], np.asarray(got[name])).ravel(),
                every // order,
                _coefficient_label(what, order),
                name,
            )
            for name, what in labels.items()
        ]
        values.append(
            Values(
                expected["betas"],
                np.asarray(got["betas"]),
                exact_wrong(expected["betas"], np.asarray(got["betas"])),
                np.arange(systems),
                lambda k: f"system {k} beta",
                "betas",
            )
        )
        return comparison(values, systems, "exact (bit for bit)")

    def builtin_launch(self, variant: str, inputs: Arrays, block):
        """Each built-in group at its own default block (the lpc preset's choice): a group's block means
        something else (a warp per system, a block per system). The product's own launch
        (``sim.durbin.batched_gpu.batched_launch``), prepared once, into the same outputs every time."""
        from sim.durbin import batched_gpu
        from sim.userkernel.timing import Launch

        run, _ = batched_gpu.batched_launch(inputs["r"], variant)
        return Launch(run)

    def model_setup(self, inputs: Arrays, variant: str, block, expected=None):
        """The speed-of-light model's setup (``sim.durbin.kernels.models``): the lpc preset's solve of these
        systems, one a frame."""
        from sim.gpu.roofline import Setup

        systems, order = inputs["r"].shape
        return Setup(systems * order, 1.0, variant, block, {"precision": "fp64"}, "lpc", {"frames": systems})


def arrays(r: np.ndarray) -> Arrays:
    """The stage's inputs for the right-hand sides ``r``, one system a row."""
    r = np.ascontiguousarray(r, np.float64)
    return {"r": r, "systems": np.int32(r.shape[0]), "order": np.int32(r.shape[1])}


def _coefficient_label(what: str, order: int) -> Callable[[int], str]:
    """Value k's label: its system and its index there."""
    return lambda k: f"system {k // order} {what} {k % order}"
