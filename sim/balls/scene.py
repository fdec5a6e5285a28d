"""The falling-balls scene: presets, the step as named stages on the CPU or the GPU, its view.

One physics step is: (every sixth step) a proximity pass = drop fallen balls, drip new ones,
sort ("sort"), search ("proximity"); then contact forces and integration ("forces+integrate").
Balls are only removed or added at a pass, so a pair list's indices stay valid for the six steps
it serves.

Where things run: ``backend`` is where the state lives and the physics steps ("cpu": numpy +
numba in ``pipeline_cpu``, "gpu": CuPy in ``gpu``). The ``cuda_proximity`` toggle (the
seed's F4) says whether the proximity pass runs as a CUDA kernel or as its CPU twin, whichever
backend holds the state: CPU physics with CUDA proximity is the seed's own set-up (state copied
over for the pass, pairs copied back). ``variant`` picks the proximity algorithm: the z-sweep
(kernels global, texture, shared; one CPU twin) or the grid (GPU and CPU twins).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sim.balls import DRIP_RATE, PARAMS, SPEC, pipeline_cpu, presets, world
from sim.balls.cross_passes import CrossPasses
from sim.balls.items import BallInspector
from sim.balls.passes import PassFigures, PassLog
from sim.balls.pipeline_cpu import HostBalls
from sim.balls.render_cpu import UNIFORM_PALETTE
from sim.balls.view import BallsView
from sim.framework import finite
from sim.framework.scene import Scene, present

if TYPE_CHECKING:
    from sim.balls.gpu import BallsGpu


class BallsScene(BallsView, CrossPasses, Scene):
    spec = SPEC
    inspector_type = BallInspector
    bench_type = PassFigures
    uniform_palette = UNIFORM_PALETTE
    serial_items = 4096  # the T and drip presets (a step under a millisecond); t (8575) and block use all

    def __init__(
        self,
        preset: str | None = None,
        backend: str = "cpu",
        n: int | None = None,
        seed: int | None = None,
        variant: str | None = None,
        block: Any = None,
        device: int = 0,
        **options: str,
    ) -> None:
        self.settings = world.BallSettings()
        self.pass_log = PassLog()
        self.gpu: BallsGpu | None = None  # BallsGpu holding the state (backend "gpu") or lent for CUDA proximity
        self.host: HostBalls | None = None  # the state on the CPU backend
        self.thread_of: np.ndarray | None = None  # CPU physics with CUDA proximity: ball -> thread
        self.last_tests = self.last_pairs = 0
        # the last check's (GPU count, slots, CPU count, slots), for describe_check
        self.checked_lists: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._next_id = 0  # the id the next dripped ball gets (ids are never reused: a pin follows its ball)
        super().__init__(preset, backend, n, seed, variant, block, device, **options)

    # --- what runs where ----------------------------------------------------------------------
    def gpu_kernels_run(self) -> bool:
        return self.controls.toggles["cuda_proximity"] and not self.gpu_reason

    @property
    def cuda_proximity(self) -> bool:
        return self.controls.toggles["cuda_proximity"]

    def toggle_changed(self, name: str) -> None:
        self._need_pass = True

    def apply_gpu_knobs(self) -> None:
        if self.gpu is not None:
            self.gpu_balls.set_variant(self.knobs.variant)
            self.gpu_balls.set_block(self.knobs.threads)
        self._need_pass = True

    def _new_gpu(self, pos, vel, omega, trough, ids=None):
        from sim.balls.gpu import BallsGpu

        return BallsGpu(pos, vel, omega, self.knobs.variant, self.knobs.threads, trough.fallen_y, self.device, ids)

    def move_state(self, backend: str) -> None:
        if backend == "gpu":
            host = self.cpu_balls
            self.gpu = self._new_gpu(host.pos, host.vel, host.omega, self.trough, host.ids)
            self.host = None
        else:
            self.host = HostBalls(*self.gpu_balls.host_state(), self.gpu_balls.host_ids())
            self.gpu = None
        self._need_pass = True

    # --- presets --------------------------------------------------------------------------------
    @property
    def params(self):
        return PARAMS + ((DRIP_RATE,) if self.preset == "drip" else ())

    def load_state(self, preset: str, n: int | None) -> None:
        drop = presets.build(preset, n, np.random.default_rng(self.seed))
        omega = np.zeros_like(drop.pos)
        if self.backend == "gpu":
            try:
                self.gpu = self._new_gpu(drop.pos, drop.vel, omega, drop.trough)  # before touching the scene
            except MemoryError as exc:
                raise MemoryError(f"preset {preset} not loaded: {exc}") from None
        else:
            self.host = HostBalls(drop.pos, drop.vel, omega)
        self.trough, self.dripper = drop.trough, drop.dripper
        self._next_id = drop.pos.shape[0]
        self.settings.friction = drop.friction
        self._since_pass = 0
        self._need_pass = True
        self.pass_log.clear()

    def set_state(self, pos: np.ndarray, vel: np.ndarray) -> None:
        """Replace the balls: pos (n, 4) x, y, z, radius; vel (n, 4) vx, vy, vz, unused. Spins start at 0."""
        pos = np.asarray(pos, np.float32)
        vel = np.asarray(vel, np.float32)
        if pos.ndim != 2 or pos.shape[1] != 4 or vel.shape != pos.shape:
            raise ValueError(f"positions and velocities must both be (n, 4); got {pos.shape} and {vel.shape}")
        if not (np.isfinite(pos).all() and np.isfinite(vel).all()) or (pos[:, 3] <= 0).any():
            raise ValueError("ball state must be finite with positive radii")
        if self.backend == "gpu":
            self.gpu_balls.load(pos, vel, np.zeros_like(pos))
        else:
            self.host = HostBalls(pos, vel, np.zeros_like(pos))
        self.steps = 0
        self._next_id = pos.shape[0]
        self.pass_log.clear()
        self._need_pass = True
        self.checks.clear()

    def state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Host copies of (pos, vel, omega), whichever backend holds them."""
        if self.backend == "gpu":
            return self.gpu_balls.host_state()
        return self.cpu_balls.pos.copy(), self.cpu_balls.vel.copy(), self.cpu_balls.omega.copy()

    @property
    def gpu_balls(self) -> BallsGpu:
        """The state on the GPU (``gpu``): there on the GPU backend and while CUDA proximity runs."""
        return present(self.gpu, "the balls have no GPU state")

    @property
    def cpu_balls(self) -> HostBalls:
        """The state on the CPU backend (``host``), there whenever the balls are not on the GPU."""
        return present(self.host, "the balls are on the GPU")

    # the CPU state by name, for tests and the CPU pipeline
    pos = property(lambda self: self.host.pos)
    vel = property(lambda self: self.host.vel)
    omega = property(lambda self: self.host.omega)
    pairs = property(lambda self: self.host.pairs)

    @property
    def n(self) -> int:
        return self.gpu_balls.n if self.backend == "gpu" else self.cpu_balls.n

    # --- stepping -----------------------------------------------------------------------------------
    def advance(self, steps: int) -> int:
        for _ in range(steps):
            self._step()
        return steps

    def _step(self) -> None:
        if self._need_pass or self._since_pass >= world.STEPS_PER_PASS:
            self._proximity_pass()
        self._forces_step()

    def _forces_step(self) -> None:
        with self.timer.stage("forces+integrate"):
            if self.backend == "gpu":
                self.gpu_balls.step(
                    self.settings,
                    self.trough,
                    self.settings.zeta(),
                    self.spec.dt,
                    before_pass=self._since_pass + 1 >= world.STEPS_PER_PASS,
                )
            else:
                pipeline_cpu.step(self.cpu_balls, self.settings, self.trough, self.spec.dt)
        self._since_pass += 1

    def _proximity_pass(self) -> None:
        self._need_pass = False
        self._since_pass = 0
        self._drip()
        if self.backend == "gpu" and self.gpu_kernels_run():
            result = self.gpu_balls.proximity_pass(self.timer)
            self.last_tests, self.last_pairs = result.tests, result.pairs
            if self.checks.on:
                self._verify(*self.gpu_balls.host_state()[:2], *self.gpu_balls.host_lists())
        elif self.backend == "gpu":
            self._cpu_pass_for_gpu()
        else:
            keep = self.cpu_balls.pos[:, 1] >= self.trough.fallen_y
            if not keep.all():
                self.host = self.cpu_balls.kept(keep)
            if self.gpu_kernels_run():
                self._gpu_pass_for_cpu()
            else:
                host = self.cpu_balls
                host.pairs, self.last_tests, self.last_pairs = pipeline_cpu.proximity(
                    host.pos, host.vel, self.knobs.variant, self.timer
                )
        self.pass_log.append(self.last_tests, self.last_pairs)

    def _drip(self, seconds: float = world.PAIR_LIFETIME) -> None:
        """New balls for ``seconds`` of dripping (a pass's interval)."""
        if self.dripper is None:
            return
        with self.timer.stage("sort"):
            new = self.dripper.emit(self.target_n - self.n, self.settings.drip_rate, seconds, self.settings.gravity)
            if new.shape[0]:
                vel = np.zeros_like(new)
                vel[:, 1] = -self.dripper.speed
                ids = np.arange(self._next_id, self._next_id + new.shape[0], dtype=np.int64)
                self._next_id += new.shape[0]
                if self.backend == "gpu":
                    self.gpu_balls.append(new, vel, ids)
                else:
                    self.host = self.cpu_balls.appended(new, vel, ids)

    # --- a proximity pass found outside the scene, every step (a user's kernel: sim.balls.user_stage) -------------
    def user_stage_inputs(self, stage: str) -> dict:
        """What a pass does before its search, for a pass each step: balls dripped for one step, fallen ones
        dropped; the balls the search sees (host copies) in the sweep's order."""
        from sim.balls.user_stage import arrays

        self._drip(self.spec.dt)
        if self.backend == "gpu":
            pos, vel, omega = self.gpu_balls.host_state()
            keep = pos[:, 1] >= self.trough.fallen_y
            if not keep.all():
                self.gpu_balls.load(pos[keep], vel[keep], omega[keep], self.gpu_balls.host_ids()[keep])
            return arrays(pos[keep], vel[keep])
        keep = self.cpu_balls.pos[:, 1] >= self.trough.fallen_y
        if not keep.all():
            self.host = self.cpu_balls.kept(keep)
        return arrays(self.cpu_balls.pos, self.cpu_balls.vel)

    def apply_user_stage(self, stage: str, inputs: dict, outputs: dict, comparison) -> None:
        """One step on the user's pair lists (the balls have not moved since ``user_stage_inputs``): the pass's
        result, then the step's forces and integration; ``comparison`` against the CPU z-sweep marks the balls
        whose partners differ."""
        from sim.balls.user_stage import pairs as pair_list

        pairs, suspect, note = pair_list(inputs, outputs)
        self.checks.mark_suspect(suspect, note)
        if self.backend == "gpu":
            self.gpu_balls.set_lists(pairs)
        else:
            self.cpu_balls.pairs = pairs
        self.last_pairs = int(pairs.shape[0])
        self._need_pass, self._since_pass = False, 0
        if comparison is not None:
            self.checks.record_user(
                "the CPU z-sweep", comparison, {"balls differing": comparison.mismatches, "compared": comparison.rule}
            )
        self._forces_step()

    # --- what the viewer and the tests read --------------------------------------------------------------
    def positions(self) -> np.ndarray:
        return self.gpu_balls.pos[: self.n].get() if self.backend == "gpu" else self.cpu_balls.pos

    def kinetic_energy(self) -> float:
        pos, vel, _ = self.state()
        m = world.ball_mass(pos[:, 3].astype(np.float64))
        return float(0.5 * np.sum(m * np.sum(vel[:, :3].astype(np.float64) ** 2, axis=1)))

    def pair_counts(self, xp=np):
        """Proximity partners per ball in the current pair list."""
        if self.backend == "gpu":
            counts = self.gpu_balls.count[: self.n]
            return counts if xp is not np else counts.get()
        return np.bincount(self.cpu_balls.pairs.ravel(), minlength=self.n)[: self.n]

    def stats(self) -> dict:
        n = self.n
        return {
            "n": n,
            "steps": self.steps,
            "sim_time": self.sim_time,
            "tests": self.last_tests,
            "tests_per_ball": self.last_tests / n if n else 0.0,
            "pairs": self.last_pairs,
            "passes": self.pass_log.count,
            finite.STAT_KEY: self.checks.suspect_note,
        }
