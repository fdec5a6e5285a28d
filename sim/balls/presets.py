"""Initial states for the balls scene: the spec's benchmark lattices, a block drop and a drip.

The presets themselves are data (sim/balls/presets.toml); ``build`` turns one into a state.
Each builder returns (pos, vel) as (n, 4) float32 arrays: pos = x, y, z, radius; vel w unused.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import assets
from sim.balls import world
from sim.gpu.cuda import ceil_div

BLOCK_TIERS = 16  # the block preset widens its trough so that its lattice is about this many tiers


def _float32_run(start: np.float32, step: np.float32, stop: np.float32) -> np.ndarray:
    """start, start + step, ... while < stop, each sum rounded to float32 as the seed's loops did."""
    values = []
    v = start
    while v < stop:
        values.append(v)
        v = np.float32(v + step)
    return np.array(values, np.float32)


def lattice(
    tiers: int,
    radius: float = world.BENCH_RADIUS,
    limit: int | None = None,
    rng: np.random.Generator | None = None,
    trough: world.TroughWalls | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The seed's benchmark lattice, its loops in float32 exactly as the spec gives them.

    dx = dy = 2.1 r, dz = 3 r; z from z_min + dz/2 while < z_max, x from -R + dx/2 while < R,
    y from 0 while < dy * tiers - 0.001 (R = 40, z in [-80, 80] for the seed's trough).
    Initial velocity (U[0,1), 0, 0). ``limit`` keeps the first balls in loop order.
    """
    trough = trough or world.TroughWalls()
    f = np.float32
    r = f(radius)
    dx = dy = f(2.1) * r
    dz = f(3) * r
    zs = _float32_run(f(trough.z_min) + dz / f(2), dz, f(trough.z_max))
    xs = _float32_run(f(-trough.radius) + dx / f(2), dx, f(trough.radius))
    ys = _float32_run(f(0), dy, dy * f(tiers) - f(0.001))
    z, x, y = np.meshgrid(zs, xs, ys, indexing="ij")  # z outermost, y innermost, like the loops
    count = z.size if limit is None else min(limit, z.size)
    pos = np.empty((count, 4), np.float32)
    pos[:, 0] = x.ravel()[:count]
    pos[:, 1] = y.ravel()[:count]
    pos[:, 2] = z.ravel()[:count]
    pos[:, 3] = r
    vel = np.zeros((count, 4), np.float32)
    rng = rng or np.random.default_rng(0)
    vel[:, 0] = rng.random(count, dtype=np.float32)
    return pos, vel


def block_trough(n: int) -> world.TroughWalls:
    """The seed's trough for small blocks; wider (same shape) once n needs over BLOCK_TIERS tiers."""
    per_tier = 1715  # balls per tier in the seed's trough
    scale = max(1.0, float(np.sqrt(n / (BLOCK_TIERS * per_tier))))
    radius = world.TROUGH_RADIUS * scale
    return world.TroughWalls(radius=radius, z_min=world.TROUGH_Z_MIN * scale, z_max=world.TROUGH_Z_MAX * scale)


def block(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, world.TroughWalls]:
    """n balls of the benchmark lattice over a trough wide enough that the drop is not a tower."""
    trough = block_trough(n)
    per_tier = lattice(1, trough=trough)[0].shape[0]
    pos, vel = lattice(ceil_div(n, per_tier), limit=n, rng=rng, trough=trough)
    return pos, vel, trough


class Dripper:
    """Drops new balls from a rectangle above the trough, clear of the balls it dropped recently.

    It predicts where its recent balls are (free fall from their start), so it needs no state
    from the backend: the same dripper feeds the CPU and the GPU. Called between proximity
    passes, so ball indices stay fixed while a pair list is in use.
    """

    height = 30.0
    half_x = 24.0
    half_z = 70.0
    speed = 6.0  # initial downward speed, so a layer clears the emitter quickly
    memory = 1.0  # seconds: by then a ball has fallen far below the emitter

    def __init__(self, radius: float, rng: np.random.Generator):
        self.radius = radius
        self.rng = rng
        self.owed = 0.0  # fractional balls carried to the next call
        self.clock = 0.0
        self.recent = np.empty((0, 3), np.float64)  # x, z, time dropped

    def emit(self, want: int, rate: float, seconds: float, gravity: float) -> np.ndarray:
        """New positions (k, 4), k <= want, for ``seconds`` of dripping at ``rate`` balls/s."""
        self.clock += seconds
        self.recent = self.recent[self.recent[:, 2] > self.clock - self.memory]
        self.owed = min(self.owed + rate * seconds, float(max(want, 0)))
        count = int(self.owed)
        if count <= 0:
            return np.empty((0, 4), np.float32)
        age = self.clock - self.recent[:, 2]
        drop = self.speed * age + 0.5 * gravity * age**2
        taken = np.column_stack([self.recent[:, 0], self.height - drop, self.recent[:, 1]])
        clearance2 = (2.2 * self.radius) ** 2
        out: list[np.ndarray] = []
        for _ in range(4 * count):  # rejection sampling; give up on a crowded emitter
            if len(out) == count:
                break
            p = np.array(
                [self.rng.uniform(-self.half_x, self.half_x), self.height, self.rng.uniform(-self.half_z, self.half_z)]
            )
            if taken.shape[0] == 0 or np.min(np.sum((taken - p) ** 2, axis=1)) >= clearance2:
                taken = np.vstack([taken, p[None]])
                out.append(p)
        self.owed -= len(out)
        new = np.empty((len(out), 4), np.float32)
        if out:
            new[:, :3] = np.array(out)
            new[:, 3] = self.radius
            self.recent = np.vstack(
                [self.recent, np.column_stack([new[:, 0], new[:, 2], np.full(len(out), self.clock)])]
            )
        return new


@dataclass
class Drop:
    """What a preset starts with."""

    pos: np.ndarray
    vel: np.ndarray
    trough: world.TroughWalls
    friction: float
    dripper: Dripper | None  # the drip preset tops the balls up from here


def build(name: str, n: int | None, rng: np.random.Generator) -> Drop:
    """The state of preset ``name`` (sim/balls/presets.toml) with ``n`` balls where it takes a count."""
    table = assets.presets("balls")[name]
    kind, radius = table["build"], float(table["radius"])
    trough = world.TroughWalls()
    dripper = None
    if kind == "lattice":
        pos, vel = lattice(int(table["tiers"]), radius, rng=rng)
    elif kind == "block":
        pos, vel, trough = block(n or int(table["count"]), rng)
    elif kind == "drip":  # starts empty: the dripper fills it
        pos, vel = np.empty((0, 4), np.float32), np.empty((0, 4), np.float32)
        dripper = Dripper(radius, rng)
    else:
        raise ValueError(f"preset {name}: unknown build {kind!r}")
    return Drop(pos, vel, trough, float(table["friction"]), dripper)
