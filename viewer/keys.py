"""The key bindings: one table that both the key dispatcher and the F1 help read."""

from __future__ import annotations

from dataclasses import dataclass

from pyglet.window import key, mouse  # re-exported: import them from here, after viewer's pyglet options

__all__ = [
    "BINDINGS", "MOUSE_HELP", "KeyBinding", "dispatch_key", "find_binding", "key", "key_label", "mouse",
]


@dataclass(frozen=True)
class KeyBinding:
    label: str  # as shown in the help
    symbol: int  # pyglet key symbol
    shift: bool | None  # True: only with shift, False: only without, None: either
    action: str  # method name on the viewer or its controller
    help: str


BINDINGS: tuple[KeyBinding, ...] = (
    KeyBinding("Space", key.SPACE, None, "toggle_pause", "pause / resume the simulation"),
    KeyBinding("s", key.S, False, "single_step", "pause and advance one physics step"),
    KeyBinding("r", key.R, False, "reset", "reload the current preset (same seed)"),
    KeyBinding("t", key.T, False, "load_preset_t", "balls benchmark t: drop 8575 balls (five tiers)"),
    KeyBinding("T", key.T, True, "load_preset_T", "balls benchmark T: drop 1715 balls (one tier)"),
    KeyBinding("F4", key.F4, None, "toggle_cuda_proximity", "balls: CUDA proximity search on / off (GPU)"),
    KeyBinding("a", key.A, False, "toggle_gpu_physics", "physics on CPU / GPU"),
    KeyBinding("v", key.V, False, "toggle_verify",
               "verify the GPU against the CPU, differing balls / particles drawn red (GPU)"),
    KeyBinding("c", key.C, False, "toggle_block_colors", "colour by CUDA block on / off (GPU)"),
    KeyBinding("q", key.Q, False, "cycle_variant", "next kernel variant: balls proximity, particles forces (GPU)"),
    KeyBinding("Q", key.Q, True, "cycle_block_size", "next CUDA block size (GPU)"),
    KeyBinding("Home", key.HOME, None, "reset_camera", "camera back to the default view"),
    KeyBinding("F1", key.F1, None, "toggle_help", "show / hide this help"),
    KeyBinding("F12", key.F12, None, "screenshot", "save a PNG of the window into ./screenshots"),
    KeyBinding("Esc", key.ESCAPE, None, "quit", "quit"),
)

MOUSE_HELP: tuple[tuple[str, str], ...] = (
    ("left drag", "orbit the camera (2D scenes: pan)"),
    ("right drag / wheel", "zoom"),
    ("middle drag / shift + left drag", "pan"),
)


def key_label(action: str) -> str:
    """The key bound to ``action``, as the help shows it (for messages such as "q: ...")."""
    return next((b.label for b in BINDINGS if b.action == action), action)


def find_binding(symbol: int, modifiers: int) -> KeyBinding | None:
    shift = bool(modifiers & key.MOD_SHIFT)
    for binding in BINDINGS:
        if binding.symbol == symbol and (binding.shift is None or binding.shift == shift):
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
            action()
            return binding
    raise AttributeError(f"no target implements {binding.action!r} for key {binding.label}")
