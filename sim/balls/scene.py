"""The falling-balls scene: state, presets and the step as named stages.

One physics step is: (every 6th step) proximity pass = remove fallen balls, drip new ones,
keys + sort ("sort"), z-window sweep ("proximity"); then contact forces ("forces") and
semi-implicit Euler ("integrate"). Balls are only removed or added at a pass, so the pair
list's indices stay valid for the six steps it serves.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from sim.backend import BackendUnavailable, choose_backend
from sim.balls import contact_cpu, presets, proximity_cpu, world
from sim.colormap import colormap
from sim.scene import Param, Scene


class BallsScene(Scene):
    name = "balls"
    presets = {
        "drip": "balls dripping onto the trough (radius 2), topped up to the ball count",
        "T": "benchmark: one tier of 1715 balls (r 1.08, friction 2.0) dropped on the trough",
        "t": "benchmark: five tiers, 8575 balls (r 1.08, friction 2.0)",
        "block": "benchmark lattice stacked in tiers up to the ball count",
    }
    color_modes = {
        "speed": "Speed",
        "height": "Height",
        "pairs": "Proximity pairs per ball",
        "uniform": "Uniform",
    }
    stages = ("sort", "proximity", "forces", "integrate")
    steps_per_frame = world.STEPS_PER_PASS
    dt = world.DT
    supported_backends = ("cpu",)
    count_range = (1, 200_000)
    default_counts = {"drip": 4000, "block": 10_000}
    _common_params = (
        Param("gravity", "gravity", 0.0, 30.0, "%.2f", help="acceleration along -y"),
        Param("friction", "friction mu", 0.0, 3.0, "%.2f", help="Coulomb coefficient, balls and trough"),
        Param("restitution", "restitution", 0.05, 0.95, "%.2f", help="normal coefficient of restitution"),
        Param("contact_freq", "stiffness w0", 30.0, 180.0, "%.0f rad/s",
              help="contact frequency: a contact lasts pi/w0 s; stable while w0*dt < 0.5"),
        Param("rolling", "rolling resistance", 0.0, 0.2, "%.3f", help="mu_r: torque against relative spin"),
    )
    _drip_param = Param("drip_rate", "drip rate", 10.0, 5000.0, "%.0f balls/s", log=True)

    def __init__(self, preset: str = "drip", backend: str = "cpu", n: int | None = None,
                 seed: int | None = None):
        super().__init__()
        self.backend, self.backend_note = choose_backend(backend, self.supported_backends)
        self.seed = 0 if seed is None else int(seed)
        self.trough = world.Trough()
        self.settings = world.BallSettings()
        self.pass_log: deque[tuple[int, int]] = deque(maxlen=100_000)
        self.load_preset(preset, n)

    # --- presets ----------------------------------------------------------------------
    @property
    def takes_count(self) -> bool:
        return self.preset in self.default_counts

    @property
    def params(self) -> tuple[Param, ...]:
        return self._common_params + ((self._drip_param,) if self.preset == "drip" else ())

    def load_preset(self, name: str, n: int | None = None) -> None:
        if name not in self.presets:
            raise ValueError(f"unknown preset {name!r} for balls (choose from {', '.join(self.presets)})")
        if n is not None and not (self.count_range[0] <= n <= self.count_range[1]):
            raise ValueError(f"ball count {n} out of range {self.count_range[0]}..{self.count_range[1]}")
        rng = np.random.default_rng(self.seed)
        if name in presets.LATTICE_TIERS:
            pos, vel = presets.lattice(presets.LATTICE_TIERS[name], rng=rng)
            target = pos.shape[0]
        elif name == "block":
            target = n or self.default_counts[name]
            pos, vel = presets.block(target, rng)
        else:  # drip: starts empty, the dripper fills it
            target = n or self.default_counts[name]
            pos, vel = np.empty((0, 4), np.float32), np.empty((0, 4), np.float32)
        self.dripper = presets.Dripper(world.DEFAULT_RADIUS, rng) if name == "drip" else None
        bench = name != "drip"
        self.settings.friction = world.BENCH_FRICTION if bench else world.DEFAULT_FRICTION
        self.preset, self.target_n = name, target
        self._set_state(pos, vel)
        self.steps = 0
        self.pass_log.clear()
        self.timer.clear()

    def reset(self) -> None:
        self.load_preset(self.preset, self.target_n if self.takes_count else None)

    def set_backend(self, backend: str) -> None:
        if backend not in self.supported_backends:
            _, why = choose_backend("auto", self.supported_backends)
            raise BackendUnavailable(f"{backend} backend unavailable: {why or 'not supported'}")
        self.backend = backend

    def set_state(self, pos: np.ndarray, vel: np.ndarray) -> None:
        """Replace the balls: pos (n, 4) x, y, z, radius; vel (n, 4) vx, vy, vz, unused. Spins start at 0."""
        pos = np.asarray(pos, np.float32)
        vel = np.asarray(vel, np.float32)
        if pos.ndim != 2 or pos.shape[1] != 4 or vel.shape != pos.shape:
            raise ValueError(f"positions and velocities must both be (n, 4); got {pos.shape} and {vel.shape}")
        if not (np.isfinite(pos).all() and np.isfinite(vel).all()) or (pos[:, 3] <= 0).any():
            raise ValueError("ball state must be finite with positive radii")
        self._set_state(pos, vel)
        self.steps = 0
        self.pass_log.clear()

    def _set_state(self, pos: np.ndarray, vel: np.ndarray) -> None:
        n = pos.shape[0]
        self.pos = np.ascontiguousarray(pos, np.float32)
        self.vel = np.ascontiguousarray(vel, np.float32)
        self.omega = np.zeros((n, 4), np.float32)
        self.force = np.zeros((n, 4), np.float32)
        self.torque = np.zeros((n, 4), np.float32)
        self.pairs = np.empty((0, 2), np.int64)
        self.last_tests = self.last_pairs = 0

    # --- stepping ---------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.pos.shape[0]

    def step(self) -> None:
        if self.steps % world.STEPS_PER_PASS == 0:
            self._between_passes()
            self.pairs, self.last_tests, self.last_pairs = proximity_cpu.proximity_pass(
                self.pos, self.vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN, self.timer)
            self.pass_log.append((self.last_tests, self.last_pairs))
        s = self.settings
        zeta = s.zeta()
        with self.timer.stage("forces"):
            contact_cpu.pair_forces(self.pos, self.vel, self.omega, self.pairs, self.force, self.torque,
                                    world.DENSITY, s.contact_freq, zeta, s.friction, s.rolling)
            t = self.trough
            contact_cpu.trough_forces(self.pos, self.vel, self.omega, self.force, self.torque,
                                      world.DENSITY, s.contact_freq, zeta, s.friction, s.rolling,
                                      t.radius, t.z_min, t.z_max)
        with self.timer.stage("integrate"):
            contact_cpu.integrate(self.pos, self.vel, self.omega, self.force, self.torque,
                                  world.DENSITY, s.gravity, self.dt)
        self.steps += 1

    def single_step(self) -> None:
        self.step()
        self.timer.frame_done()

    def _between_passes(self) -> None:
        """Remove balls that fell off the platform; drip new ones (drip preset)."""
        with self.timer.stage("integrate"):
            keep = self.pos[:, 1] >= world.FALLEN_Y
            if not keep.all():
                self._keep(keep)
            if self.dripper is not None:
                new = self.dripper.emit(self.pos, self.target_n - self.n, self.settings.drip_rate,
                                        world.PAIR_LIFETIME)
                if new.shape[0]:
                    vel = np.zeros_like(new)
                    vel[:, 1] = -self.dripper.speed
                    self._append(new, vel)

    def _keep(self, keep: np.ndarray) -> None:
        for name in ("pos", "vel", "omega", "force", "torque"):
            setattr(self, name, np.ascontiguousarray(getattr(self, name)[keep]))

    def _append(self, pos: np.ndarray, vel: np.ndarray) -> None:
        zeros = np.zeros_like(pos)
        self.pos = np.concatenate([self.pos, pos])
        self.vel = np.concatenate([self.vel, vel])
        self.omega = np.concatenate([self.omega, zeros])
        self.force = np.concatenate([self.force, zeros])
        self.torque = np.concatenate([self.torque, zeros])

    # --- what the viewer and the tests read --------------------------------------------------
    def positions(self) -> np.ndarray:
        return self.pos

    def kinetic_energy(self) -> float:
        m = world.ball_mass(self.pos[:, 3].astype(np.float64))
        v2 = np.sum(self.vel[:, :3].astype(np.float64) ** 2, axis=1)
        return float(0.5 * np.sum(m * v2))

    def pair_counts(self) -> np.ndarray:
        """Proximity partners per ball in the current pair list."""
        return np.bincount(self.pairs.ravel(), minlength=self.n)[: self.n]

    def colors(self, mode: str) -> np.ndarray:
        if mode == "speed":
            value = np.linalg.norm(self.vel[:, :3], axis=1) / 20.0
        elif mode == "height":
            value = (self.pos[:, 1] + self.trough.radius) / (1.5 * self.trough.radius)
        elif mode == "pairs":
            value = self.pair_counts() / 12.0
        elif mode == "uniform":
            rgba = np.empty((self.n, 4), np.float32)
            rgba[:] = (0.85, 0.55, 0.25, 1.0)
            return rgba
        else:
            raise ValueError(f"unknown colour mode {mode!r} (choose from {', '.join(self.color_modes)})")
        return colormap(value)

    def stats(self) -> dict:
        return {"n": self.n, "steps": self.steps, "sim_time": self.sim_time,
                "tests": self.last_tests, "pairs": self.last_pairs, "passes": len(self.pass_log)}
