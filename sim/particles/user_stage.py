"""The particles scene's replaceable stage ``forces``: a user's kernel computes every particle's
acceleration from the particles binned by the CPU twin's counting sort (``templates/forces.cu``: one
thread per particle over its 9 neighbour bins), compared with the CPU twin's forces within what the
scene's verifier allows after a step.

The built-in kernels fuse the forces with the move and the next binning, so the stage is the force
loop alone, on the CPU twin's bins (``arrays``); the move stays the scene's (``binning_cpu.move`` in
``ParticlesScene.apply_user_stage``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sim.framework import finite
from sim.framework.user_stages import Values, comparison, one_per_item
from sim.particles import binning_cpu, kernels, world
from sim.userkernel.adapter import Arrays, Comparison, Output

STEP_TOLERANCE = 1e-12  # of the box side: the scene's fp64 verifier after a step (ParticlesScene._verify)


def tolerance(size: float) -> float:
    """The largest acceleration error a step can carry within the verifier's tolerance: a step moves a
    particle by a * dt^2."""
    return STEP_TOLERANCE * size / world.DT**2


# The largest acceleration one neighbour can give: the course's force at the closest distance it allows.
PAIR_MAX = (world.CUTOFF / world.MIN_R - 1) / (world.MIN_R * world.MASS)


def usable(a: np.ndarray) -> np.ndarray:
    """Accelerations the move can take: numbers no larger than every other particle at the closest
    distance could give (a user's NaN or inf would leave the box for good, and 1e300 reflects off its
    walls forever)."""
    with np.errstate(invalid="ignore"):
        return np.abs(a) <= PAIR_MAX * max(a.shape[0] - 1, 1)


def refused_note(ax: np.ndarray, ay: np.ndarray, refused: np.ndarray) -> str:
    """The statistic's text for the accelerations ``usable`` refused."""
    count = int(np.count_nonzero(refused))
    if not count:
        return finite.CLEAN
    what = finite.counts_text(*(sum(pair) for pair in zip(finite.counts(ax), finite.counts(ay), strict=True)))
    why = what or "beyond any force the course allows"
    return f"{count:,} particles' forces refused ({why}): they coast, marked red"


class ForcesStage:
    item = "particle"
    reference = kernels.step("plain", "fp64", kernels.DEFAULT_BLOCK, False)
    builtin = kernels.VARIANTS

    def sizes(self) -> tuple[int, ...]:
        return (1, 127, 129, 1001, 20_000)  # particles: one, around the default block, odd, many

    def default_block(self) -> int:
        return kernels.DEFAULT_BLOCK

    def inputs(self, size: int, seed: int) -> Arrays:
        """``size`` particles uniform in the course's box for that count (about 0.6 neighbours each)."""
        side = world.box_size(size)
        x, y = np.random.default_rng(seed).uniform(0.0, side, (2, size))
        return arrays(x, y, side)

    def outputs(self, inputs: Arrays) -> dict[str, Output]:
        n = int(inputs["n"])
        return {"ax": Output((n,), np.float64), "ay": Output((n,), np.float64)}

    def expected(self, inputs: Arrays) -> Arrays:
        n = int(inputs["n"])
        ax, ay = np.empty(n), np.empty(n)
        bins, start, members = (inputs[k].astype(np.int64) for k in ("bin", "start", "members"))  # the twin's types
        binning_cpu.forces(
            inputs["x"],
            inputs["y"],
            ax,
            ay,
            int(inputs["nb"]),
            bins,
            start,
            members,
            np.empty(n),
            np.empty(n),
            np.empty(n, np.int64),
        )
        return {"ax": ax, "ay": ay}

    def launch(self, inputs: Arrays, block) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        return one_per_item(inputs["n"], block)

    def args(self, inputs: Arrays, device: dict) -> tuple:
        return (
            device["x"],
            device["y"],
            device["bin"],
            device["start"],
            device["members"],
            inputs["n"],
            inputs["nb"],
            device["ax"],
            device["ay"],
        )

    def compare(self, inputs: Arrays, expected: Arrays, got: Arrays) -> Comparison:
        n, atol = int(inputs["n"]), tolerance(float(inputs["size"]))
        values = []
        for name, axis in (("ax", "x"), ("ay", "y")):
            want, have = expected[name], np.asarray(got[name])
            with np.errstate(invalid="ignore"):
                wrong = ~(np.abs(have - want) <= atol)  # NaN: wrong
            values.append(Values(want, have, wrong, np.arange(n), _particle_label(axis), name))
        return comparison(values, n, f"|difference| <= {atol:.3g} (moves a particle 1e-12 of the box in a step)")

    def builtin_launch(self, variant: str, inputs: Arrays, block):
        """The built-in step kernel alone, from the same positions at rest, binned beforehand as the user's
        are: its kernel fuses the forces with the move, so this is the nearest launch to the stage (the
        binning, which comes about every ten steps, is left out). One step is taken first, through
        the index, so that the rows are in bin order and the timed launches read by row, as most steps do."""
        from sim.gpu.timing import NULL_TIMER
        from sim.particles.gpu import ParticlesGpu
        from sim.userkernel.timing import Launch

        n = int(inputs["n"])
        gpu = ParticlesGpu(
            inputs["x"],
            inputs["y"],
            np.zeros(n),
            np.zeros(n),
            float(inputs["size"]),
            variant,
            "fp64",
            int(block),
            stats=False,
        )
        gpu.step(NULL_TIMER)
        fn, grid, threads, args = gpu.prepared_step()
        return Launch(lambda: fn(grid, threads, args))

    def model_setup(self, inputs: Arrays, variant: str, block, expected=None):
        """The speed-of-light model's setup (``sim.particles.kernels.models``): one step of these particles."""
        from sim.gpu.roofline import Setup

        return Setup(int(inputs["n"]), 1.0, variant, int(block), {"precision": "fp64"})


def arrays(x: np.ndarray, y: np.ndarray, side: float) -> Arrays:
    """The stage's inputs for particles at (x, y) in a box of ``side``: binned by the CPU twin's counting sort."""
    x, y = np.ascontiguousarray(x, np.float64), np.ascontiguousarray(y, np.float64)
    nb = binning_cpu.bin_count(side)
    bins, start, members = binning_cpu.sort_into_bins(x, y, side, nb)
    return {
        "x": x,
        "y": y,
        "bin": bins.astype(np.int32),
        "start": start.astype(np.int32),
        "members": members.astype(np.int32),
        "n": np.int32(x.shape[0]),
        "nb": np.int32(nb),
        "size": np.float64(side),
    }


def _particle_label(axis: str) -> Callable[[int], str]:
    """Value k's label: the particle and the axis."""
    return lambda k: f"particle {k} ({axis})"
