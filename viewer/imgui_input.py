"""Forward pyglet input events to Dear ImGui's IO queue."""

from __future__ import annotations

from imgui_bundle import imgui
from pyglet.window import key, mouse

_NAMED_KEYS = {
    key.TAB: imgui.Key.tab, key.BACKSPACE: imgui.Key.backspace, key.RETURN: imgui.Key.enter,
    key.ENTER: imgui.Key.enter, key.ESCAPE: imgui.Key.escape, key.INSERT: imgui.Key.insert,
    key.DELETE: imgui.Key.delete, key.SPACE: imgui.Key.space, key.LEFT: imgui.Key.left_arrow,
    key.RIGHT: imgui.Key.right_arrow, key.UP: imgui.Key.up_arrow, key.DOWN: imgui.Key.down_arrow,
    key.PAGEUP: imgui.Key.page_up, key.PAGEDOWN: imgui.Key.page_down, key.HOME: imgui.Key.home,
    key.END: imgui.Key.end, key.NUM_ENTER: imgui.Key.keypad_enter,
    key.MINUS: imgui.Key.minus, key.PERIOD: imgui.Key.period, key.COMMA: imgui.Key.comma,
    key.LCTRL: imgui.Key.left_ctrl, key.RCTRL: imgui.Key.right_ctrl,
    key.LSHIFT: imgui.Key.left_shift, key.RSHIFT: imgui.Key.right_shift,
    key.LALT: imgui.Key.left_alt, key.RALT: imgui.Key.right_alt,
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

    def mouse_button(self, x: float, y: float, button: int, down: bool) -> None:
        io = self._io()
        io.add_mouse_pos_event(float(x), float(self.window_height() - y))
        if button in _MOUSE_BUTTONS:
            io.add_mouse_button_event(_MOUSE_BUTTONS[button], down)

    def scroll(self, scroll_x: float, scroll_y: float) -> None:
        self._io().add_mouse_wheel_event(float(scroll_x), float(scroll_y))

    def key(self, symbol: int, modifiers: int, down: bool) -> None:
        io = self._io()
        io.add_key_event(imgui.Key.mod_ctrl, bool(modifiers & key.MOD_CTRL))
        io.add_key_event(imgui.Key.mod_shift, bool(modifiers & key.MOD_SHIFT))
        io.add_key_event(imgui.Key.mod_alt, bool(modifiers & key.MOD_ALT))
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

    @property
    def wants_keyboard(self) -> bool:
        return bool(self._io().want_capture_keyboard)
