"""The CS 267 particle scene: n particles in the square box, stepped on the CPU or the GPU.

One step: bin the particles ("bin"), add the forces of the neighbour bins and move, reflecting off
the walls ("forces+move"). The CPU path reproduces the course's O(n^2) starter bit for bit. The
starters' distance statistics (absmin, absavg) are kept per step.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from sim.contract import PointerEvent
from sim.framework import finite
from sim.framework.checks import Inspector
from sim.framework.scene import Scene, present
from sim.gpu.cuda import FrameGraph
from sim.gpu.timing import NULL_TIMER
from sim.particles import SPEC, binning_cpu, pipeline_cpu, world
from sim.particles.bench import ParticleFigures
from sim.particles.distances import DistanceStats
from sim.particles.init import INITS
from sim.particles.items import ParticleInspector
from sim.particles.kernels import GRAPH_STAGE
from sim.particles.pipeline_cpu import HostParticles
from sim.particles.view import UNIFORM_PALETTE, ParticlesView

if TYPE_CHECKING:
    from sim.particles.gpu import ParticlesGpu

MAX_PUSH_SPEED = 5.0  # box units per second: a push never launches particles across the box at once


class ParticlesScene(ParticlesView, Scene):
    spec = SPEC
    inspector_type: ClassVar[type[Inspector]] = ParticleInspector
    bench_type = ParticleFigures
    uniform_palette = UNIFORM_PALETTE
    default_seed = 1

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
        self.gpu: ParticlesGpu | None = None  # when the state is on the GPU
        self.host: HostParticles | None = None
        self._drag: tuple[float, float] | None = None
        self._graph: FrameGraph | None = None  # the frame's steps as a CUDA graph (the "graph" toggle)
        self._graph_of: ParticlesGpu | None = None  # the state it was captured from
        # the last check's GPU and CPU state by particle id and the GPU's ids in its order, for describe_check
        self.checked: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        super().__init__(preset, backend, n, seed, variant, block, device, **options)
        self.controls.tool_values.update(radius=0.05, strength=1.0)

    @property
    def stats_on(self) -> bool:
        """Are the course's distance statistics measured each step?"""
        return self.controls.toggles["statistics"]

    def toggle_changed(self, name: str) -> None:
        if name == "statistics" and self.gpu is not None:  # a kernel option: rebuild, keep the state
            self.gpu = self._new_gpu(*self.gpu.host_state())

    @property
    def precision(self) -> str:
        return self.knobs.options["precision"]

    # --- state ------------------------------------------------------------------------------
    def load_state(self, preset: str, n: int | None) -> None:
        n = n or self.spec.preset(preset).count
        if n is None:  # not so: every particles preset has a count
            raise ValueError(f"preset {preset} has no particle count")
        x, y, vx, vy = INITS[preset](n, self.seed)
        size = world.box_size(n)
        nbins = binning_cpu.bin_count(size)
        if self.backend == "gpu":
            self.gpu = self._new_gpu(x, y, vx, vy, size)
        else:
            self.host = HostParticles(x, y, vx, vy)
        self.size, self.nbins = size, nbins
        self._stats = DistanceStats()

    def _new_gpu(self, x, y, vx, vy, size=None):
        from sim.particles.gpu import ParticlesGpu

        return ParticlesGpu(
            x,
            y,
            vx,
            vy,
            size or self.size,
            self.knobs.variant,
            self.precision,
            self.knobs.block,
            self.stats_on,
            device=self.device,
        )

    def move_state(self, backend: str) -> None:
        """Move the state across without a reset (the distance statistics start over)."""
        if backend == "gpu":
            h = self.cpu_particles
            self.gpu, self.host = self._new_gpu(h.x, h.y, h.vx, h.vy), None
        else:
            self.host, self.gpu = HostParticles(*self.gpu_particles.host_state()), None
        self._stats = DistanceStats()
        self.checks.on = False

    def apply_gpu_knobs(self) -> None:
        if self.gpu is not None:
            self.gpu = self._new_gpu(*self.gpu.host_state())

    @property
    def n(self) -> int:
        return self.gpu.n if self.gpu is not None else self.cpu_particles.n

    @property
    def cpu_particles(self) -> HostParticles:
        """The state on the CPU backend (``host``), there whenever the particles are not on the GPU."""
        return present(self.host, "the particles are on the GPU")

    @property
    def gpu_particles(self) -> ParticlesGpu:
        """The state on the GPU backend (``gpu``), there whenever the particles are on the GPU."""
        return present(self.gpu, "the particles are on the CPU")

    # the CPU state by name, for tests
    x = property(lambda self: self.host.x)
    y = property(lambda self: self.host.y)
    vx = property(lambda self: self.host.vx)
    vy = property(lambda self: self.host.vy)

    @property
    def stats_per_step(self) -> DistanceStats:
        """The starters' distance statistics so far (read from the device on the GPU)."""
        if self.gpu is not None and self.stats_on:
            stats = DistanceStats()
            stats.absmin, stats.absavg_sum, stats.steps_with_pairs = self.gpu.distance_stats()
            return stats
        return self._stats

    # --- stepping ---------------------------------------------------------------------------------
    def advance(self, steps: int) -> int:
        """``steps`` steps; a displayed frame's on the GPU with the "graph" toggle on replayed as one CUDA graph."""
        graph = self.gpu is not None and self.controls.toggles["graph"]
        if steps != self.spec.steps_per_frame or not graph or self.checks.on:
            for _ in range(steps):
                self._step()
            return steps
        if self._graph is None or self._graph_of is not self.gpu:
            self._graph, self._graph_of = FrameGraph(self._graph_frame, self.device), self.gpu
        with self.timer.stage(GRAPH_STAGE):
            self._graph()
        return steps

    def _graph_frame(self) -> None:
        for _ in range(self.spec.steps_per_frame):  # an even count: the buffers end where they started
            self.gpu_particles.step(NULL_TIMER)

    def _step(self) -> None:
        if self.gpu is not None:
            before = self.gpu.sorted_host_state() if self.checks.on else None
            self.gpu.step(self.timer)
            if before is not None:
                self._verify(before)
            return
        stats = pipeline_cpu.step(self.cpu_particles, self.size, self.nbins, self.timer)
        if self.stats_on:
            self._stats.add_step(*stats)

    def _verify(self, before) -> None:
        """Step the GPU's pre-step state on the CPU and compare each particle after the step.

        The GPU adds the same forces in another order, with a reciprocal square root (and fused
        multiply-adds), so a correct step differs by rounding only: ~1e-18 in fp64 here. 1e-12 (fp64)
        or 1e-5 (fp32) of the box is far above that and far below a wrong force or a lost neighbour.
        """
        started = time.perf_counter()
        x, y, vx, vy, ids = before
        cpu = pipeline_cpu.stepped_copy(x, y, vx, vy, self.size, self.nbins)
        after = self.gpu_particles.sorted_host_state()
        gx, gy, _, _, gids = after
        n = x.shape[0]
        cpu_x, cpu_y = np.empty(n), np.empty(n)
        cpu_x[ids], cpu_y[ids] = cpu.x, cpu.y
        distance = np.hypot(cpu_x[gids] - gx, cpu_y[gids] - gy)
        tolerance = (1e-12 if self.precision == "fp64" else 1e-5) * self.size
        gpu_by_id = np.empty((4, n))
        gpu_by_id[:, gids] = np.stack(after[:4])
        cpu_by_id = np.empty((4, n))
        cpu_by_id[:, ids] = np.stack([cpu.x, cpu.y, cpu.vx, cpu.vy])
        self.checked = (gpu_by_id, cpu_by_id, gids)
        self.checks.record(
            "the CPU step from the same state",
            distance > tolerance,
            started,
            {"largest difference": float(distance.max(initial=0.0))},
        )

    def host_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """x, y in the particles' own order (the course's output order)."""
        return self.gpu.host_positions() if self.gpu is not None else (self.cpu_particles.x, self.cpu_particles.y)

    # --- the forces from a user's kernel (sim.particles.user_stage), the move the scene's ------------------
    def user_stage_inputs(self, stage: str) -> dict:
        from sim.particles.user_stage import arrays

        return arrays(*self.host_positions(), self.size)

    def apply_user_stage(self, stage: str, inputs: dict, outputs: dict, comparison) -> None:
        """The scene's move with the user's accelerations (on the host; on the GPU the moved state is loaded
        back, in the particles' own order, so the marks line up with the device's particles)."""
        from sim.particles.user_stage import refused_note, usable

        p = HostParticles(*self.gpu.host_state()) if self.gpu is not None else self.cpu_particles
        ax, ay = np.asarray(outputs["ax"], np.float64), np.asarray(outputs["ay"], np.float64)
        refused = ~(usable(ax) & usable(ay))
        p.ax[:] = np.where(refused, 0.0, ax)  # those coast: the move's wall loop never ends at inf or 1e300
        p.ay[:] = np.where(refused, 0.0, ay)
        self.checks.mark_suspect(refused, refused_note(ax, ay, refused))
        binning_cpu.move(p.x, p.y, p.vx, p.vy, p.ax, p.ay, self.size)
        if self.gpu is not None:
            self.gpu.load_state(p.x, p.y, p.vx, p.vy)
        self.checked = None  # the built-in check's states say nothing about this step
        if comparison is not None:
            self.checks.record_user(
                "the CPU twin's forces from the same positions", comparison, {"largest difference": comparison.max_abs}
            )

    # --- the push tool ---------------------------------------------------------------------------
    def tool_reach(self) -> float:
        return self.controls.tool_values["radius"] * self.size

    def pointer(self, event: PointerEvent) -> None:
        """A left drag gives the particles within the push radius the pointer's velocity."""
        if event.kind == "press":
            self._drag = (event.x, event.y)
            return
        if event.kind != "drag" or self._drag is None:
            self._drag = None
            return
        frame_seconds = self.spec.steps_per_frame * self.spec.dt
        strength = self.controls.tool_values["strength"]
        dvx, dvy = (
            (event.x - self._drag[0]) / frame_seconds * strength,
            (event.y - self._drag[1]) / frame_seconds * strength,
        )
        speed = float(np.hypot(dvx, dvy))
        if speed > MAX_PUSH_SPEED:
            dvx, dvy = dvx * MAX_PUSH_SPEED / speed, dvy * MAX_PUSH_SPEED / speed
        self._drag = (event.x, event.y)
        x, y, vx, vy = self.arrays()
        reach = self.tool_reach()
        near = (x - event.x) ** 2 + (y - event.y) ** 2 <= reach * reach
        vx[near] = dvx
        vy[near] = dvy

    # --- what the viewer reads ------------------------------------------------------------------------
    def stats(self) -> dict:
        """absmin and absavg only while they are measured (None, shown as "-", with the statistics off)."""
        measured = self.stats_per_step if self.stats_on else None
        absmin, absavg = (measured.absmin, measured.absavg) if measured is not None else (None, None)
        return {
            "n": self.n,
            "size": self.size,
            "steps": self.steps,
            "sim_time": self.sim_time,
            "absmin": absmin,
            "absavg": absavg,
            finite.STAT_KEY: self.checks.suspect_note,
        }
