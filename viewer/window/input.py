"""Input: pyglet events forwarded to Dear ImGui's IO queue, and pointer gestures routed to the camera
or to the scene's tool.

Routing (``gesture``): the panel (ImGui wanting the mouse) takes what is over it. Otherwise, when
the scene has a tool (``spec.tool``) and it is on, left and right drags go to the tool, while
middle drag and shift + left drag pan and the wheel zooms; when the tool is off (or the scene has
none) the camera keeps its gestures: left drag orbits (pans a 2D view), right drag zooms, middle
or shift + left drag pans, and ctrl + left drag reaches the tool when there is one.
``scene_point`` turns a pixel into scene coordinates: the ray through it and its point on the
z = 0 plane.
"""

from __future__ import annotations

import math

import numpy as np
from imgui_bundle import imgui
from pyglet.window import key, mouse

from viewer.render.camera import OrbitCamera

_NAMED_KEYS = {
    key.TAB: imgui.Key.tab,
    key.BACKSPACE: imgui.Key.backspace,
    key.RETURN: imgui.Key.enter,
    key.ENTER: imgui.Key.enter,
    key.ESCAPE: imgui.Key.escape,
    key.INSERT: imgui.Key.insert,
    key.DELETE: imgui.Key.delete,
    key.SPACE: imgui.Key.space,
    key.LEFT: imgui.Key.left_arrow,
    key.RIGHT: imgui.Key.right_arrow,
    key.UP: imgui.Key.up_arrow,
    key.DOWN: imgui.Key.down_arrow,
    key.PAGEUP: imgui.Key.page_up,
    key.PAGEDOWN: imgui.Key.page_down,
    key.HOME: imgui.Key.home,
    key.END: imgui.Key.end,
    key.NUM_ENTER: imgui.Key.keypad_enter,
    key.MINUS: imgui.Key.minus,
    key.PERIOD: imgui.Key.period,
    key.COMMA: imgui.Key.comma,
    key.LCTRL: imgui.Key.left_ctrl,
    key.RCTRL: imgui.Key.right_ctrl,
    key.LSHIFT: imgui.Key.left_shift,
    key.RSHIFT: imgui.Key.right_shift,
    key.LALT: imgui.Key.left_alt,
    key.RALT: imgui.Key.right_alt,
}
_LETTER_KEYS = {getattr(key, c.upper()): getattr(imgui.Key, c) for c in "abcdefghijklmnopqrstuvwxyz"}
_DIGIT_KEYS = {getattr(key, f"_{d}"): getattr(imgui.Key, f"_{d}") for d in "0123456789"}
_F_KEYS = {getattr(key, f"F{i}"): getattr(imgui.Key, f"f{i}") for i in range(1, 13)}
KEY_MAP = {**_NAMED_KEYS, **_LETTER_KEYS, **_DIGIT_KEYS, **_F_KEYS}

_MOUSE_BUTTONS = {mouse.LEFT: 0, mouse.RIGHT: 1, mouse.MIDDLE: 2}


class ImGuiInput:
    """Feeds one ImGui context; call its methods from the window's event handlers.

    ``window_height()`` converts pyglet's bottom-up y into ImGui's top-down y.
    """

    def __init__(self, gui, window_height):
        self.gui = gui
        self.window_height = window_height

    def _io(self):
        self.gui.make_current()
        return imgui.get_io()

    def mouse_position(self, x: float, y: float) -> None:
        self._io().add_mouse_pos_event(float(x), float(self.window_height() - y))

    def mouse_button(self, x: float, y: float, button: int, down: bool, modifiers: int = 0) -> None:
        io = self._io()
        _set_modifiers(io, modifiers)  # ctrl + click types into a slider: ImGui must see the ctrl
        io.add_mouse_pos_event(float(x), float(self.window_height() - y))
        if button in _MOUSE_BUTTONS:
            io.add_mouse_button_event(_MOUSE_BUTTONS[button], down)

    def scroll(self, scroll_x: float, scroll_y: float) -> None:
        self._io().add_mouse_wheel_event(float(scroll_x), float(scroll_y))

    def key(self, symbol: int, modifiers: int, down: bool) -> None:
        io = self._io()
        _set_modifiers(io, modifiers, symbol, down)
        if symbol in KEY_MAP:
            io.add_key_event(KEY_MAP[symbol], down)

    def text(self, text: str) -> None:
        io = self._io()
        for char in text:
            io.add_input_character(ord(char))

    def focus(self, focused: bool) -> None:
        self._io().add_focus_event(focused)

    @property
    def wants_mouse(self) -> bool:
        return bool(self._io().want_capture_mouse)

    def wants_mouse_at(self, x: float, y: float) -> bool:
        """Whether the panel (or another ImGui window) takes a mouse event at window point (x, y),
        decided from where the event is, not from the last frame's flag."""
        return self.gui.takes_mouse_at(float(x), float(self.window_height() - y))

    @property
    def wants_keyboard(self) -> bool:
        return bool(self._io().want_capture_keyboard)


_MODIFIER_KEYS = (
    (imgui.Key.mod_ctrl, key.MOD_CTRL, (key.LCTRL, key.RCTRL)),
    (imgui.Key.mod_shift, key.MOD_SHIFT, (key.LSHIFT, key.RSHIFT)),
    (imgui.Key.mod_alt, key.MOD_ALT, (key.LALT, key.RALT)),
)


def _set_modifiers(io, modifiers: int, symbol: int | None = None, down: bool = False) -> None:
    """ImGui's ctrl, shift and alt as held now. X reports the modifiers held before the event, so the
    press or release of a modifier key itself decides that one."""
    for mod, flag, symbols in _MODIFIER_KEYS:
        io.add_key_event(mod, down if symbol in symbols else bool(modifiers & flag))


ORBIT, PAN, ZOOM, TOOL = "orbit", "pan", "zoom", "tool"
BUTTON_NAMES = {mouse.LEFT: "left", mouse.RIGHT: "right", mouse.MIDDLE: "middle"}


def gesture(button: int, modifiers: int, has_tool: bool, tool_on: bool, can_orbit: bool) -> str | None:
    """What a press of ``button`` starts over the view (not over the panel): a camera gesture or TOOL."""
    shift, ctrl = bool(modifiers & key.MOD_SHIFT), bool(modifiers & key.MOD_CTRL)
    if button == mouse.MIDDLE:
        return PAN
    if button == mouse.LEFT and shift:
        return PAN
    if has_tool and (tool_on and button in (mouse.LEFT, mouse.RIGHT) or button == mouse.LEFT and ctrl):
        return TOOL
    if button == mouse.LEFT:
        return ORBIT if can_orbit else PAN
    if button == mouse.RIGHT:
        return ZOOM
    return None


def scene_point(
    camera: OrbitCamera, x: float, y: float, size: tuple[float, float], covered_right: float = 0.0
) -> tuple[float, float, np.ndarray, np.ndarray]:
    """(x, y on the z = 0 plane, ray origin, ray direction) under the pixel (x, y), y up from the
    bottom, of a view of ``size`` whose right ``covered_right`` pixels hold the panel. A ray parallel
    to the plane gives NaN for x and y."""
    width, height = max(size[0], 1.0), max(size[1], 1.0)
    ndc_x, ndc_y = 2.0 * x / width - 1.0, 2.0 * y / height - 1.0
    origin, direction = camera.ray(ndc_x, ndc_y, width / height, covered_right / width)
    if abs(direction[2]) < 1e-12:
        return math.nan, math.nan, origin, direction
    t = -origin[2] / direction[2]
    hit = origin + t * direction
    return float(hit[0]), float(hit[1]), origin, direction
