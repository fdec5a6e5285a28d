"""What the user can do to the simulation, from the panel or the keyboard.

Every action catches the scene's exceptions and turns them into the panel's message line: a
bad value or a failing step never takes the viewer down.
"""

from __future__ import annotations

import math
import time
import traceback
from typing import Self

from viewer.keys import key_label
from viewer.live_histogram import LiveHistogram
from viewer.rates import RateMeter
from viewer.scene_words import SceneWords, words_for

BLOCK_COLORS = "block"  # the colour mode that paints each ball with its CUDA block's colour

GPU_SWITCHES = {
    # key action -> (what the scene must offer for it, what it switches)
    "toggle_cuda_proximity": ("set_cuda_proximity", "CUDA proximity"),
    "toggle_verify": ("set_verify", "verification"),
    "toggle_block_colors": ("block_colors_available", "CUDA block colouring"),
    "cycle_variant": ("set_variant", "proximity variant"),
    "cycle_block_size": ("set_block", "block size"),
}


def gpu_unavailable_reason(scene) -> str | None:
    """Why this scene cannot run on the GPU here, or None when it can."""
    if "gpu" in getattr(scene, "supported_backends", ("cpu",)):
        return None
    reason = getattr(scene, "gpu_reason", "")
    if reason:
        return str(reason)
    from sim.backend import gpu_status

    status = gpu_status()
    if not status.available:
        return status.reason
    return "this scene has no GPU kernels yet"


def _next_after(choices, current):
    """The choice after ``current``, wrapping around (the first one if ``current`` is unknown)."""
    choices = list(choices)
    try:
        return choices[(choices.index(current) + 1) % len(choices)]
    except ValueError:
        return choices[0]


class _Guard:
    """Context manager that swallows an ``Exception`` and reports it; ``failed`` tells afterwards."""

    def __init__(self, ctl: Controller, what: str):
        self.ctl, self.what, self.failed = ctl, what, False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        if isinstance(exc, Exception):
            self.failed = True
            self.ctl._failed(self.what, exc)
            return True
        return False


class Controller:
    def __init__(self, scene, paused: bool = False):
        self.scene = scene
        self.paused = paused
        self.color_mode = next(iter(scene.color_modes), "uniform")
        self.message = ""
        self.message_time = 0.0
        self.step_failed = False  # the last attempt to advance raised
        self.step_rate = RateMeter()
        self._color_before_block = self.color_mode  # what c goes back to
        self._reported_gpu_error: str | None = None
        self.histogram = LiveHistogram()  # off until the panel turns it on

    @property
    def words(self) -> SceneWords:
        return words_for(self.scene)

    # --- messages -----------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.message = text
        self.message_time = time.monotonic()

    def _failed(self, what: str, exc: BaseException) -> None:
        detail = str(exc).strip() or type(exc).__name__
        self.say(f"{what} failed: {detail}")
        traceback.print_exception(exc)

    def guard(self, what: str) -> _Guard:
        """``with ctl.guard("reset"):`` turns an exception into the message line."""
        return _Guard(self, what)

    # --- time ---------------------------------------------------------------------------
    def advance(self, render_ms: float | None = None) -> bool:
        """One displayed frame of physics unless paused; ``render_ms`` joins that frame's timings."""
        if self.paused:
            return False
        with self.guard("simulation step") as g:
            if render_ms is not None:
                self.scene.timer.add("render", render_ms)
            self.scene.advance_frame()
        self.step_failed = g.failed
        if g.failed:
            self.paused = True  # stop, or the same error would repeat every frame
            return False
        self.step_rate.update(self.scene.steps)
        return True

    def toggle_pause(self) -> None:
        self.paused = not self.paused
        self.step_rate.clear()
        self.say("paused" if self.paused else "running")

    def single_step(self, render_ms: float | None = None) -> None:
        self.paused = True
        with self.guard("single step") as g:
            if render_ms is not None:
                self.scene.timer.add("render", render_ms)
            self.scene.single_step()
            self.say(f"one step: step {self.scene.steps}")
        self.step_failed = g.failed

    def reset(self) -> None:
        with self.guard("reset"):
            self.scene.reset()
            self.step_rate.clear()
            self.say(f"reset preset {self.scene.preset}")

    # --- presets and settings -------------------------------------------------------------
    def load_preset(self, name: str, n: int | None = None) -> None:
        with self.guard(f"preset {name}"):
            self.scene.load_preset(name, n)
            self.step_rate.clear()
            self.say(f"loaded preset {name}: {self.scene.n:,} {self.words.unit}")

    def load_preset_t(self) -> None:
        self._load_benchmark("t")

    def load_preset_T(self) -> None:
        self._load_benchmark("T")

    def _load_benchmark(self, name: str) -> None:
        """The balls' benchmark drops (t, T); other scenes say they have none."""
        if name not in self.scene.presets:
            self.say(f"{name}: benchmark drop {name} is a balls preset: it does not apply to the "
                     f"{self.scene.name} scene")
            return
        self.load_preset(name)

    def set_count(self, n: int) -> None:
        """Reload the current preset with ``n`` balls."""
        if not self.scene.takes_count:
            self.say(f"preset {self.scene.preset} has a fixed {self.words.unit} count")
            return
        lo, hi = self.scene.count_range
        try:
            n = int(min(max(int(n), lo), hi))
        except (TypeError, ValueError, OverflowError):
            self.say(f"{self.words.unit} count {n!r} is not a number")
            return
        self.load_preset(self.scene.preset, n)

    def param_value(self, name: str) -> float | None:
        with self.guard(f"reading {name}"):
            return float(self.scene.param_value(name))
        return None

    def set_param(self, name: str, value: float) -> None:
        try:
            value = float(value)
        except (TypeError, ValueError):
            self.say(f"{name}: {value!r} is not a number")
            return
        applied = None
        with self.guard(f"setting {name}"):
            applied = self.scene.set_param(name, value)
        if applied is not None and not (math.isfinite(value) and math.isclose(applied, value, rel_tol=1e-6)):
            self.say(f"{name}: {value:g} is out of range; using {applied:g}")

    def stats(self) -> dict:
        with self.guard("stats"):
            return dict(self.scene.stats())
        return {}

    def set_color_mode(self, mode: str) -> None:
        if mode not in self.scene.color_modes:
            self.say(f"unknown colour mode {mode!r}")
        elif mode == BLOCK_COLORS:
            if self.color_mode != BLOCK_COLORS:
                self.toggle_block_colors()
        else:
            self.color_mode = mode

    def replace_scene(self, scene) -> None:
        self.scene = scene
        if self.color_mode not in scene.color_modes:
            self.color_mode = next(iter(scene.color_modes), "uniform")
        if self._color_before_block not in scene.color_modes:
            self._color_before_block = next(iter(scene.color_modes), "uniform")
        self.step_rate.clear()

    def watch_scene(self) -> None:
        """Once a frame: report what the scene changed on its own (a GPU failure, block colours
        no longer meaningful)."""
        error = getattr(self.scene, "gpu_error", None)
        if error and error != self._reported_gpu_error:
            self.say(f"GPU disabled, physics on the CPU: {error}")
        self._reported_gpu_error = error
        if self.color_mode == BLOCK_COLORS and not getattr(self.scene, "block_colors_available", False):
            self._leave_block_colors()
            if not error:
                self.say(f"CUDA block colouring off: no CUDA kernel handles the {self.words.unit} now")

    def switch_scene(self, name: str) -> None:
        """Replace the scene by a fresh one of another kind, on the same backend."""
        if name == self.scene.name:
            return
        with self.guard(f"scene {name}"):
            from sim import create_scene

            self.replace_scene(create_scene(name, backend=self.scene.backend))
            self.say(f"scene {name}")

    # --- backend and GPU-only switches --------------------------------------------------------
    def gpu_reason(self) -> str | None:
        return gpu_unavailable_reason(self.scene)  # gpu_status() catches CUDA errors itself

    def set_backend(self, backend: str) -> None:
        if backend == self.scene.backend:
            return
        reason = self.gpu_reason() if backend == "gpu" else None
        if reason:
            self.say(f"GPU backend unavailable: {reason}")
            return
        with self.guard(f"switching to {backend}"):
            self.scene.set_backend(backend)
            self.say(f"physics on {backend}")

    def toggle_gpu_physics(self) -> None:
        reason = self.gpu_reason()
        if reason:
            self.say(f"a: needs a GPU: {reason}")
            return
        self.set_backend("cpu" if self.scene.backend == "gpu" else "gpu")

    def _gpu_switch_ready(self, action: str) -> bool:
        """True when the key of ``action`` can act on this scene here; else say why."""
        needs, what = GPU_SWITCHES[action]
        reason = self.gpu_reason()
        if reason is None and not hasattr(self.scene, needs):
            reason = f"the {self.scene.name} scene has no {what} switch"
        if reason is not None:
            self.say(f"{key_label(action)}: needs a GPU: {reason}")
            return False
        return True

    def _gpu_switch(self, action: str, change) -> None:
        """Run ``change()`` (returns the status line) if the switch applies; errors become messages."""
        if not self._gpu_switch_ready(action):
            return
        with self.guard(GPU_SWITCHES[action][1]):
            self.say(f"{key_label(action)}: {change()}")

    def gpu_kernels_run(self) -> bool:
        """Whether the scene's CUDA kernels (the variant of q, what v checks) run now: with CUDA
        proximity on (balls) or on the GPU backend (scenes without a CUDA proximity switch)."""
        if hasattr(self.scene, "set_cuda_proximity"):
            return bool(self.scene.cuda_proximity)
        return self.scene.backend == "gpu"

    def variant_note(self) -> str:
        if self.gpu_kernels_run():
            return ""
        if hasattr(self.scene, "set_cuda_proximity"):
            return " (used when CUDA proximity is on: F4)"
        return " (used on the GPU backend: a)"

    def toggle_cuda_proximity(self) -> None:
        if not hasattr(self.scene, "set_cuda_proximity"):
            self.say(f"{key_label('toggle_cuda_proximity')}: CUDA proximity does not apply to the "
                     f"{self.scene.name} scene: its GPU backend (a) runs every stage")
            return

        def change():
            on = not self.scene.cuda_proximity
            self.scene.set_cuda_proximity(on)
            return "CUDA proximity on: the proximity pass runs on the GPU" if on else \
                "CUDA proximity off: the proximity pass runs on the CPU"
        self._gpu_switch("toggle_cuda_proximity", change)

    def toggle_verify(self) -> None:
        def change():
            on = not self.scene.verify
            self.scene.set_verify(on)
            return f"verification on: {self.words.verified}" if on else "verification off"
        self._gpu_switch("toggle_verify", change)

    def cycle_variant(self) -> None:
        def change():
            variant = _next_after(self.scene.variants, self.scene.variant)
            self.scene.set_variant(variant)
            return f"{self.words.variant} {self.scene.variant}{self.variant_note()}"
        self._gpu_switch("cycle_variant", change)

    def cycle_block_size(self) -> None:
        def change():
            block = _next_after(self.scene.block_sizes, self.scene.block)
            self.scene.set_block(block)
            return f"block size {self.scene.block}"
        self._gpu_switch("cycle_block_size", change)

    def set_variant(self, variant: str) -> None:
        with self.guard(f"variant {variant}"):
            self.scene.set_variant(variant)
            self.say(f"{self.words.variant} {self.scene.variant}{self.variant_note()}")

    def set_block(self, block: int) -> None:
        with self.guard(f"block size {block}"):
            self.scene.set_block(int(block))
            self.say(f"block size {self.scene.block}")

    def toggle_block_colors(self) -> None:
        label = key_label("toggle_block_colors")
        if self.color_mode == BLOCK_COLORS:
            self._leave_block_colors()
            self.say(f"{label}: colour by {self.scene.color_modes.get(self.color_mode, self.color_mode)}")
            return
        if not self._gpu_switch_ready("toggle_block_colors"):
            return
        if BLOCK_COLORS not in self.scene.color_modes or not self.scene.block_colors_available:
            self.say(f"{label}: no CUDA kernel handles the {self.words.unit} now: {self.words.kernels_hint}")
            return
        self._color_before_block = self.color_mode
        self.color_mode = BLOCK_COLORS
        self.say(f"{label}: colour by CUDA block")

    def _leave_block_colors(self) -> None:
        modes = self.scene.color_modes
        fallback = next((m for m in modes if m != BLOCK_COLORS), "uniform")
        previous = self._color_before_block
        self.color_mode = previous if previous in modes and previous != BLOCK_COLORS else fallback
