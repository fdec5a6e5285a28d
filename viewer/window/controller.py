"""What the user can do to the simulation, from the panel, the keyboard or the pointer.

The controller reads the scene only through the contract: its ``SceneSpec`` (words, presets,
toggles and their keys, GPU knobs, verifier, block colouring, tool) and the ``sim.framework.scene.Scene``
methods. Every action catches the scene's exceptions and turns them into the panel's message
line (``act``, ``guard``): a bad value or a failing step never takes the viewer down. The switches
that need a GPU (backend, verification, variant, block size) are its ``gpu``, a
``viewer.window.gpu_switches.GpuSwitches``; a user's own kernel is its ``kernel``
(``viewer.window.user_kernel.UserKernel``).
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Callable
from typing import Self

from sim.cmdline.cli import UsageError
from sim.cmdline.writer import OutputError
from sim.contract import BLOCK_COLORS, PointerEvent, Words
from viewer.keys import BLOCK_COLORS_KEY
from viewer.live_histogram import LiveHistogram
from viewer.window.gpu_switches import GpuSwitches
from viewer.window.rates import RateMeter
from viewer.window.user_kernel import UserKernel


class _Guard:
    """Context manager that swallows an ``Exception`` and reports it; ``failed`` tells afterwards."""

    def __init__(self, ctl: Controller, what: str):
        self.ctl, self.what, self.failed = ctl, what, False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        if isinstance(exc, Exception):
            self.failed = True
            self.ctl.failed(self.what, exc)
            return True
        return False


class Controller:
    def __init__(self, scene, paused: bool = False):
        self.scene = scene
        self.paused = paused
        self.color_mode = next(iter(scene.color_modes), "")
        self.message = ""
        self.message_time = 0.0
        self.step_failed = False  # the last attempt to advance raised
        self.step_rate = RateMeter()
        self._color_before_block = self.color_mode  # what c goes back to
        self._reported_gpu_error: str | None = None
        self.histogram = LiveHistogram()  # off until the panel turns it on
        self.on_switch = None  # called with (old scene, its colour mode) after switch_scene replaced it
        self.new_scene = None  # (name, backend) -> the scene switch_scene switches to; None: the scene's defaults
        self.gpu = GpuSwitches(self)
        self.kernel = UserKernel(self)

    @property
    def spec(self):
        return self.scene.spec

    @property
    def words(self) -> Words:
        return self.scene.spec.words

    # --- messages -----------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.message = text
        self.message_time = time.monotonic()

    def failed(self, what: str, exc: BaseException) -> None:
        detail = str(exc).strip() or type(exc).__name__
        self.say(f"{what} failed: {detail}")
        if not isinstance(exc, (OutputError, UsageError)):  # those say all there is: no traceback
            traceback.print_exception(exc)

    def guard(self, what: str) -> _Guard:
        """``with ctl.guard("reset"):`` turns an exception into the message line."""
        return _Guard(self, what)

    def act(self, what: str, action: Callable, *args, done: str | Callable[[], str] | None = None) -> bool:
        """Run ``action(*args)``; an exception becomes "<what> failed: ..." on the message line, else
        ``done`` is said (text, or a function giving it once the action ran). True when it ran."""
        with self.guard(what) as g:
            action(*args)
            if done is not None:
                self.say(done() if callable(done) else done)
        return not g.failed

    # --- time ---------------------------------------------------------------------------
    def advance(self, render_ms: float | None = None, most: int | None = None) -> bool:
        """One displayed frame of physics (at most ``most`` steps) unless paused; ``render_ms`` joins that
        frame's timings."""
        if self.paused:
            return False
        with self.guard("simulation step") as g:
            if render_ms is not None:
                self.scene.timer.add("render", render_ms)
            self.scene.advance_frame(most)
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
        if render_ms is not None:
            self.scene.timer.add("render", render_ms)
        self.step_failed = not self.act(
            "single step", self.scene.run_frame, 1, done=lambda: f"one step: step {self.scene.steps}"
        )

    def reset(self) -> None:
        if self.act("reset", self.scene.reset, done=lambda: f"reset preset {self.scene.preset}"):
            self.step_rate.clear()

    # --- presets, scene keys and settings -------------------------------------------------------
    def load_preset(self, name: str, n: int | None = None) -> None:
        if self.act(
            f"preset {name}",
            self.scene.load_preset,
            name,
            n,
            done=lambda: f"loaded preset {name}: {self.scene.n:,} {self.words.unit}",
        ):
            self.step_rate.clear()

    def scene_key(self, label: str) -> None:
        """A key some scene's spec declares: load its preset or flip its toggle here, or say whose it is."""
        spec = self.spec
        preset = next((p for p in spec.presets if p.key == label), None)
        if preset is not None:
            self.load_preset(preset.name)
            return
        toggle = next((t for t in spec.toggles if t.key == label), None)
        if toggle is not None:
            self.toggle(toggle.name)
            return
        from sim.registry import SCENES

        owners = [
            f"preset {p.name} of the {s.name} scene" for s in SCENES.values() for p in s.presets if p.key == label
        ]
        owners += [f"{t.label} of the {s.name} scene" for s in SCENES.values() for t in s.toggles if t.key == label]
        whose = " and ".join(owners) or "no scene's key"
        self.say(f"{label}: {whose}: it does not apply to the {spec.name} scene")

    def toggle(self, name: str) -> None:
        """Flip one of the scene's toggles (``spec.toggles``); a GPU toggle without a GPU says why."""
        toggle = next(t for t in self.spec.toggles if t.name == name)
        label = toggle.key or toggle.label
        reason = self.gpu.reason() if toggle.gpu_only else None
        if reason:
            self.say(f"{label}: needs a GPU: {reason}")
            return
        controls = self.scene.controls
        on = not controls.toggles[name]
        self.act(toggle.label, controls.set_toggle, name, on, done=f"{label}: {toggle.label} {'on' if on else 'off'}")

    def set_count(self, n: int) -> None:
        """Reload the current preset with ``n`` items."""
        if not self.scene.takes_count:
            self.say(f"preset {self.scene.preset} has a fixed {self.words.one} count")
            return
        lo, hi = self.scene.count_range
        try:
            n = int(min(max(int(n), lo), hi))
        except (TypeError, ValueError, OverflowError):
            self.say(f"{self.words.one} count {n!r} is not a number")
            return
        self.load_preset(self.scene.preset, n)

    def param_value(self, name: str) -> float | None:
        with self.guard(f"reading {name}"):
            return float(self.scene.controls.param_value(name))
        return None

    def set_param(self, name: str, value: float) -> None:
        try:
            value = float(value)
        except (TypeError, ValueError):
            self.say(f"{name}: {value!r} is not a number")
            return
        applied = None
        with self.guard(f"setting {name}"):
            applied = self.scene.controls.set_param(name, value)
        if applied is not None and not (math.isfinite(value) and math.isclose(applied, value, rel_tol=1e-6)):
            self.say(f"{name}: {value:g} is out of range; using {applied:g}")

    def set_option(self, name: str, value: str) -> None:
        self.act(f"{name} {value}", self.scene.knobs.set_option, name, value, done=f"{name} {value}")

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

    def toggle_block_colors(self) -> None:
        """c: colour by CUDA block, or back to the colouring before it."""
        label = BLOCK_COLORS_KEY.label
        if self.color_mode == BLOCK_COLORS:
            self._leave_block_colors()
            self.say(f"{label}: colour by {self.scene.color_modes.get(self.color_mode, self.color_mode)}")
            return
        if not self.gpu.ready(label, self.spec.block_colors, "CUDA block colouring"):
            return
        reason = self.gpu.block_colors_reason()
        if reason is not None or BLOCK_COLORS not in self.scene.color_modes:
            self.say(f"{label}: {reason or 'the scene offers no CUDA block colouring now'}")
            return
        self._color_before_block = self.color_mode
        self.color_mode = BLOCK_COLORS
        self.say(f"{label}: colour by CUDA block")

    def _leave_block_colors(self) -> None:
        modes = self.scene.color_modes
        fallback = next((m for m in modes if m != BLOCK_COLORS), "")
        previous = self._color_before_block
        self.color_mode = previous if previous in modes and previous != BLOCK_COLORS else fallback

    def set_color_range(self, mode: str, span: tuple[float, float] | None) -> None:
        """Fix the colour range of ``mode`` (None: automatic, the data's own)."""
        if span is None:
            done = "colour range automatic: the data's own"
        elif mode not in self.scene.color_scales.ranges:
            done = f"colour range fixed at {span[0]:.4g} .. {span[1]:.4g}"
        else:
            done = None  # dragging a fixed range: the panel shows it
        self.act("colour range", self.scene.color_scales.set, mode, span, done=done)

    def replace_scene(self, scene) -> None:
        self.scene = scene
        first = next(iter(scene.color_modes), "")
        if self.color_mode not in scene.color_modes:
            self.color_mode = first
        if self._color_before_block not in scene.color_modes:
            self._color_before_block = first
        self.step_rate.clear()

    def watch_scene(self) -> None:
        """Once a frame: report what the scene changed on its own (a GPU failure, block colours
        no longer meaningful), and take in a save of the user's kernel."""
        self.kernel.watch()
        error = self.scene.gpu_error
        if error and error != self._reported_gpu_error:
            self.say(f"GPU disabled, physics on the CPU: {error}")
        self._reported_gpu_error = error
        if self.color_mode == BLOCK_COLORS and not self.scene.knobs.block_colors_available():
            self._leave_block_colors()
            if not error:
                self.say(f"CUDA block colouring off: no CUDA kernel handles the {self.words.unit} now")

    def switch_scene(self, name: str) -> None:
        """Replace the scene by a fresh one of another kind, on the same backend, running: a pause belongs
        to the scene it stopped, and one carried over would show the new scene stuck at its first step."""
        if name == self.spec.name:
            return
        with self.guard(f"scene {name}"):
            from sim.registry import create_scene

            old, old_mode = self.scene, self.color_mode
            make = self.new_scene or (lambda name, backend: create_scene(name, backend=backend))
            self.replace_scene(make(name, self.scene.backend))
            self.paused = False
            old.knobs.drop()  # a user's kernel replaces a stage of the scene it was loaded for
            self.say(f"scene {name}")
            if self.on_switch is not None:
                self.on_switch(old, old_mode)

    # --- the pointer tool -------------------------------------------------------------------------
    def pointer(self, event: PointerEvent) -> None:
        """A pointer event for the scene (its tool, or a plot's drag point)."""
        self.act(f"{event.kind} {event.target}".strip() if event.target else "pointer", self.scene.pointer, event)

    def set_tool(self, on: bool) -> None:
        tool = self.spec.tool
        self.act(
            "tool",
            self.scene.controls.set_tool,
            on,
            done=lambda: f"{tool.name} tool {'on' if on else 'off'}: {tool.help}",
        )

    def set_tool_value(self, name: str, value: float) -> None:
        self.act(f"setting {name}", self.scene.controls.set_tool_value, name, value)
