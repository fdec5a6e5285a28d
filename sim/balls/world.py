"""The balls world: constants fixed by the spec and the contact parameters the panel can change.

Contact model (DEM, history-free so that a pair list rebuilt every six steps is enough):
- Normal: linear spring-dashpot with a fixed contact frequency. For a contact of effective mass
  m_eff, F_n = m_eff * (w0^2 * overlap - 2 * zeta * w0 * v_n), never attractive. Every contact then
  lasts pi / w0 seconds whatever the ball sizes, so one dt suits every pair; zeta follows from the
  coefficient of restitution e: zeta = -ln e / sqrt(pi^2 + ln^2 e).
- Tangential: viscous sliding friction capped by Coulomb: |F_t| = min(mu * F_n, m_eff * w0 * |v_t|),
  opposing the sliding velocity of the contact point (spin included). The viscous cap lets resting
  contacts stick without a tangential spring history.
- Rolling resistance: a torque opposing relative spin, |tau| = min(mu_r * r_eff * F_n, I_eff * w0 * |w_rel|).
- Semi-implicit Euler at dt = 1/360 s: v += dt * a, x += dt * v (new v), w += dt * alpha.
With the default w0 = 100 rad/s, w0 * dt = 0.28 (stable and accurate), a contact lasts 31 ms
(11 steps), and a ball under five others sinks by 5 g / w0^2 ~ 0.005 units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

GRAVITY = 9.8  # along -y
DENSITY = 0.00746  # mass per unit volume
DT = 1.0 / 360.0
STEPS_PER_PASS = 6  # a pair list serves this many steps
PAIR_LIFETIME = STEPS_PER_PASS * DT  # T in the proximity predicate
PROXIMITY_MARGIN = 1.1

TROUGH_RADIUS = 40.0
TROUGH_Z_MIN = -80.0
TROUGH_Z_MAX = 80.0

PROXIMITY_VARIANTS = ("global", "texture", "shared", "grid")  # GPU kernels; the CPU twin of the first
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)  # three is the z-sweep, of grid the grid

DEFAULT_RADIUS = 2.0
BENCH_RADIUS = 1.08
DEFAULT_FRICTION = 0.1


@dataclass(frozen=True)
class TroughWalls:
    """What the balls collide with (the view draws it as ``sim.contract.Trough``): the lower half of a
    cylinder along z, axis at y = 0: rim at y = 0, bottom at y = -radius."""

    radius: float = TROUGH_RADIUS
    z_min: float = TROUGH_Z_MIN
    z_max: float = TROUGH_Z_MAX

    @property
    def fallen_y(self) -> float:
        """Below the bottom: a ball this low has left the platform for good and is removed."""
        return -self.radius - 20.0


@dataclass
class BallSettings:
    """What the panel's sliders change. Read by every step, so changes act at once."""

    gravity: float = GRAVITY
    friction: float = DEFAULT_FRICTION
    restitution: float = 0.3
    contact_freq: float = 100.0  # w0, rad/s
    rolling: float = 0.02  # mu_r
    drip_rate: float = 400.0  # balls per second (drip preset)

    def zeta(self) -> float:
        e = min(max(self.restitution, 1e-3), 0.999)
        le = math.log(e)
        return -le / math.sqrt(math.pi**2 + le * le)


def contact_args(settings: BallSettings, trough, zeta: float, dt: float) -> tuple:
    """The contact model's parameters in float32, as both steps take them (struct Contact of contact.cuh, in
    order: density, w0, zeta, mu, mu_roll, gravity, dt, trough radius, z_min, z_max)."""
    values = (DENSITY, settings.contact_freq, zeta, settings.friction, settings.rolling, settings.gravity, dt)
    return tuple(np.float32(v) for v in (*values, trough.radius, trough.z_min, trough.z_max))


def ball_mass(radius):
    return DENSITY * (4.0 / 3.0) * math.pi * radius**3
