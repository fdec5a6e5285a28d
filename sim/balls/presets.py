"""Initial states for the balls scene: the spec's benchmark lattices, a block drop and a drip.

Each builder returns (pos, vel) as (n, 4) float32 arrays: pos = x, y, z, radius; vel w unused.
"""

from __future__ import annotations

import numpy as np

from sim.balls import world

LATTICE_TIERS = {"T": 1, "t": 5}


def lattice(tiers: int, radius: float = world.BENCH_RADIUS, limit: int | None = None,
            rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The seed's benchmark lattice, loops in float32 exactly as the spec gives them.

    dx = dy = 2.1 r, dz = 3 r; z from -80 + dz/2 while < 80, x from -40 + dx/2 while < 40,
    y from 0 while < dy * tiers - 0.001. Initial velocity (U[0,1), 0, 0). ``limit`` keeps the
    first balls in loop order (for the block preset).
    """
    f = np.float32
    r = f(radius)
    dx = dy = f(2.1) * r
    dz = f(3) * r
    y_end = dy * f(tiers) - f(0.001)
    rows = []
    z = f(-80) + dz / f(2)
    while z < f(80):
        x = f(-40) + dx / f(2)
        while x < f(40):
            y = f(0)
            while y < y_end:
                rows.append((x, y, z))
                y = f(y + dy)
            x = f(x + dx)
        z = f(z + dz)
    xyz = np.array(rows, dtype=np.float32).reshape(-1, 3)
    if limit is not None:
        xyz = xyz[:limit]
    n = xyz.shape[0]
    pos = np.empty((n, 4), np.float32)
    pos[:, :3] = xyz
    pos[:, 3] = r
    vel = np.zeros((n, 4), np.float32)
    rng = rng or np.random.default_rng(0)
    vel[:, 0] = rng.random(n, dtype=np.float32)
    return pos, vel


def block(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n balls of the benchmark lattice, stacked in as many tiers as they need."""
    per_tier = lattice(1)[0].shape[0]
    tiers = -(-n // per_tier)
    return lattice(tiers, limit=n, rng=rng)


class Dripper:
    """Drops new balls from a rectangle above the trough, keeping clear of balls still near it.

    Called between proximity passes, so ball indices stay fixed while a pair list is in use.
    """

    height = 30.0
    half_x = 24.0
    half_z = 70.0
    speed = 6.0  # initial downward speed, so a layer clears the emitter quickly

    def __init__(self, radius: float, rng: np.random.Generator):
        self.radius = radius
        self.rng = rng
        self.owed = 0.0  # fractional balls carried to the next call

    def emit(self, pos: np.ndarray, want: int, rate: float, seconds: float) -> np.ndarray:
        """New positions (k, 4), k <= want, for ``seconds`` of dripping at ``rate`` balls/s."""
        self.owed = min(self.owed + rate * seconds, float(max(want, 0)))
        count = int(self.owed)
        if count <= 0:
            return np.empty((0, 4), np.float32)
        r = self.radius
        clearance = 2.2 * r
        taken = pos[pos[:, 1] > self.height - 2 * clearance, :3]
        out = []
        for _ in range(4 * count):  # rejection sampling; give up on a crowded emitter
            if len(out) == count:
                break
            p = np.array([self.rng.uniform(-self.half_x, self.half_x), self.height,
                          self.rng.uniform(-self.half_z, self.half_z)], np.float32)
            if taken.shape[0] == 0 or np.min(np.sum((taken - p) ** 2, axis=1)) >= clearance**2:
                taken = np.vstack([taken, p[None]])
                out.append(p)
        self.owed -= len(out)
        new = np.empty((len(out), 4), np.float32)
        if out:
            new[:, :3] = np.array(out)
            new[:, 3] = r
        return new
