"""The viewer as a newcomer meets it, through a real window (Xvfb, Mesa): the wheel over the panel never
zooms the view and a press there drags no camera, the count slider changes nothing until Apply or Enter and
typing into it reaches no key binding, Esc closes or unpins before it quits (a second Esc), painting waits
until the tool is chosen. The panel's scene switch, message line and checkboxes are in
test_reliability_panel.py, the items and the tool as drawn in test_reliability_drawing.py."""

import numpy as np
import pytest
from imgui_bundle import imgui

from sim import create_scene
from viewer.keys import key, mouse

WIDTH, HEIGHT = 900, 640


def _display_problem():
    from viewer.window.display import display_problem

    return display_problem()


_PROBLEM = _display_problem()
pytestmark = [pytest.mark.window, pytest.mark.skipif(_PROBLEM is not None, reason=f"needs a display: {_PROBLEM}")]


@pytest.fixture
def window(tmp_path):
    from viewer.window.app import Viewer

    opened = []

    def make(scene, width=WIDTH, height=HEIGHT, paused=True):
        v = Viewer(scene, width, height, max_fps=None, screenshot_dir=tmp_path)
        v.controller.paused = paused
        opened.append(v)
        for _ in range(3):
            v.tick()
        return v

    yield make
    for v in opened:
        v.close()


def _press(v, symbol, modifiers=0, text=None):
    """A key pressed and released (with the text it types), then a frame."""
    v.window.dispatch_event("on_key_press", symbol, modifiers)
    if text is not None:
        v.window.dispatch_event("on_text", text)
    v.window.dispatch_event("on_key_release", symbol, modifiers)
    v.tick()


def _click(v, x, y, button=mouse.LEFT, modifiers=0):
    """Hover (x, y) (window points, y up), then press and release there, a frame after each."""
    v.window.dispatch_event("on_mouse_motion", x, y, 0, 0)
    v.tick()
    v.window.dispatch_event("on_mouse_press", x, y, button, modifiers)
    v.tick()
    v.window.dispatch_event("on_mouse_release", x, y, button, modifiers)
    v.tick()


@pytest.fixture
def count_slider(monkeypatch):
    """The count slider's rectangle as last drawn: (x0, y0, x1, y1) in window points, y up."""
    real = imgui.slider_int
    found = {}

    def spy(label, *args, **kwargs):
        result = real(label, *args, **kwargs)
        if label == "##count":
            lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
            height = imgui.get_io().display_size.y
            found["rect"] = (lo.x, height - hi.y, hi.x, height - lo.y)
        return result

    monkeypatch.setattr(imgui, "slider_int", spy)
    return found


# --- 7: the wheel over the panel ----------------------------------------------------------------


def test_the_first_wheel_over_the_panel_does_not_zoom_the_view(window):
    v = window(create_scene("particles", n=300))
    v.window.dispatch_event("on_mouse_motion", 300, 300, 0, 0)
    v.tick()
    distance = v.camera.distance
    x = WIDTH - 100  # over the panel
    # Moved onto the panel and wheeled before a frame could note that the pointer is over it.
    v.window.dispatch_event("on_mouse_motion", x, 300, 0, 0)
    v.window.dispatch_event("on_mouse_scroll", x, 300, 0, -1)
    v.tick()
    assert v.camera.distance == distance, "the wheel over the panel zoomed the view"
    v.window.dispatch_event("on_mouse_motion", 300, 300, 0, 0)
    v.window.dispatch_event("on_mouse_scroll", 300, 300, 0, -1)
    v.tick()
    assert v.camera.distance > distance, "back over the view, the wheel zooms at once"


def test_a_press_just_moved_onto_the_panel_starts_no_camera_drag(window):
    v = window(create_scene("particles", n=300))
    v.window.dispatch_event("on_mouse_motion", 300, 300, 0, 0)
    v.tick()
    target = v.camera.target.copy()
    x = WIDTH - 100
    v.window.dispatch_event("on_mouse_motion", x, 300, 0, 0)
    v.window.dispatch_event("on_mouse_press", x, 300, mouse.LEFT, 0)
    v.window.dispatch_event("on_mouse_drag", x - 200, 300, -200, 0, mouse.LEFT, 0)
    v.window.dispatch_event("on_mouse_release", x - 200, 300, mouse.LEFT, 0)
    v.tick()
    np.testing.assert_array_equal(v.camera.target, target)


# --- 10: the count slider and typing into it ---------------------------------------------------------


def test_a_stray_click_on_the_count_slider_reloads_nothing_until_apply(window, count_slider):
    v = window(create_scene("heat", preset="plate", n=4096))
    n = v.scene.n
    x0, y0, x1, y1 = count_slider["rect"]
    _click(v, x0 + 3, (y0 + y1) / 2)  # the slider's far left: the smallest count
    v.tick()
    assert v.scene.n == n and "loaded preset" not in v.message, "one click reloaded the preset"
    assert v.panel.scene_section._count_choice < n, "the click moved the choice"
    v.tick()
    assert v.scene.n == n


def test_ctrl_click_typing_sets_the_count_on_enter_and_reaches_no_key(window, count_slider):
    v = window(create_scene("particles", n=300))
    v.bookmarks["1"] = {"bogus": True}  # a restore would say so in the message line
    x0, y0, x1, y1 = count_slider["rect"]
    x, y = (x0 + x1) / 2, (y0 + y1) / 2
    v.window.dispatch_event("on_mouse_motion", x, y, 0, 0)
    v.tick()
    # As X reports it: the ctrl key's own press carries no ctrl yet, the click does.
    v.window.dispatch_event("on_key_press", key.LCTRL, 0)
    v.tick()
    _click(v, x, y, modifiers=key.MOD_CTRL)
    v.window.dispatch_event("on_key_release", key.LCTRL, key.MOD_CTRL)
    v.tick()
    assert v.scene.n == 300, "ctrl + click is not a click that moves the slider"
    message = v.message
    for digit in "1500":
        _press(v, getattr(key, f"_{digit}"), text=digit)
        assert v.message == message, f"{digit} reached a key binding: {v.message}"
    assert v.scene.n == 300, "typing alone applies nothing"
    _press(v, key.RETURN)
    v.tick()
    assert v.scene.n == 1500 and "1,500" in v.message


# --- 6: Esc closes, unpins, then quits on a second Esc; painting waits for the tool -----------------------


def test_esc_closes_the_help_first_and_quits_only_on_a_second_press(window):
    v = window(create_scene("particles", n=300))
    _press(v, key.F1)
    assert v.show_help
    _press(v, key.ESCAPE)
    assert not v.show_help and not v.closed and "help closed" in v.message
    _press(v, key.ESCAPE)
    assert not v.closed and "Esc again" in v.message, "one Esc with nothing open asks, it does not quit"
    v.window.dispatch_event("on_key_press", key.ESCAPE, 0)
    assert v.tick() is False and v.closed


def test_a_lone_esc_long_ago_does_not_arm_the_quit(window, monkeypatch):
    import viewer.window.actions as actions

    v = window(create_scene("particles", n=300))
    _press(v, key.ESCAPE)
    monkeypatch.setattr(actions, "QUIT_ESCAPE_SECONDS", 0.0)  # as if the second Esc came much later
    _press(v, key.ESCAPE)
    assert not v.closed and "Esc again" in v.message


def test_a_plain_click_on_the_heat_plate_pins_a_cell_and_paints_nothing(window):
    v = window(create_scene("heat", preset="plate", n=4096))
    assert not v.scene.controls.tool_on, "the paint tool starts off"
    before = v.scene.host_field().copy()
    _click(v, 200, 300)
    np.testing.assert_array_equal(v.scene.host_field(), before)
    assert v.pointing.picking.pinned is not None and "pinned" in v.message
    _press(v, key.ESCAPE)
    assert v.pointing.picking.pinned is None and not v.closed, "Esc unpinned the cell"
    # Ctrl + drag paints with the tool off; choosing the tool makes a plain drag paint.
    v.window.dispatch_event("on_mouse_press", 200, 300, mouse.LEFT, key.MOD_CTRL)
    v.window.dispatch_event("on_mouse_release", 200, 300, mouse.LEFT, key.MOD_CTRL)
    v.tick()
    painted = v.scene.host_field().copy()
    assert not np.array_equal(painted, before)
    v.controller.set_tool(True)
    _click(v, 120, 200)
    assert not np.array_equal(v.scene.host_field(), painted)
