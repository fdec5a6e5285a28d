"""The key bindings: the viewer's own keys in one table, and the scenes' keys from their specs; the
key dispatcher and the F1 help both read them.

A scene's keys come from its ``SceneSpec``: a preset's ``key`` loads that preset (the balls' t and
T), a toggle's ``key`` switches it (the balls' F4). Every registered scene's keys are known, so a
key of another scene says that it does not apply here instead of doing nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from pyglet.window import key, mouse  # re-exported: import them from here, after viewer's pyglet options

__all__ = [
    "BINDINGS",
    "MOUSE_HELP",
    "KeyBinding",
    "KeyMap",
    "KeyTargets",
    "bindings_for",
    "find_binding",
    "key",
    "key_symbol",
    "mouse",
    "scene_bindings",
]


@dataclass(frozen=True)
class KeyTargets:
    """What keys act on: the ``controller`` (its ``gpu`` switches too) and the window's ``actions``
    (``viewer.window.actions.WindowActions``; None without a window)."""

    controller: Any
    window: Any = None


Action = Callable[[], object]


@dataclass(frozen=True)
class KeyBinding:
    label: str  # as shown in the help
    symbol: int  # pyglet key symbol
    shift: bool | None  # True: only with shift, False: only without, None: either
    help: str
    bind: Callable[[KeyTargets], Action | None]  # the key's action on the targets; None: not here (no window)
    ctrl: bool | None = None  # True: only with ctrl, False: only without, None: either
    shown: bool = True  # listed in the F1 help (the 2..4 of "1…4" are not)


def _window(action: Callable[[Any], Action]) -> Callable[[KeyTargets], Action | None]:
    """A window key: its action on the window's actions, none without a window."""
    return lambda t: action(t.window) if t.window is not None else None


# The keys whose label the switches' messages name ("v: verification off").
GPU_PHYSICS_KEY = KeyBinding("a", key.A, False, "physics on CPU / GPU", lambda t: t.controller.gpu.toggle_gpu_physics)
VERIFY_KEY = KeyBinding(
    "v",
    key.V,
    False,
    "verify the GPU against the CPU, what differs marked (GPU)",
    lambda t: t.controller.gpu.toggle_verify,
)
BLOCK_COLORS_KEY = KeyBinding(
    "c", key.C, False, "colour by CUDA block on / off (GPU)", lambda t: t.controller.toggle_block_colors
)
VARIANT_KEY = KeyBinding("q", key.Q, False, "next kernel variant (GPU)", lambda t: t.controller.gpu.cycle_variant)
BLOCK_SIZE_KEY = KeyBinding("Q", key.Q, True, "next CUDA block size (GPU)", lambda t: t.controller.gpu.cycle_block_size)

BINDINGS: tuple[KeyBinding, ...] = (
    KeyBinding("Space", key.SPACE, None, "pause / resume the simulation", lambda t: t.controller.toggle_pause),
    KeyBinding("s", key.S, False, "pause and advance one physics step", lambda t: t.controller.single_step),
    KeyBinding("r", key.R, False, "reload the current preset (same seed)", lambda t: t.controller.reset),
    GPU_PHYSICS_KEY,
    VERIFY_KEY,
    BLOCK_COLORS_KEY,
    VARIANT_KEY,
    BLOCK_SIZE_KEY,
    KeyBinding(
        "R",
        key.R,
        True,
        "record the view to an MP4 in ./recordings (again: stop)",
        _window(lambda w: w.toggle_recording),
    ),
    KeyBinding("Home", key.HOME, None, "camera back to the default view", _window(lambda w: w.reset_camera)),
    *(
        KeyBinding(
            "1…4" if n == "1" else n,
            getattr(key, f"_{n}"),
            None,
            "camera to bookmark 1…4",
            _window(lambda w, n=n: partial(w.restore_bookmark, n)),
            ctrl=False,
            shown=n == "1",
        )
        for n in "1234"
    ),
    *(
        KeyBinding(
            "Ctrl+1…4" if n == "1" else f"Ctrl+{n}",
            getattr(key, f"_{n}"),
            None,
            "save the camera as bookmark 1…4 (kept with the settings)",
            _window(lambda w, n=n: partial(w.save_bookmark, n)),
            ctrl=True,
            shown=n == "1",
        )
        for n in "1234"
    ),
    KeyBinding("F1", key.F1, None, "show / hide this help", _window(lambda w: w.toggle_help)),
    KeyBinding("F11", key.F11, None, "full screen on / off", _window(lambda w: w.toggle_fullscreen)),
    KeyBinding("F12", key.F12, None, "save a PNG of the window into ./screenshots", _window(lambda w: w.screenshot)),
    KeyBinding(
        "Esc", key.ESCAPE, None, "close the help, else unpin, else quit (a second Esc)", _window(lambda w: w.escape)
    ),
)

MOUSE_HELP: tuple[tuple[str, str], ...] = (
    ("left drag", "orbit the camera (2D views: pan)"),
    ("right drag / wheel", "zoom"),
    ("middle drag / shift + left drag", "pan"),
    ("tool on: left / right drag", "the scene's tool (the panel's Tool section)"),
    ("tool off: ctrl + left drag", "the scene's tool"),
)


def key_symbol(name: str) -> tuple[int, bool | None]:
    """(pyglet symbol, shift) of a key name in a spec: "t" (no shift), "T" (shift), "F4", "HOME"."""
    if len(name) == 1 and name.isalpha():
        return getattr(key, name.upper()), name.isupper()
    if len(name) == 1 and name.isdigit():
        return getattr(key, f"_{name}"), None
    symbol = getattr(key, name.upper(), None)
    if not isinstance(symbol, int):
        raise ValueError(f"unknown key name {name!r}")
    return symbol, None


def scene_bindings(spec) -> tuple[KeyBinding, ...]:
    """The keys a scene's spec declares: its presets' and its toggles'."""
    found = []
    for preset in spec.presets:
        if preset.key:
            found.append((preset.key, f"{spec.name}: load preset {preset.name} ({preset.description})"))
    for toggle in spec.toggles:
        if toggle.key:
            gpu = " (GPU)" if toggle.gpu_only else ""
            found.append((toggle.key, f"{spec.name}: {toggle.label} on / off{gpu}"))
    return tuple(KeyBinding(label, *key_symbol(label), help, _scene_key(label)) for label, help in found)


def _scene_key(label: str) -> Callable[[KeyTargets], Action]:
    """Every scene key goes to the controller: it loads the preset, flips the toggle or says whose key it is."""
    return lambda t: partial(t.controller.scene_key, label)


def _all_scene_bindings() -> tuple[KeyBinding, ...]:
    from sim.registry import SCENES

    return tuple(b for spec in SCENES.values() for b in scene_bindings(spec))


def bindings_for(spec) -> tuple[KeyBinding, ...]:
    """The viewer's keys and the scene's own, as the help lists them."""
    return tuple(b for b in BINDINGS + scene_bindings(spec) if b.shown)


def _matches(binding: KeyBinding, symbol: int, shift: bool, ctrl: bool) -> bool:
    return (
        binding.symbol == symbol
        and (binding.shift is None or binding.shift == shift)
        and (binding.ctrl is None or binding.ctrl == ctrl)
    )


def find_binding(symbol: int, modifiers: int) -> KeyBinding | None:
    """The viewer's key, else any registered scene's key (the controller says whether it applies)."""
    shift, ctrl = bool(modifiers & key.MOD_SHIFT), bool(modifiers & key.MOD_CTRL)
    for binding in BINDINGS + _all_scene_bindings():
        if _matches(binding, symbol, shift, ctrl):
            return binding
    return None


class KeyMap:
    """The key table bound to what keys act on, once: each key of the viewer and of every registered scene to
    its callable (a window key only with a window)."""

    def __init__(self, controller, window=None):
        targets = KeyTargets(controller, window)
        bound = ((binding, binding.bind(targets)) for binding in BINDINGS + _all_scene_bindings())
        self.bound: tuple[tuple[KeyBinding, Action], ...] = tuple((b, a) for b, a in bound if a is not None)

    def press(self, symbol: int, modifiers: int) -> KeyBinding | None:
        """Run the action of the key pressed; returns its binding, None when no key here has it."""
        shift, ctrl = bool(modifiers & key.MOD_SHIFT), bool(modifiers & key.MOD_CTRL)
        for binding, action in self.bound:
            if _matches(binding, symbol, shift, ctrl):
                action()
                return binding
        return None
