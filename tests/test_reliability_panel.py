"""The panel as a newcomer meets it, through a real window (Xvfb, Mesa): a scene switch shows the "compiling
kernels…" box over the new scene, paused or not, the message line stays in sight while the panel scrolls,
"camera follows" is offered only where there is a camera, a click outside an open combo only closes it."""

import numpy as np
import pytest
import test_reliability_window as newcomer
from imgui_bundle import imgui
from test_reliability_window import _PROBLEM, _click

from sim import create_scene
from viewer.keys import mouse

pytestmark = [pytest.mark.window, pytest.mark.skipif(_PROBLEM is not None, reason=f"needs a display: {_PROBLEM}")]
window = newcomer.window  # its fixture: viewers of WIDTH x HEIGHT, paused, closed after the test


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


# --- 11: the message line, "camera follows" -------------------------------------------------------------


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
