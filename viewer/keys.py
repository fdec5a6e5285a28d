"""The key bindings: the viewer's own keys in one table, and the scenes' keys from their specs; the
key dispatcher and the F1 help both read them.

A scene's keys come from its ``SceneSpec``: a preset's ``key`` loads that preset (the balls' t and
T), a toggle's ``key`` switches it (the balls' F4). Every registered scene's keys are known, so a
key of another scene says that it does not apply here instead of doing nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyglet.window import key, mouse  # re-exported: import them from here, after viewer's pyglet options

__all__ = [
    "BINDINGS", "MOUSE_HELP", "KeyBinding", "bindings_for", "dispatch_key", "find_binding", "key", "key_label",
    "key_symbol", "mouse", "scene_bindings",
]


@dataclass(frozen=True)
class KeyBinding:
    label: str  # as shown in the help
    symbol: int  # pyglet key symbol
    shift: bool | None  # True: only with shift, False: only without, None: either
    action: str  # method name on the viewer, its controller or the controller's GPU switches
    help: str
    arg: str | None = None  # passed to the action when set (a scene key's label, a bookmark's number)
    ctrl: bool | None = None  # True: only with ctrl, False: only without, None: either
    shown: bool = True  # listed in the F1 help (the 2..4 of "1…4" are not)


BINDINGS: tuple[KeyBinding, ...] = (
    KeyBinding("Space", key.SPACE, None, "toggle_pause", "pause / resume the simulation"),
    KeyBinding("s", key.S, False, "single_step", "pause and advance one physics step"),
    KeyBinding("r", key.R, False, "reset", "reload the current preset (same seed)"),
    KeyBinding("a", key.A, False, "toggle_gpu_physics", "physics on CPU / GPU"),
    KeyBinding("v", key.V, False, "toggle_verify", "verify the GPU against the CPU, what differs marked (GPU)"),
    KeyBinding("c", key.C, False, "toggle_block_colors", "colour by CUDA block on / off (GPU)"),
    KeyBinding("q", key.Q, False, "cycle_variant", "next kernel variant (GPU)"),
    KeyBinding("Q", key.Q, True, "cycle_block_size", "next CUDA block size (GPU)"),
    KeyBinding("R", key.R, True, "toggle_recording", "record the view to an MP4 in ./recordings (again: stop)"),
    KeyBinding("Home", key.HOME, None, "reset_camera", "camera back to the default view"),
    *(KeyBinding("1…4" if n == "1" else n, getattr(key, f"_{n}"), None, "restore_bookmark",
                 "camera to bookmark 1…4", arg=n, ctrl=False, shown=n == "1") for n in "1234"),
    *(KeyBinding("Ctrl+1…4" if n == "1" else f"Ctrl+{n}", getattr(key, f"_{n}"), None, "save_bookmark",
                 "save the camera as bookmark 1…4 (kept with the settings)", arg=n, ctrl=True, shown=n == "1")
      for n in "1234"),
    KeyBinding("F1", key.F1, None, "toggle_help", "show / hide this help"),
    KeyBinding("F11", key.F11, None, "toggle_fullscreen", "full screen on / off"),
    KeyBinding("F12", key.F12, None, "screenshot", "save a PNG of the window into ./screenshots"),
    KeyBinding("Esc", key.ESCAPE, None, "escape", "close the help, else unpin, else quit (a second Esc)"),
)
SCENE_KEY_ACTION = "scene_key"  # the controller's method for every scene key

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
    return tuple(KeyBinding(label, *key_symbol(label), SCENE_KEY_ACTION, help, arg=label) for label, help in found)


def _all_scene_bindings() -> tuple[KeyBinding, ...]:
    from sim.registry import SCENES

    return tuple(b for spec in SCENES.values() for b in scene_bindings(spec))


def bindings_for(spec) -> tuple[KeyBinding, ...]:
    """The viewer's keys and the scene's own, as the help lists them."""
    return tuple(b for b in BINDINGS + scene_bindings(spec) if b.shown)


def key_label(action: str) -> str:
    """The key bound to ``action``, as the help shows it (for messages such as "q: ...")."""
    return next((b.label for b in BINDINGS if b.action == action), action)


def _matches(binding: KeyBinding, symbol: int, shift: bool, ctrl: bool) -> bool:
    return (binding.symbol == symbol and (binding.shift is None or binding.shift == shift)
            and (binding.ctrl is None or binding.ctrl == ctrl))


def find_binding(symbol: int, modifiers: int) -> KeyBinding | None:
    """The viewer's key, else any registered scene's key (the controller says whether it applies)."""
    shift, ctrl = bool(modifiers & key.MOD_SHIFT), bool(modifiers & key.MOD_CTRL)
    for binding in BINDINGS + _all_scene_bindings():
        if _matches(binding, symbol, shift, ctrl):
            return binding
    return None


def dispatch_key(symbol: int, modifiers: int, *targets) -> KeyBinding | None:
    """Run the bound action on the first target that has it; returns the binding or None."""
    binding = find_binding(symbol, modifiers)
    if binding is None:
        return None
    for target in targets:
        action = getattr(target, binding.action, None)
        if action is not None:
            action() if binding.arg is None else action(binding.arg)
            return binding
    raise AttributeError(f"no target implements {binding.action!r} for key {binding.label}")
