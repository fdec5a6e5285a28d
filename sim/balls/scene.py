"""The falling-balls scene: state, presets and the step as named stages, on the CPU or the GPU.

One physics step is: (every sixth step) a proximity pass = drop fallen balls, drip new ones,
sort ("sort"), search ("proximity"); then contact forces and integration ("forces",
"integrate" on the CPU; one fused kernel "forces+integrate" on the GPU). Balls are only removed
or added at a pass, so a pair list's indices stay valid for the six steps it serves.

Where things run: ``backend`` is where the state lives and the physics steps ("cpu": numpy +
numba, "gpu": CuPy). ``cuda_proximity`` (the seed's F4) says whether the proximity pass runs as a
CUDA kernel or as its CPU twin, whichever backend holds the state: CPU physics with CUDA
proximity is the seed's own set-up (state copied over for the pass, pairs copied back).
``variant`` picks the proximity algorithm: the z-sweep (kernels global, texture, shared; one
CPU twin) or the grid (GPU and CPU twins). ``verify`` re-derives every GPU pass on the CPU.
"""

from __future__ import annotations

import time
from collections import deque

import numpy as np

from sim.backend import BackendUnavailable, choose_backend, gpu_status
from sim.balls import contact_cpu, grid_cpu, presets, proximity_cpu, world
from sim.colormap import MISMATCH_RGBA, block_colors, colormap
from sim.scene import Param, Scene
from sim.timing import StageTimer

CPU_STAGES = ("sort", "proximity", "forces", "integrate")
RENDER_MODES = {"speed": 0, "height": 1, "pairs": 2, "uniform": 3, "block": 4}  # render.cu's modes
GPU_STAGES = ("sort", "proximity", "forces+integrate")


class BallsScene(Scene):
    name = "balls"
    presets = {
        "drip": "balls dripping onto the trough (radius 2), topped up to the ball count",
        "T": "benchmark: one tier of 1715 balls (r 1.08, friction 2.0) dropped on the trough",
        "t": "benchmark: five tiers, 8575 balls (r 1.08, friction 2.0)",
        "block": "benchmark lattice of n balls; the trough widens past 27k balls (about 16 tiers)",
    }
    stages = CPU_STAGES
    steps_per_frame = world.STEPS_PER_PASS
    dt = world.DT
    variants = world.PROXIMITY_VARIANTS
    block_sizes = world.BLOCK_SIZES
    gpu_count_limit = 20_000_000
    cpu_count_limit = 200_000  # beyond this the CPU backend is too slow to be useful
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
                 seed: int | None = None, variant: str = "global", block: int = 128, device: int = 0):
        super().__init__()
        self.seed = 0 if seed is None else int(seed)
        self.settings = world.BallSettings()
        self.pass_log: deque[tuple[int, int]] = deque(maxlen=100_000)
        self.gpu = None  # BallsGpu holding the state (backend "gpu") or lent for CUDA proximity
        self.gpu_error: str | None = None  # a GPU failure that disabled the GPU for this scene
        self.device = int(device)  # the CUDA device of the GPU backend
        self.variant = self._valid_variant(variant)
        self.block = self._valid_block(block)
        self.cuda_proximity = True
        self.verify = False
        self.verification: dict | None = None
        self.mismatch: np.ndarray | None = None  # balls whose GPU and CPU pairs differ (last check)
        self.thread_of: np.ndarray | None = None  # for CPU physics with CUDA proximity: ball -> thread
        self.backend, self.backend_note = choose_backend(backend, self.supported_backends)
        self.load_preset(preset, n)

    # --- where things run --------------------------------------------------------------------
    @property
    def supported_backends(self) -> tuple[str, ...]:
        return ("cpu", "gpu") if not self.gpu_reason else ("cpu",)

    @property
    def gpu_reason(self) -> str:
        """Why the GPU cannot be used here ("" when it can)."""
        if self.gpu_error:
            return self.gpu_error
        status = gpu_status()
        return "" if status.available else status.reason

    @property
    def gpu_proximity(self) -> bool:
        """Does the proximity pass run as a CUDA kernel?"""
        return self.cuda_proximity and not self.gpu_reason

    @property
    def block_colors_available(self) -> bool:
        return self.gpu_proximity

    @property
    def render_on_device(self) -> bool:
        return self.backend == "gpu"

    @property
    def color_modes(self) -> dict[str, str]:
        modes = {"speed": "Speed", "height": "Height", "pairs": "Proximity pairs per ball", "uniform": "Uniform"}
        if self.block_colors_available:
            modes["block"] = "CUDA block"
        return modes

    def _gpu_failed(self, exc: Exception) -> str:
        """A kernel that does not compile disables the GPU; the state moves to the CPU, which carries on."""
        from sim.cuda import GpuCompileError

        if isinstance(exc, GpuCompileError):
            self.gpu_error = str(exc)
            if self.backend == "gpu":
                self._use_host_state(*self.gpu.host_state())
                self.backend = "cpu"
                self._new_timer()
                self._invalidate_pass()
            self.gpu = None
        return str(exc)

    def _new_gpu(self, pos, vel, omega, trough=None):
        from sim.balls.gpu import BallsGpu

        trough = trough or self.trough
        return BallsGpu(pos, vel, omega, self.variant, self.block, trough.fallen_y, self.device)

    def set_backend(self, backend: str) -> None:
        """Move the state to ``backend`` without a reset; the next step starts with a fresh pass."""
        if backend not in ("cpu", "gpu"):
            raise ValueError(f"unknown backend {backend!r} (choose cpu or gpu)")
        if backend == self.backend:
            return
        if backend == "gpu":
            if self.gpu_reason:
                raise BackendUnavailable(f"GPU backend unavailable: {self.gpu_reason}")
            try:
                gpu = self._new_gpu(self.pos, self.vel, self.omega)
            except MemoryError as exc:
                raise BackendUnavailable(str(exc)) from None
            except Exception as exc:
                raise BackendUnavailable(f"GPU backend unavailable: {self._gpu_failed(exc)}") from None
            self.gpu, self.backend = gpu, "gpu"
            del self.pos, self.vel, self.omega, self.force, self.torque
        else:
            self._use_host_state(*self.gpu.host_state())
            self.gpu, self.backend = None, "cpu"
        self._new_timer()
        self._invalidate_pass()

    def _new_timer(self) -> None:
        if self.backend == "gpu":
            from sim.cuda import EventStageTimer

            self.timer = EventStageTimer(GPU_STAGES)
        else:
            self.timer = StageTimer(CPU_STAGES)

    def _invalidate_pass(self) -> None:
        self._need_pass = True
        self.verification = None
        self.mismatch = None

    def _valid_variant(self, variant: str) -> str:
        if variant not in self.variants:
            raise ValueError(f"unknown variant {variant!r} (choose from {', '.join(self.variants)})")
        return variant

    def _valid_block(self, block) -> int:
        block = int(block)
        if not (32 <= block <= 1024 and block % 32 == 0):
            raise ValueError(f"block size must be a multiple of 32 from 32 to 1024, got {block}")
        return block

    def set_variant(self, variant: str) -> None:
        variant = self._valid_variant(variant)
        if self.gpu is not None:
            try:
                self.gpu.set_variant(variant)
            except Exception as exc:
                raise BackendUnavailable(self._gpu_failed(exc)) from None
        self.variant = variant
        self._invalidate_pass()

    def set_block(self, block: int) -> None:
        self.block = self._valid_block(block)
        if self.gpu is not None:
            self.gpu.set_block(self.block)
        self._invalidate_pass()

    def set_cuda_proximity(self, on: bool) -> None:
        if on and self.gpu_reason:
            raise BackendUnavailable(f"CUDA proximity unavailable: {self.gpu_reason}")
        self.cuda_proximity = bool(on)
        self._invalidate_pass()

    def set_verify(self, on: bool) -> None:
        self.verify = bool(on)
        self.verification = None
        self.mismatch = None

    # --- presets -------------------------------------------------------------------------------
    @property
    def count_range(self) -> tuple[int, int]:
        return 1, (self.gpu_count_limit if self.backend == "gpu" else self.cpu_count_limit)

    @property
    def takes_count(self) -> bool:
        return self.preset in self.default_counts

    @property
    def params(self) -> tuple[Param, ...]:
        return self._common_params + ((self._drip_param,) if self.preset == "drip" else ())

    def load_preset(self, name: str, n: int | None = None) -> None:
        """Load a preset; on failure (bad name, too many balls) the current scene is kept."""
        if name not in self.presets:
            raise ValueError(f"unknown preset {name!r} for balls (choose from {', '.join(self.presets)})")
        lo, hi = self.count_range
        if n is not None and not (lo <= n <= hi):
            raise ValueError(f"ball count {n:,} out of range {lo}..{hi:,} on the {self.backend.upper()}")
        rng = np.random.default_rng(self.seed)
        trough = world.Trough()
        if name in presets.LATTICE_TIERS:
            pos, vel = presets.lattice(presets.LATTICE_TIERS[name], rng=rng)
            target = pos.shape[0]
        elif name == "block":
            target = n or self.default_counts[name]
            pos, vel, trough = presets.block(target, rng)
        else:  # drip: starts empty, the dripper fills it
            target = n or self.default_counts[name]
            pos, vel = np.empty((0, 4), np.float32), np.empty((0, 4), np.float32)
        omega = np.zeros_like(pos)
        if self.backend == "gpu":
            try:
                gpu = self._new_gpu(pos, vel, omega, trough)  # before touching the current scene
            except MemoryError as exc:
                raise MemoryError(f"preset {name} not loaded: {exc}") from None
            self.gpu = gpu
        else:
            self._use_host_state(pos, vel, omega)
        self.trough = trough
        self.dripper = presets.Dripper(world.DEFAULT_RADIUS, rng) if name == "drip" else None
        self.settings.friction = world.DEFAULT_FRICTION if name == "drip" else world.BENCH_FRICTION
        self.preset, self.target_n = name, target
        self.steps = 0
        self._since_pass = 0
        self.pass_log.clear()
        self._new_timer()
        self._invalidate_pass()

    def reset(self) -> None:
        self.load_preset(self.preset, self.target_n if self.takes_count else None)

    def set_state(self, pos: np.ndarray, vel: np.ndarray) -> None:
        """Replace the balls: pos (n, 4) x, y, z, radius; vel (n, 4) vx, vy, vz, unused. Spins start at 0."""
        pos = np.asarray(pos, np.float32)
        vel = np.asarray(vel, np.float32)
        if pos.ndim != 2 or pos.shape[1] != 4 or vel.shape != pos.shape:
            raise ValueError(f"positions and velocities must both be (n, 4); got {pos.shape} and {vel.shape}")
        if not (np.isfinite(pos).all() and np.isfinite(vel).all()) or (pos[:, 3] <= 0).any():
            raise ValueError("ball state must be finite with positive radii")
        if self.backend == "gpu":
            self.gpu.load(pos, vel, np.zeros_like(pos))
        else:
            self._use_host_state(pos, vel, np.zeros_like(pos))
        self.steps = 0
        self.pass_log.clear()
        self._invalidate_pass()

    def state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Host copies of (pos, vel, omega), whichever backend holds them."""
        if self.backend == "gpu":
            return self.gpu.host_state()
        return self.pos.copy(), self.vel.copy(), self.omega.copy()

    def _use_host_state(self, pos, vel, omega) -> None:
        self.pos = np.ascontiguousarray(pos, np.float32)
        self.vel = np.ascontiguousarray(vel, np.float32)
        self.omega = np.ascontiguousarray(omega, np.float32)
        self.force = np.zeros_like(self.pos)
        self.torque = np.zeros_like(self.pos)
        self.pairs = np.empty((0, 2), np.int64)
        self.last_tests = self.last_pairs = 0

    # --- stepping ------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.gpu.n if self.backend == "gpu" else self.pos.shape[0]

    def step(self) -> None:
        if self._need_pass or self._since_pass >= world.STEPS_PER_PASS:
            self._proximity_pass()
        s = self.settings
        if self.backend == "gpu":
            with self.timer.stage("forces+integrate"):
                self.gpu.step(s, self.trough, s.zeta(), self.dt)
        else:
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
        self._since_pass += 1

    def single_step(self) -> None:
        self.step()
        self.timer.frame_done()

    def _proximity_pass(self) -> None:
        self._need_pass = False
        self._since_pass = 0
        self._drip()
        if self.backend == "gpu" and self.gpu_proximity:
            result = self.gpu.proximity_pass(self.timer)
            self.last_tests, self.last_pairs = result.tests, result.pairs
            if self.verify:
                self._verify(*self.gpu.host_state()[:2], *self.gpu.host_lists())
        elif self.backend == "gpu":
            self._cpu_pass_for_gpu()
        else:
            self._drop_fallen_on_host()
            if self.gpu_proximity:
                self._gpu_pass_for_cpu()
            else:
                self.pairs, self.last_tests, self.last_pairs = self._cpu_twin(self.pos, self.vel, self.timer)
        self.pass_log.append((self.last_tests, self.last_pairs))

    def _cpu_twin(self, pos, vel, timer=None):
        """The CPU twin of the current variant: (pairs (m, 2), tests, pair count)."""
        if self.variant == "grid":
            if timer is None:
                return grid_cpu.grid_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN)
            with timer.stage("proximity"):
                return grid_cpu.grid_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN)
        return proximity_cpu.proximity_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN, timer)

    def _drip(self) -> None:
        if self.dripper is None:
            return
        with self.timer.stage("sort"):
            new = self.dripper.emit(self.target_n - self.n, self.settings.drip_rate, world.PAIR_LIFETIME,
                                    self.settings.gravity)
            if new.shape[0]:
                vel = np.zeros_like(new)
                vel[:, 1] = -self.dripper.speed
                if self.backend == "gpu":
                    self.gpu.append(new, vel)
                else:
                    self._use_host_state(np.concatenate([self.pos, new]), np.concatenate([self.vel, vel]),
                                         np.concatenate([self.omega, np.zeros_like(new)]))

    def _drop_fallen_on_host(self) -> None:
        keep = self.pos[:, 1] >= self.trough.fallen_y
        if not keep.all():
            self._use_host_state(self.pos[keep], self.vel[keep], self.omega[keep])

    def _gpu_pass_for_cpu(self) -> None:
        """CPU physics, CUDA proximity (the seed's set-up): copy the state over, the pairs back."""
        with self.timer.stage("sort"):
            if self.gpu is None:
                self.gpu = self._new_gpu(self.pos, self.vel, self.omega)
            else:
                self.gpu.load(self.pos, self.vel, self.omega)
        result = self.gpu.proximity_pass(self.timer)
        with self.timer.stage("proximity"):
            count, slots = self.gpu.host_lists()
            ids = self.gpu.ids[: self.gpu.n].get()
            self.thread_of = np.empty_like(ids)
            self.thread_of[ids] = np.arange(ids.shape[0], dtype=ids.dtype)
            mine, theirs = _pairs_from_lists(count, slots)
            self.pairs = np.column_stack([ids[mine], ids[theirs]]).astype(np.int64)
        self.last_tests, self.last_pairs = result.tests, result.pairs
        if self.verify:
            self._verify(self.pos, self.vel, *_lists_from_pairs(self.pairs, self.n))

    def _cpu_pass_for_gpu(self) -> None:
        """GPU physics, CPU proximity: copy the state over, the pair lists back."""
        with self.timer.stage("sort"):
            pos, vel, omega = self.gpu.host_state()
            keep = pos[:, 1] >= self.trough.fallen_y
            if not keep.all():
                pos, vel, omega = pos[keep], vel[keep], omega[keep]
                self.gpu.load(pos, vel, omega)
        pairs, self.last_tests, self.last_pairs = self._cpu_twin(pos, vel, self.timer)
        self.gpu.set_lists(pairs)

    def _verify(self, pos, vel, count, slots) -> None:
        """Per ball: the GPU's partners against the CPU twin's from the same state."""
        start = time.perf_counter()
        pairs, _, found = self._cpu_twin(pos, vel)
        cpu_count, cpu_slots = _lists_from_pairs(pairs, pos.shape[0])
        self.mismatch = _differing_balls(count, slots, cpu_count, cpu_slots)
        differing = int(self.mismatch.sum())
        previous = self.verification or {"passes_checked": 0, "passes_mismatched": 0}
        self.verification = {
            "against": "CPU grid (every pair the predicate accepts)" if self.variant == "grid" else "CPU z-sweep",
            "differing": differing,
            "checked": int(pos.shape[0]),
            "unit": "balls",
            "pairs_gpu": int(count.sum()) // 2,
            "pairs_cpu": found,
            "check_ms": (time.perf_counter() - start) * 1e3,
            "passes_checked": previous["passes_checked"] + 1,
            "passes_mismatched": previous["passes_mismatched"] + (differing > 0),
        }

    # --- what the viewer and the tests read ------------------------------------------------------
    def positions(self) -> np.ndarray:
        return self.gpu.pos[: self.n].get() if self.backend == "gpu" else self.pos

    def kinetic_energy(self) -> float:
        pos, vel, _ = self.state()
        m = world.ball_mass(pos[:, 3].astype(np.float64))
        return float(0.5 * np.sum(m * np.sum(vel[:, :3].astype(np.float64) ** 2, axis=1)))

    def pair_counts(self, xp=np):
        """Proximity partners per ball in the current pair list."""
        if self.backend == "gpu":
            counts = self.gpu.count[: self.n]
            return counts if xp is not np else counts.get()
        return np.bincount(self.pairs.ravel(), minlength=self.n)[: self.n]

    def _fill_colors(self, mode: str, xp, out):
        n = self.n
        if mode == "block":
            if not self.block_colors_available:
                raise ValueError("colour by CUDA block needs CUDA proximity on a GPU")
            if self.backend == "gpu":
                threads = xp.arange(n, dtype=xp.int32)
            else:
                threads = self.thread_of if self.thread_of is not None else np.arange(n)
            block_colors(threads, self.block, xp, out)
        elif mode == "uniform":
            out[:] = xp.asarray((0.85, 0.55, 0.25, 1.0), dtype=xp.float32)
        else:
            if self.backend == "gpu":
                pos, vel = self.gpu.pos[:n], self.gpu.vel[:n]
            else:
                pos, vel = self.pos, self.vel
            if mode == "speed":
                value = xp.sqrt(xp.sum(vel[:, :3] * vel[:, :3], axis=1)) / 20.0
            elif mode == "height":
                value = (pos[:, 1] + self.trough.radius) / (1.5 * self.trough.radius)
            elif mode == "pairs":
                value = self.pair_counts(xp) / 12.0
            else:
                raise ValueError(f"unknown colour mode {mode!r} (choose from {', '.join(self.color_modes)})")
            colormap(value, xp, out)
        if self.verify and self.mismatch is not None and self.mismatch.shape[0] == n:
            out[xp.asarray(self.mismatch)] = xp.asarray(MISMATCH_RGBA, dtype=xp.float32)
        return out

    def colors(self, mode: str) -> np.ndarray:
        if self.backend == "gpu":
            import cupy

            pos, col = cupy.empty((self.n, 4), cupy.float32), cupy.empty((self.n, 4), cupy.float32)
            self.write_render(pos, col, mode)
            return col.get()
        return self._fill_colors(mode, np, np.empty((self.n, 4), np.float32))

    def write_render(self, pos_out, col_out, mode: str) -> None:
        """GPU backend: fill CuPy arrays (n, 4) that alias the renderer's GL buffers, in one kernel."""
        if mode not in self.color_modes:
            raise ValueError(f"unknown colour mode {mode!r} (choose from {', '.join(self.color_modes)})")
        mismatch = self.mismatch if self.verify and self.mismatch is not None and self.mismatch.shape[0] == self.n \
            else None
        self.gpu.write_render(pos_out, col_out, RENDER_MODES[mode], self.block, self.trough.radius, mismatch)

    def stats(self) -> dict:
        return {"n": self.n, "steps": self.steps, "sim_time": self.sim_time,
                "tests": self.last_tests, "pairs": self.last_pairs, "passes": len(self.pass_log)}


def _pairs_from_lists(count: np.ndarray, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-ball lists -> each pair once, as (ball, partner) with partner < ball."""
    ball = np.repeat(np.arange(count.shape[0]), count)
    partner = slots[np.arange(slots.shape[1])[None, :] < count[:, None]]
    keep = partner < ball
    return ball[keep], partner[keep]


def _lists_from_pairs(pairs: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each pair once -> symmetric per-ball lists (count (n,), slots (n, k))."""
    a = np.concatenate([pairs[:, 0], pairs[:, 1]])
    b = np.concatenate([pairs[:, 1], pairs[:, 0]])
    count = np.bincount(a, minlength=n)
    order = np.argsort(a, kind="stable")
    a, b = a[order], b[order]
    slot = np.arange(a.shape[0]) - np.repeat(np.cumsum(count) - count, count)
    slots = np.full((n, max(int(count.max(initial=0)), 1)), -1, np.int64)
    slots[a, slot] = b
    return count, slots


def _differing_balls(count_a, slots_a, count_b, slots_b) -> np.ndarray:
    """Balls whose partner sets differ between two sets of per-ball lists."""
    n = count_a.shape[0]

    def keys(count, slots):
        ball = np.repeat(np.arange(n, dtype=np.int64), count)
        partner = slots[np.arange(slots.shape[1])[None, :] < count[:, None]].astype(np.int64)
        return ball * n + partner

    ka, kb = keys(count_a, slots_a), keys(count_b, slots_b)
    differ = np.zeros(n, bool)
    differ[np.unique(np.setxor1d(ka, kb)) // n] = True
    differ |= count_a != count_b  # a pair listed twice
    return differ
