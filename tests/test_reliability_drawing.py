"""What the window draws as a newcomer meets it (Xvfb, Mesa): 2D discs stay visible, at least three pixels
across, while a 3D ball keeps its size, and the push tool shows its reach as a ring around the pointer."""

import numpy as np
import pytest
import test_reliability_window as newcomer
from test_reliability_window import _PROBLEM, HEIGHT

from sim import create_scene
from viewer.keys import key, mouse

pytestmark = [pytest.mark.window, pytest.mark.skipif(_PROBLEM is not None, reason=f"needs a display: {_PROBLEM}")]
window = newcomer.window  # its fixture: viewers of WIDTH x HEIGHT, paused, closed after the test


# --- 11: 2D discs, the push tool's reach ----------------------------------------------------------------


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
