"""The scene base class: what every scene does the same way, once.

A scene owns its state on one backend ("cpu": numpy + numba, "gpu": CuPy on ``device``) and
advances it in named, timed stages through one hook, ``advance(steps) -> steps done``: the base counts
the steps and closes the timer frames, so that a headless run, the window, a benchmark and a scripted
run reach the same state after the same steps (a step is the spec's unit: durbin's is one recursion
step k -> k + 1). The base class holds the shared mechanisms: presets and item counts, backend
switching without a reset, a failed GPU compile moving the state to the CPU. What the user sets and
asks is in the parts it composes, which callers use directly: ``knobs`` (``sim.framework.knobs``: kernel variant,
block, options), ``controls`` (``sim.framework.controls``: toggles, the pointer tool, sliders), ``checks`` and
``inspector`` (``sim.framework.checks``: verification, the items the pointer asks about), ``color_scales``
(``sim.framework.scales``). A scene class sets ``spec`` (its ``SceneSpec``), implements the abstract hooks and
overrides the optional ones its capabilities need.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, TypeVar

from sim.cmdline.cli import Refused, count_text
from sim.cmdline.threads import numba_threads, sized_threads
from sim.contract import BLOCK_COLORS, Param, PointerEvent, SceneSpec, View
from sim.framework.checks import Checks, Inspector
from sim.framework.controls import Controls
from sim.framework.knobs import Knobs
from sim.framework.scales import ColorScales
from sim.framework.scene_bench import BenchFigures
from sim.gpu.backend import BackendUnavailable, choose_backend, gpu_status
from sim.gpu.cuda import GpuCompileError, stage_timer
from sim.gpu.timing import StageTimer

T = TypeVar("T")


def present(value: T | None, absent: str) -> T:
    """``value``, or RuntimeError(``absent``) where it is None: state one backend holds and the other not
    (a scene's ``cpu_...`` / ``gpu_...`` properties)."""
    if value is None:
        raise RuntimeError(absent)
    return value


class Scene(ABC):
    spec: ClassVar[SceneSpec]
    inspector_type: ClassVar[type[Inspector]] = Inspector  # what the pointer asks about items
    bench_type: ClassVar[type[BenchFigures]] = BenchFigures  # the scene's own figures in a benchmark record
    settings: Any  # the sliders' values (``params``), one attribute each: the scene's own dataclass

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
    ):
        spec = self.spec
        self.inspector = self.inspector_type(self)
        self.device = int(device)
        self.seed = self.default_seed if seed is None else int(seed)
        self.steps = 0  # physics steps since the preset loaded (the spec's unit: durbin's recursion steps)
        self.at_end = False  # the last frame did fewer steps than asked: the scene has nothing more to step
        self._frame_carry = 0.0  # the fraction of a step the displayed frames owe
        self.gpu_error: str | None = None  # a GPU failure that disabled the GPU for this scene
        self.knobs = Knobs(self, variant, block)  # variant, block and options (GPU knobs)
        unknown = set(options) - {o.name for o in spec.options}
        if unknown:
            raise ValueError(f"{spec.name} has no option {sorted(unknown)[0]!r}")
        for name, value in options.items():
            self.knobs.set_option(name, value, apply=False)
        self.controls = Controls(self)  # toggles, the pointer tool, the sliders
        self.checks = Checks(self)  # verification: on or off, the last check and what it marked
        self.color_scales = ColorScales()  # colour mode -> range fixed from the panel
        self.backend, self.backend_note = choose_backend(backend, self.supported_backends)
        self.timer: StageTimer = stage_timer(self.backend, spec.stages)
        self.preset = ""
        self.target_n = 0
        self.load_preset(preset or spec.default_preset, n)

    default_seed = 0
    serial_items = 0  # problems up to this many items step on one core (sim/cmdline/threads.py)

    # --- hooks a scene implements ------------------------------------------------------------
    @abstractmethod
    def load_state(self, preset: str, n: int | None) -> None:
        """Build the preset's state with ``n`` items (None: the preset's own count) on
        ``self.backend``. On failure (ValueError, MemoryError) the current state must be kept."""

    @abstractmethod
    def advance(self, steps: int) -> int:
        """Up to ``steps`` physics steps, their stages timed with ``self.timer.stage(name)``; 0 does none but
        what a displayed frame also does (plots, a check). Returns the steps done: fewer where the scene has
        reached its end (durbin at k = N). The base counts them and closes the timer frame."""

    @abstractmethod
    def move_state(self, backend: str) -> None:
        """Move the state to ``backend`` without a reset."""

    @property
    @abstractmethod
    def n(self) -> int:
        """The items the state holds now."""

    @abstractmethod
    def stats(self) -> dict:
        """The values of ``spec.stats`` by key (plus "n", "steps", "sim_time")."""

    @abstractmethod
    def view(self, color_mode: str) -> View:
        """What to draw now, coloured by ``color_mode``."""

    @property
    def color_modes(self) -> dict[str, str]:
        """Colour modes (mode -> label); "block" (``BLOCK_COLORS``) when block colouring is available now."""
        return {BLOCK_COLORS: "CUDA block"} if self.knobs.block_colors_available() else {}

    # --- optional hooks, one per capability -------------------------------------------------------
    def apply_gpu_knobs(self) -> None:
        """Variant, block or an option changed (``knobs``): rebuild what depends on them (none by default)."""
        return None

    def gpu_kernels_run(self) -> bool:
        """Do the scene's CUDA kernels handle it now (what q, Q, v and c act on)?"""
        return self.backend == "gpu"

    def pointer(self, event: PointerEvent) -> None:
        """A pointer event for the scene's tool (``spec.tool``)."""
        raise NotImplementedError

    def histogram_points(self):
        """(points (n, 3) float64 on the scene's backend, dims) for the live distance histogram."""
        raise NotImplementedError

    def histogram_widths(self) -> tuple[float, float, float]:
        """(smallest, largest, default) bucket width that suits the scene's points."""
        raise NotImplementedError

    def toggle_changed(self, name: str) -> None:
        """A toggle (``controls.toggles``) changed value (the scene reads toggles as it steps by default)."""
        return None

    def param_changed(self, name: str, value: float) -> float:
        """A slider's new value (clamped to its range) is in ``settings``: act on it; returns the value kept."""
        return value

    def tool_reach(self) -> float | None:
        """How far the tool acts around the pointer, in scene units; None when it has no such reach."""
        return None

    def user_stage_inputs(self, stage: str) -> dict:
        """A replaceable stage's inputs (``spec.user_stages``, named ``stage``) at the scene's state, as its
        adapter lays them out: host arrays (copied from the device on the GPU), for a user's kernel and the CPU
        twin alike (``sim.userkernel.live``)."""
        raise NotImplementedError

    def apply_user_stage(self, stage: str, inputs: dict, outputs: dict, comparison) -> None:
        """Finish the scene's step with a user's ``outputs`` of the stage computed from ``inputs`` (the state
        moves on with them); ``comparison`` (``sim.userkernel.adapter.Comparison``, None without verification)
        against the CPU twin's is kept as the check that marks the items it got wrong."""
        raise NotImplementedError

    # --- presets and counts ----------------------------------------------------------------------
    @property
    def count_range(self) -> tuple[int, int]:
        cpu, gpu = self.spec.count_limits
        return self.spec.min_count, (gpu if self.backend == "gpu" else cpu)

    @property
    def takes_count(self) -> bool:
        return self.spec.preset(self.preset).count is not None

    @property
    def params(self) -> tuple[Param, ...]:
        return self.spec.params

    def load_preset(self, name: str, n: int | None = None) -> None:
        """Load a preset; on failure (bad name, count out of range, too large) the current state stays."""
        preset = self.spec.preset(name)
        if n is not None:
            if preset.count is None:
                raise ValueError(f"preset {name} has a fixed number of {self.spec.words.unit}: a count does not apply")
            lo, hi = self.count_range
            if not lo <= int(n) <= hi:
                raise Refused(
                    f"{self.spec.words.one} count {count_text(int(n))} out of range {lo}..{hi:,} on the "
                    f"{self.backend.upper()}"
                )
        self.load_state(name, None if n is None else int(n))
        self.preset = name
        self.target_n = int(n) if n is not None else (preset.count or self.n)
        self.steps = 0
        self.at_end = False
        self._frame_carry = 0.0
        self._restart_timing()

    def reset(self) -> None:
        self.load_preset(self.preset, self.target_n if self.takes_count else None)

    # --- where things run ---------------------------------------------------------------------------
    @property
    def supported_backends(self) -> tuple[str, ...]:
        return ("cpu", "gpu") if not self.gpu_reason else ("cpu",)

    @property
    def gpu_reason(self) -> str:
        """Why this scene cannot use the GPU here ("" when it can)."""
        if self.spec.gpu is None:
            return "this scene has no GPU kernels"
        if self.gpu_error:
            return self.gpu_error
        status = gpu_status()
        return "" if status.available else status.reason

    def set_backend(self, backend: str) -> None:
        """Move the state to ``backend`` without a reset."""
        if backend not in ("cpu", "gpu"):
            raise ValueError(f"unknown backend {backend!r} (choose cpu or gpu)")
        if backend == self.backend:
            return
        if backend == "gpu" and self.gpu_reason:
            raise BackendUnavailable(f"GPU backend unavailable: {self.gpu_reason}")
        try:
            self.move_state(backend)
        except MemoryError as exc:
            raise BackendUnavailable(str(exc)) from None
        except Exception as exc:  # a kernel that does not compile disables the GPU, not the scene
            if backend == "gpu":
                raise BackendUnavailable(f"GPU backend unavailable: {self.gpu_failed(exc)}") from None
            raise
        self.backend = backend
        self._restart_timing()

    def gpu_failed(self, exc: Exception) -> str:
        """A kernel that does not compile disables the GPU for this scene; the state moves to the CPU,
        which carries on. Returns the message."""
        if isinstance(exc, GpuCompileError):
            self.gpu_error = str(exc)
            if self.backend == "gpu":
                self.move_state("cpu")
                self.backend = "cpu"
                self._restart_timing()
        return str(exc)

    def _restart_timing(self) -> None:
        self.timer = stage_timer(self.backend, self.spec.stages)
        self.checks.clear()

    def finish(self) -> None:
        """Wait for the device (GPU backend), so that a host clock can stop."""
        if self.backend == "gpu" or self.gpu_kernels_run():
            import cupy

            with cupy.cuda.Device(self.device):
                cupy.cuda.get_current_stream().synchronize()

    # --- time: the base counts the steps and closes the timer frames -------------------------------------
    @property
    def sim_time(self) -> float:
        return self.steps * self.spec.dt

    @property
    def frame_steps(self) -> float:
        """Steps a displayed frame advances; a fraction carries over to the next frames (a step every few)."""
        return self.spec.steps_per_frame

    def advance_frame(self, most: int | None = None) -> int:
        """One displayed frame: ``frame_steps`` steps (at most ``most``: a scripted run's last frame)."""
        self._frame_carry += self.frame_steps
        steps = int(self._frame_carry)
        self._frame_carry -= steps
        return self.run_frame(steps if most is None else min(steps, most))

    def run_frame(self, steps: int) -> int:
        """A timer frame of ``steps`` steps through ``advance`` (or a user's kernel: ``knobs``); returns the
        steps done, which the timer keeps beside the frame's times. The CPU kernels step on one thread up to
        ``serial_items``, else on all the caller allows. ``at_end`` tells whether the scene did fewer than asked
        (nothing more to step)."""
        with numba_threads(sized_threads(self.n, self.serial_items)):
            user = self.knobs.user
            if user is not None and self.knobs.user_runs():
                done = user.advance(steps)
            else:
                self.checks.clear_suspect()  # the scene's own kernel: no user's output to mark
                done = self.advance(steps)
        self.steps += done
        self.at_end = done < steps
        self.timer.frame_done(done)
        return done
