"""The balls' pipeline on the CPU (numpy + numba): the same stages as the GPU's.

The state is (n, 4) float32 arrays pos (x, y, z, radius), vel, omega (spin), with force and
torque scratch, and the pair list of the last proximity pass ((m, 2) ball indices).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.balls import contact_cpu, grid_cpu, proximity_cpu, world


@dataclass
class HostBalls:
    """The state on the host. float32 contiguous arrays are taken as they are, not copied (10M balls),
    and ``step`` changes them in place: a caller that keeps its arrays must pass copies. ``ids``: each
    ball's id, which stays with it when balls before it are dropped (default: its index)."""

    pos: np.ndarray
    vel: np.ndarray
    omega: np.ndarray
    ids: np.ndarray = None  # type: ignore[assignment]  # None: each ball's index (__post_init__)
    force: np.ndarray = field(init=False)
    torque: np.ndarray = field(init=False)
    pairs: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.pos = np.ascontiguousarray(self.pos, np.float32)
        self.vel = np.ascontiguousarray(self.vel, np.float32)
        self.omega = np.ascontiguousarray(self.omega, np.float32)
        self.ids = np.arange(self.n, dtype=np.int64) if self.ids is None else np.asarray(self.ids, np.int64)
        self.force = np.zeros_like(self.pos)
        self.torque = np.zeros_like(self.pos)
        self.pairs = np.empty((0, 2), np.int64)

    @property
    def n(self) -> int:
        return self.pos.shape[0]

    def kept(self, keep: np.ndarray) -> HostBalls:
        return HostBalls(self.pos[keep], self.vel[keep], self.omega[keep], self.ids[keep])

    def appended(self, pos: np.ndarray, vel: np.ndarray, ids: np.ndarray) -> HostBalls:
        return HostBalls(
            np.concatenate([self.pos, pos]),
            np.concatenate([self.vel, vel]),
            np.concatenate([self.omega, np.zeros_like(pos)]),
            np.concatenate([self.ids, ids]),
        )


def proximity(pos: np.ndarray, vel: np.ndarray, variant: str, timer=None):
    """The CPU twin of ``variant``'s pass: (pairs (m, 2), tests, pairs found). The grid's twin is the
    CPU grid; the z-sweep kernels' twin is the CPU z-sweep."""
    if variant == "grid":
        if timer is None:
            return grid_cpu.grid_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN)
        with timer.stage("proximity"):
            return grid_cpu.grid_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN)
    return proximity_cpu.proximity_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN, timer)


def step(balls: HostBalls, settings: world.BallSettings, trough: world.TroughWalls, dt: float) -> None:
    """Contact forces over the pair list and the trough, then semi-implicit Euler, in float32 as on the GPU."""
    density, w0, zeta, mu, mu_roll, gravity, dt32, radius, z_min, z_max = world.contact_args(
        settings, trough, settings.zeta(), dt
    )
    state = (balls.pos, balls.vel, balls.omega)
    contact_cpu.pair_forces(*state, balls.pairs, balls.force, balls.torque, density, w0, zeta, mu, mu_roll)
    contact_cpu.trough_forces(*state, balls.force, balls.torque, density, w0, zeta, mu, mu_roll, radius, z_min, z_max)
    contact_cpu.integrate(*state, balls.force, balls.torque, density, gravity, dt32)
