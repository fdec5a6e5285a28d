"""What the user can do to the simulation, from the panel or the keyboard.

Every action catches the scene's exceptions and turns them into the panel's message line: a
bad value or a failing step never takes the viewer down.
"""

from __future__ import annotations

import math
import time
import traceback
from typing import Self

from viewer.rates import RateMeter

GPU_FEATURES = {
    # action -> (key, what it does once GPU kernels exist)
    "toggle_cuda_proximity": ("F4", "CUDA proximity on/off"),
    "toggle_verify": ("v", "verification on/off"),
    "toggle_block_colors": ("c", "colour by CUDA block"),
    "cycle_variant": ("q", "proximity variant"),
    "cycle_block_size": ("Q", "block size"),
}


def gpu_unavailable_reason(scene) -> str | None:
    """Why this scene cannot run on the GPU here, or None when it can."""
    from sim.backend import gpu_status

    status = gpu_status()
    if not status.available:
        return status.reason
    if "gpu" not in getattr(scene, "supported_backends", ("cpu",)):
        return "this scene has no GPU kernels yet"
    return None


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
            self.say(f"loaded preset {name}: {self.scene.n:,} balls")

    def load_preset_t(self) -> None:
        self.load_preset("t")

    def load_preset_T(self) -> None:
        self.load_preset("T")

    def set_count(self, n: int) -> None:
        """Reload the current preset with ``n`` balls."""
        if not self.scene.takes_count:
            self.say(f"preset {self.scene.preset} has a fixed ball count")
            return
        lo, hi = self.scene.count_range
        try:
            n = int(min(max(int(n), lo), hi))
        except (TypeError, ValueError, OverflowError):
            self.say(f"ball count {n!r} is not a number")
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
        if mode in self.scene.color_modes:
            self.color_mode = mode
        else:
            self.say(f"unknown colour mode {mode!r}")

    def replace_scene(self, scene) -> None:
        self.scene = scene
        if self.color_mode not in scene.color_modes:
            self.color_mode = next(iter(scene.color_modes), "uniform")
        self.step_rate.clear()

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

    def gpu_feature(self, action: str) -> None:
        """The original's CUDA switches. A scene with GPU kernels offers a method of the same name
        (returning a status line); without one, say why and change nothing."""
        key, what = GPU_FEATURES[action]
        reason = self.gpu_reason()
        switch = getattr(self.scene, action, None)
        if reason is None and switch is None:
            reason = f"the {self.scene.name} scene has no {what} switch"
        if reason is not None:
            self.say(f"{key}: needs a GPU: {reason}")
            return
        with self.guard(what):
            self.say(f"{key}: {switch()}")

    def toggle_cuda_proximity(self) -> None:
        self.gpu_feature("toggle_cuda_proximity")

    def toggle_verify(self) -> None:
        self.gpu_feature("toggle_verify")

    def toggle_block_colors(self) -> None:
        self.gpu_feature("toggle_block_colors")

    def cycle_variant(self) -> None:
        self.gpu_feature("cycle_variant")

    def cycle_block_size(self) -> None:
        self.gpu_feature("cycle_block_size")
