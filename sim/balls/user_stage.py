"""The balls scene's replaceable stage ``proximity``: a user's kernel finds the proximity pairs of balls
sorted by z_max (``templates/proximity.cu``: the z-sweep, one thread per ball, like the built-in
``global`` kernel), compared with the CPU twin's sweep as sets: each ball's partners, in any order.

The inputs are the balls in the sweep's order (z_max ascending, ``order``: sorted index -> the ball);
the comparison and the scene speak of the balls themselves. In the live scene the user's kernel runs a
pass every step (``BallsScene.user_stage_inputs``) and its lists, as ``pairs`` (in the scene's ball
order), carry that step (``BallsScene.apply_user_stage``).
"""

from __future__ import annotations

import numpy as np

from sim.balls import kernels, proximity_cpu, world
from sim.framework import finite
from sim.framework.user_stages import Values, comparison, one_per_item
from sim.pairs import differing_items, lists_from_pairs, pairs_from_lists
from sim.userkernel.adapter import Arrays, Comparison, Output

CAPACITY = 32  # partners a ball's list holds (the grader's balls have about 3)
NEAR = 0.008  # balls per unit volume in the grader's inputs: about 3 partners a ball
SPEED = 5.0  # the grader's velocities: uniform in (-SPEED, SPEED) per axis


class ProximityStage:
    item = "ball"
    reference = kernels.proximity("global", 128)
    builtin = world.PROXIMITY_VARIANTS[:3]  # the z-sweeps: the grid finds every pair the predicate accepts

    def sizes(self) -> tuple[int, ...]:
        return (1, 127, 129, 1001, 20_000)  # balls: one, around the default block, odd, many

    def default_block(self) -> int:
        return 128

    def inputs(self, size: int, seed: int) -> Arrays:
        """``size`` balls of radius 1 to 2 in a cube, moving up to SPEED along each axis."""
        rng = np.random.default_rng(seed)
        side = (size / NEAR) ** (1 / 3)
        pos = np.empty((size, 4), np.float32)
        pos[:, :3] = rng.uniform(0.0, side, (size, 3))
        pos[:, 3] = rng.uniform(1.0, world.DEFAULT_RADIUS, size)
        vel = np.zeros((size, 4), np.float32)
        vel[:, :3] = rng.uniform(-SPEED, SPEED, (size, 3))
        return arrays(pos, vel)

    def outputs(self, inputs: Arrays) -> dict[str, Output]:
        n = int(inputs["n"])
        return {"count": Output((n,), np.int32, start="zero"), "partners": Output((n * CAPACITY,), np.int32)}

    def expected(self, inputs: Arrays) -> Arrays:
        """The CPU twin's sweep over the sorted balls (already in its order: their indices are sorted ones)."""
        n = int(inputs["n"])
        pairs, _, _ = proximity_cpu.proximity_pass(
            inputs["pos"], inputs["vel"], float(inputs["t"]), float(inputs["margin"])
        )
        count, slots = lists_from_pairs(pairs, n, CAPACITY)
        return {"count": count.astype(np.int32), "partners": slots[:, :CAPACITY].astype(np.int32).ravel()}

    def launch(self, inputs: Arrays, block) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        return one_per_item(inputs["n"], block)

    def args(self, inputs: Arrays, device: dict) -> tuple:
        return (
            device["pos"],
            device["vel"],
            device["z_max"],
            device["z_min"],
            inputs["n"],
            inputs["t"],
            inputs["margin"],
            inputs["k"],
            device["count"],
            device["partners"],
        )

    def compare(self, inputs: Arrays, expected: Arrays, got: Arrays) -> Comparison:
        n, order = int(inputs["n"]), inputs["order"]
        want_count, want = expected["count"], expected["partners"].reshape(n, CAPACITY)
        got_count = np.asarray(got["count"]).astype(np.int64)
        have = np.asarray(got["partners"]).reshape(n, CAPACITY).astype(np.int64)
        listed = np.clip(got_count, 0, CAPACITY)
        written = np.arange(CAPACITY)[None, :] < listed[:, None]
        bad = written & ((have < 0) | (have >= n))  # a slot left poisoned or a partner that is no ball
        have = np.where(bad, np.arange(n)[:, None], have)  # as the ball itself: a partner no list has
        wrong = differing_items(listed, have, want_count, want) | (got_count != want_count)

        def label(s: int) -> str:
            mine, theirs = set(have[s, : listed[s]].tolist()), set(want[s, : want_count[s]].tolist())
            missing = sorted(int(order[b]) for b in theirs - mine)
            extra = sorted(int(order[b]) if b != s else -1 for b in mine - theirs)
            words = [f"missing {_few(missing)}"] if missing else []
            words += [f"extra {_few(extra)}"] if extra else []
            return f"ball {int(order[s])}: " + (", ".join(words) or "a partner listed twice")

        values = Values(want_count, got_count, wrong, order, label, "count")
        return comparison([values], n, "as sets: each ball's partners, in any order")

    def builtin_launch(self, variant: str, inputs: Arrays, block):
        """The built-in sweep's search alone on the same sorted balls and keys, lists of the same capacity,
        its counts zeroed before each launch, untimed, as the user's are: the keys, sort and reorder the
        user's kernel is handed done, and the pass's read-back of its totals, are left out."""
        from sim.balls.gpu import BallsGpu
        from sim.gpu.cuda import KernelError
        from sim.userkernel.timing import Launch, zero

        try:
            balls = BallsGpu(inputs["pos"], inputs["vel"], np.zeros_like(inputs["pos"]), variant, int(block))
        except ValueError as exc:  # a block it is not built for: no column, as for any variant that cannot run
            raise KernelError(str(exc)) from None
        balls.take_sorted(inputs["z_max"], inputs["z_min"], int(inputs["k"]))
        fn, grid, threads, args, shared = balls.prepared_sweep(float(inputs["t"]), float(inputs["margin"]))
        return Launch(lambda: fn(grid, threads, args, shared_mem=shared), zero([balls.count]))

    def model_setup(self, inputs: Arrays, variant: str, block, expected=None):
        """The speed-of-light model's setup (``sim.balls.kernels.models``): one pass over these balls (a pass
        serves STEPS_PER_PASS steps), their partners the CPU twin's (``expected``) when known."""
        from sim.gpu.roofline import Setup

        pairs = int(np.asarray(expected["count"]).sum()) // 2 if expected is not None else 0
        return Setup(int(inputs["n"]), float(world.STEPS_PER_PASS), variant, int(block), stats={"pairs": pairs})


def arrays(pos: np.ndarray, vel: np.ndarray) -> Arrays:
    """The stage's inputs: the balls in the sweep's order, with their keys (the CPU twin's, in float32)."""
    pos, vel = np.ascontiguousarray(pos, np.float32), np.ascontiguousarray(vel, np.float32)
    z_max, z_min = proximity_cpu.compute_keys(pos, vel, world.PAIR_LIFETIME)
    order = proximity_cpu.sort_by_zmax(z_max)
    return {
        "pos": pos[order],
        "vel": vel[order],
        "z_max": z_max[order],
        "z_min": z_min[order],
        "n": np.int32(pos.shape[0]),
        "t": np.float32(world.PAIR_LIFETIME),
        "margin": np.float32(world.PROXIMITY_MARGIN),
        "k": np.int32(CAPACITY),
        "order": order,
    }


def pairs(inputs: Arrays, outputs: Arrays) -> tuple[np.ndarray, np.ndarray, str]:
    """The user's lists as a pair list (each pair once) of the balls the inputs were made from (``order``
    maps the sweep's sorted index back to the ball), the balls whose lists held garbage (a count outside
    0..CAPACITY, a read slot that names no ball: dropped), in the scene's order, and what was dropped."""
    order = inputs["order"]
    raw = np.asarray(outputs["count"])
    count = np.clip(raw, 0, CAPACITY)
    slots = np.asarray(outputs["partners"]).reshape(-1, CAPACITY)
    balls = np.arange(count.shape[0])[:, None]
    named = (slots >= 0) & (slots < count.shape[0])
    slots = np.where(named, slots, balls)  # no ball: a self-pair, dropped
    mine, theirs = pairs_from_lists(count, slots)
    bad_count = count != raw
    bad_slot = ~named & (np.arange(CAPACITY)[None, :] < count[:, None])  # only the slots its count reads
    suspect = np.zeros(count.shape[0], bool)
    suspect[order] = bad_count | bad_slot.any(axis=1)
    return (
        np.column_stack([order[mine], order[theirs]]).astype(np.int64),
        suspect,
        garbage_note(int(bad_count.sum()), int(bad_slot.sum())),
    )


def garbage_note(counts: int, slots: int) -> str:
    """The statistic's text for lists a user's kernel got wrong past repair."""
    parts = [
        f"{counts:,} counts outside 0..{CAPACITY} (clipped)" if counts else "",
        f"{slots:,} partners naming no ball (dropped)" if slots else "",
    ]
    said = ", ".join(p for p in parts if p)
    return f"{said}: those balls marked red" if said else finite.CLEAN


def _few(balls: list[int], most: int = 3) -> str:
    """'12, 40' or '12, 40, 51 and 2 more'; -1 (a slot that named no ball) as 'no ball'."""
    names = ["no ball" if b < 0 else str(b) for b in balls]
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")
