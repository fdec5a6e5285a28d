"""The viewer as a newcomer meets it, through a real window (Xvfb, Mesa): a scene switch shows the
"compiling kernels…" box over the new scene, Esc closes or unpins before it quits (a second Esc),
painting waits until the tool is chosen, the wheel over the panel never zooms the view, the count
slider changes nothing until Apply or Enter and typing into it reaches no key binding, the message
line stays in sight, "camera follows" only where there is a camera, 2D discs stay visible, the push
tool shows its reach."""

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


# --- 5: a scene switch shows the new scene under the "compiling kernels…" box -------------------------


@pytest.fixture
def widgets(monkeypatch):
    """Where the scene combo and its entries were last drawn: label -> centre (window points, y up)."""
    found = {}

    def spying(real):
        def spy(label, *args, **kwargs):
            result = real(label, *args, **kwargs)
            lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
            found[label] = ((lo.x + hi.x) / 2, imgui.get_io().display_size.y - (lo.y + hi.y) / 2)
            return result

        return spy

    for name in ("begin_combo", "selectable"):
        monkeypatch.setattr(imgui, name, spying(getattr(imgui, name)))
    return found


def test_a_scene_switch_shows_the_new_scene_under_the_compiling_box(window, widgets, monkeypatch):
    import time

    import viewer.window.loop as loop
    from sim.heat.scene import HeatScene

    first_frame = HeatScene.advance_frame

    def slow_first_frame(self, most=None):  # as a cold numba compile does
        if self.steps == 0:
            time.sleep(0.6)
        return first_frame(self, most)

    monkeypatch.setattr(HeatScene, "advance_frame", slow_first_frame)
    boxes, flips = [], []
    real_box = loop.draw_compile_box

    def box(warm, display):
        boxes.append((v.scene.spec.name, v.view.kind, v.view.legend.label, warm.scene.spec.name))
        real_box(warm, display)

    monkeypatch.setattr(loop, "draw_compile_box", box)
    v = window(create_scene("particles", n=300), paused=False)
    old_legend = v.view.legend.label
    real_flip = v.window.flip

    def flip():
        flips.append((v.scene.spec.name, v.view.kind))
        real_flip()

    monkeypatch.setattr(v.window, "flip", flip)
    _click(v, *widgets["scene"])  # opens the combo
    v.window.dispatch_event("on_mouse_motion", *widgets["heat"], 0, 0)
    v.tick()
    v.window.dispatch_event("on_mouse_press", *widgets["heat"], mouse.LEFT, 0)
    v.tick()
    v.window.dispatch_event("on_mouse_release", *widgets["heat"], mouse.LEFT, 0)
    for _ in range(200):
        v.tick()
        if v.scene.spec.name == "heat" and v.loop.warm_up is None and boxes:
            break
        time.sleep(0.01)
    assert v.scene.spec.name == "heat" and v.scene.steps > 0
    assert len(boxes) >= 2, "the box showed while the new scene's first frame ran"
    assert {b[:2] for b in boxes} == {("heat", "field")}, "under the box: the new scene's own state"
    assert all(b[2] != old_legend for b in boxes), "the old scene's legend is gone at once"
    after = flips[next(i for i, f in enumerate(flips) if f[0] == "heat") :]
    assert all(kind == "field" for _, kind in after), "no frame shows the old view with the new scene"
    assert "kernels ready" in v.message


# --- 11: the message line, "camera follows", 2D discs, the push tool's reach ----------------------------


def test_the_message_line_stays_in_sight_while_the_panel_scrolls(window, widgets, monkeypatch):
    import viewer.panel.panel as panel
    from viewer.panel import style

    tops = []
    real = panel.wrapped

    def message(colour, text):
        real(colour, text)
        tops.append(imgui.get_item_rect_min().y)

    monkeypatch.setattr(panel, "wrapped", message)
    monkeypatch.setattr(style, "layout", {})  # every section at its default: more than 800 pixels of them
    v = window(create_scene("particles", n=300), 1280, 800)
    v.controller.say("a message that must stay in sight")
    v.tick()
    top, combo = tops[-1], widgets["scene"][1]
    x = 1280 - 150
    for _ in range(30):
        v.window.dispatch_event("on_mouse_motion", x, 400, 0, 0)
        v.window.dispatch_event("on_mouse_scroll", x, 400, 0, -5)
        v.tick()
    assert widgets["scene"][1] > combo + 100, "the sections scrolled (y up: the combo moved up)"
    assert tops[-1] == top < 60, "the message line stayed under the panel's title"


@pytest.fixture
def checkboxes(monkeypatch):
    """The labels of the checkboxes drawn in the last frame."""
    drawn = []
    real = imgui.checkbox

    def spy(label, *args, **kwargs):
        drawn.append(label)
        return real(label, *args, **kwargs)

    monkeypatch.setattr(imgui, "checkbox", spy)
    return drawn


@pytest.mark.parametrize(
    "name, options, follows",
    [("sdh", {"n": 500}, False), ("durbin", {}, False), ("heat", {"preset": "plate", "n": 4096}, True)],
)
def test_camera_follows_is_offered_only_where_the_view_has_a_camera(window, checkboxes, name, options, follows):
    v = window(create_scene(name, **options))
    picking = v.pointing.picking
    picking.hovered, picking.hovered_kind = 1, v.view.current.kind
    assert picking.pin(v.scene) == 1
    v.tick()
    checkboxes.clear()
    v.tick()
    assert v.pointing.pinned_report is not None, "the item is pinned"
    assert ("camera follows" in checkboxes) is follows


def _lit_pixels(gl, points_view, camera, size=(400, 400)) -> int:
    """Pixels the items cover in the middle of the view (away from a box's outline), drawn as the
    window draws them."""
    from viewer.render.offscreen import Offscreen
    from viewer.render.view import SceneView

    view, target = SceneView(gl), Offscreen(gl, size)
    try:
        view.show(_Scene(points_view), "")
        view.points.show_trough = view.points.show_floor = False  # the items alone
        view.draw(target.fbo, camera, size)
        pixels = target.read_rgb().astype(int)
    finally:
        target.release()
        view.release()
    middle = pixels[size[1] // 4 : -size[1] // 4, size[0] // 4 : -size[0] // 4]
    return int(np.any(np.abs(middle - pixels[0, 0]) > 8, axis=2).sum())


class _Scene:
    """Just enough of a scene for ``SceneView.show``: one view."""

    def __init__(self, view):
        self._view = view

    def view(self, color_mode):
        return self._view


def _one_item(radius: float, surroundings, dims: int):
    from sim.framework.views import PointsView

    positions = np.array([[0.5, 0.5, 0.0, radius]], np.float32)
    white = np.ones((1, 3), np.float32)
    return PointsView(1, dims, surroundings, 0.01, lambda: (positions, np.zeros(1, np.int32)), palette=white)


def test_a_2d_disc_is_at_least_three_pixels_across_and_a_3d_ball_keeps_its_size(gl):
    from sim.framework.views import Box, Trough
    from viewer.render.camera import OrbitCamera

    disc = _one_item(0.0005, Box(1.0), 2)  # 0.15 pixels across its radius at this zoom
    assert _lit_pixels(gl, disc, OrbitCamera.top_view(1.0, 0.01)) >= 4  # 3 pixels across: 4 to 9
    big = _one_item(0.05, Box(1.0), 2)
    assert 600 < _lit_pixels(gl, big, OrbitCamera.top_view(1.0, 0.01)) < 800, "larger discs keep their size: 15 px"
    ball = _one_item(0.0005, Trough(40.0, -80.0, 80.0), 3)
    assert _lit_pixels(gl, ball, OrbitCamera.looking_at((0.5, 0.5, 0.0), 400.0)) <= 1


def _ring_share(v, centre, radius) -> float:
    """The share of points on a circle (window points, y up) that a screenshot shows near white."""
    from viewer.image import read_image

    v.actions.screenshot()
    v.tick()
    pixels = read_image(v.last_screenshot).astype(int)
    angles = np.linspace(0, 2 * np.pi, 72, endpoint=False)
    cols = np.round(centre[0] + radius * np.cos(angles)).astype(int)
    rows = np.round(pixels.shape[0] - (centre[1] + radius * np.sin(angles))).astype(int)
    near = [pixels[r - 1 : r + 2, c - 1 : c + 2].min(axis=2).max() for r, c in zip(rows, cols, strict=True)]
    return float(np.mean(np.array(near) > 200))


def test_the_push_tool_shows_its_reach_as_a_ring(window):
    import math

    v = window(create_scene("particles", n=3000))
    camera, centre = v.camera, (250, 320)
    pixels_per_unit = HEIGHT / (2 * camera.distance * math.tan(math.radians(camera.fov_y) / 2))
    radius = v.scene.tool_reach() * pixels_per_unit
    assert radius > 10
    v.window.dispatch_event("on_mouse_motion", *centre, 0, 0)
    v.tick()
    assert _ring_share(v, centre, radius) < 0.3, "the tool off, no ring while hovering"
    v.controller.set_tool(True)
    v.tick()
    assert _ring_share(v, centre, radius) > 0.7, "the tool on: its reach around the pointer (a tooltip hides some)"
    v.controller.set_tool(False)
    v.window.dispatch_event("on_mouse_press", *centre, mouse.LEFT, key.MOD_CTRL)
    v.tick()
    assert _ring_share(v, centre, radius) > 0.7, "a ctrl + drag shows the reach while it lasts"
    v.window.dispatch_event("on_mouse_release", *centre, mouse.LEFT, key.MOD_CTRL)


def test_a_scene_switched_while_paused_starts_running_its_first_frame_under_the_box(window, monkeypatch):
    import time

    from sim.heat.scene import HeatScene

    first_frame = HeatScene.advance_frame

    def slow_first_frame(self, most=None):
        if self.steps == 0:
            time.sleep(0.4)
        return first_frame(self, most)

    monkeypatch.setattr(HeatScene, "advance_frame", slow_first_frame)
    v = window(create_scene("particles", n=300))
    assert v.paused
    v.controller.switch_scene("heat")
    assert not v.paused, "the pause stayed with the old scene"
    v.tick()
    assert v.loop.warm_up is not None and v.view.kind == "field", "the first frame runs on the worker, under the box"
    while v.loop.warm_up is not None:
        v.tick()
    v.tick()
    assert v.scene.steps > v.scene.spec.steps_per_frame and "kernels ready" in v.message, "and it runs on"


def test_a_click_outside_an_open_combo_only_closes_it(window, widgets):
    v = window(create_scene("particles", n=3000))
    _click(v, *widgets["scene"])  # opens the scene combo
    assert "heat" in widgets, "the combo's list is open"
    target, distance = v.camera.target.copy(), v.camera.distance
    v.window.dispatch_event("on_mouse_motion", 250, 300, 0, 0)
    v.window.dispatch_event("on_mouse_scroll", 250, 300, 0, -1)
    v.window.dispatch_event("on_mouse_press", 250, 300, mouse.LEFT, 0)
    v.window.dispatch_event("on_mouse_drag", 300, 300, 50, 0, mouse.LEFT, 0)
    v.window.dispatch_event("on_mouse_release", 300, 300, mouse.LEFT, 0)
    v.tick()
    assert v.camera.distance == distance and np.array_equal(v.camera.target, target)
    assert v.pointing.picking.pinned is None and v.scene.spec.name == "particles"
