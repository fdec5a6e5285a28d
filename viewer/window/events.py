"""The window's pyglet event handlers: keys to the key table (and to ImGui), the mouse to ImGui,
the camera, the scene's tool or the picking (a click pins). ``WindowEvents`` is pushed onto the
viewer's window; it owns the gesture of the button held down (``drag``)."""

from __future__ import annotations

from collections.abc import Callable

from sim.contract import PointerEvent
from viewer import pyglet
from viewer.keys import KeyMap, key
from viewer.window.input import BUTTON_NAMES, ORBIT, PAN, TOOL, ZOOM, gesture, scene_point

EVENT_HANDLED = pyglet.event.EVENT_HANDLED


class WindowEvents:
    """``imgui_input``: ImGui's IO; ``pointing``: the picking; ``viewpoint``: the camera the drags move;
    ``geometry``: the window's sizes; ``controller``: the scene's tool; ``actions``: Esc while busy and closing
    the window; ``keys``: the key table bound to the controller and the actions; ``busy()``: whether the
    scene's first frame runs on the worker thread (only quitting then)."""

    def __init__(
        self, imgui_input, pointing, viewpoint, geometry, controller, actions, keys: KeyMap, busy: Callable[[], bool]
    ):
        self.input, self.pointing, self.viewpoint, self.geometry = imgui_input, pointing, viewpoint, geometry
        self.controller, self.actions, self.keys = controller, actions, keys
        self._busy = busy
        self.drag: str | None = None  # the gesture of the button held down (a camera move or TOOL)
        self.tool_button = ""  # the button of a tool drag

    # --- pyglet events -----------------------------------------------------------------------
    def on_key_press(self, symbol: int, modifiers: int):
        self.input.key(symbol, modifiers, True)
        if self.input.wants_keyboard:
            return EVENT_HANDLED  # typing into a widget; Esc leaves the widget, not the viewer
        if self._busy():
            if symbol == key.ESCAPE:
                self.actions.escape()
            return EVENT_HANDLED
        self.keys.press(symbol, modifiers)
        return EVENT_HANDLED  # also keeps pyglet from closing the window on Esc by itself

    def on_key_release(self, symbol: int, modifiers: int):
        self.input.key(symbol, modifiers, False)
        return EVENT_HANDLED

    def on_text(self, text: str):
        self.input.text(text)
        return EVENT_HANDLED

    def on_mouse_motion(self, x, y, dx, dy):
        self.input.mouse_position(x, y)
        self.pointing.pointer = (x, y)

    def on_mouse_leave(self, x, y):
        self.pointing.pointer = None

    def on_mouse_press(self, x, y, button, modifiers):
        wanted = self.input.wants_mouse_at(x, y)
        self.input.mouse_button(x, y, button, True, modifiers)
        self.pointing.pointer = (x, y)
        camera = self.viewpoint.camera
        if wanted or self.drag is not None or camera is None or self._busy():
            return
        scene = self.controller.scene
        tool = scene.spec.tool is not None
        self.drag = gesture(button, modifiers, tool, scene.controls.tool_on, camera.orbit_enabled)
        if button == pyglet.window.mouse.LEFT and self.drag != TOOL:
            self.pointing.pressed(x, y)  # a click (no drag) pins the item under the pointer
        if self.drag == TOOL:
            self.tool_button = BUTTON_NAMES[button]
            self._send_pointer("press", x, y, modifiers)

    def on_mouse_release(self, x, y, button, modifiers):
        self.input.mouse_button(x, y, button, False, modifiers)
        if button == pyglet.window.mouse.LEFT:
            self.pointing.released(x, y, self.drag == TOOL)
        if self.drag == TOOL:
            self._send_pointer("release", x, y, modifiers)
        self.drag = None

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self.input.mouse_position(x, y)
        self.pointing.pointer = (x, y)
        camera = self.viewpoint.camera
        if camera is None:
            return
        if self.drag == ORBIT:
            camera.orbit(dx, dy)
        elif self.drag == PAN:
            camera.pan(dx, dy, self.geometry.size()[1])
        elif self.drag == ZOOM:
            camera.zoom(1.01**-dy)
        elif self.drag == TOOL:
            self._send_pointer("drag", x, y, modifiers)

    def _send_pointer(self, kind: str, x: float, y: float, modifiers: int) -> None:
        """A tool event at window point (x, y), in scene coordinates (3D views: with the ray)."""
        camera, geometry = self.viewpoint.camera, self.geometry
        fb_size = geometry.fb_size()
        scale = geometry.fb_scale(fb_size)
        sx, sy, origin, direction = scene_point(camera, x * scale, y * scale, fb_size, geometry.covered_right(fb_size))
        ray = (
            {"origin": tuple(map(float, origin)), "direction": tuple(map(float, direction))}
            if camera.orbit_enabled
            else {}
        )
        self.controller.pointer(
            PointerEvent(
                kind, sx, sy, self.tool_button, bool(modifiers & key.MOD_SHIFT), bool(modifiers & key.MOD_CTRL), **ray
            )
        )

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.input.mouse_position(x, y)
        wanted = self.input.wants_mouse_at(x, y)
        self.input.scroll(scroll_x, scroll_y)
        camera = self.viewpoint.camera
        if not wanted and camera is not None:
            camera.zoom(0.9**scroll_y)

    def on_resize(self, width, height):
        return EVENT_HANDLED  # sizes are read every frame; pyglet's own projection is not used

    def on_activate(self):
        self.input.focus(True)

    def on_deactivate(self):
        self.input.focus(False)

    def on_close(self):
        self.actions.quit()
        return EVENT_HANDLED
