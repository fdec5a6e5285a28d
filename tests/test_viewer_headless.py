"""Offscreen rendering through EGL: balls, trough, depth, close-ups and the ImGui panel.

These tests need no display; they run with DISPLAY unset.
"""

import numpy as np
import pytest
from gl_support import needs_egl

from sim.contract import PointsView, Trough
from viewer.headless import render_image, render_pixels
from viewer.image import read_image
from viewer.render.camera import OrbitCamera
from viewer.render.view import BACKGROUND

pytestmark = needs_egl

RED, GREEN = (1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0)


class BallArrays:
    """The part of a scene that headless rendering reads: its colour modes and its view."""

    color_modes = {"uniform": "Uniform"}
    trough = Trough(radius=40.0, z_min=-80.0, z_max=80.0)

    def __init__(self, spheres, colors):
        self._pos = np.asarray(spheres, np.float32).reshape(-1, 4)
        self._palette = np.asarray(colors, np.float32).reshape(-1, 4)[:, :3]  # ball k: category k

    def view(self, color_mode):
        categories = np.arange(len(self._pos), dtype=np.int32)
        return PointsView(
            len(self._pos), 3, self.trough, 2.0, host=lambda: (self._pos, categories), palette=self._palette
        )


def _project(camera: OrbitCamera, point, width: int, height: int) -> tuple[int, int]:
    """Pixel (column, row from the top) of a world point."""
    clip = camera.projection_matrix(width / height) @ camera.view_matrix() @ np.append(point, 1.0)
    ndc = clip[:3] / clip[3]
    return int((ndc[0] + 1) / 2 * width), int((1 - ndc[1]) / 2 * height)


def _reddish(pixels):
    p = pixels.astype(int)
    return (p[..., 0] > 80) & (p[..., 0] > 2 * p[..., 1]) & (p[..., 0] > 2 * p[..., 2])


def test_balls_over_the_trough_show_in_their_projected_area(tmp_path):
    centres = [(-20.0, -30.0, 0.0), (0.0, -38.0, 10.0), (15.0, -34.0, -30.0)]
    scene = BallArrays([(*c, 3.0) for c in centres], [RED] * 3)
    width, height = 640, 400
    camera = OrbitCamera.for_trough(scene.trough)
    path = render_image(scene, tmp_path / "balls.png", width, height, camera=camera)
    pixels = read_image(path)
    assert pixels.shape == (height, width, 3)
    background = np.all(np.abs(pixels.astype(int) - np.array(BACKGROUND) * 255) < 3, axis=2)
    assert background.mean() > 0.2, "some of the image should be plain background"
    red = _reddish(pixels)
    for centre in centres:
        col, row = _project(camera, centre, width, height)
        window = red[max(row - 3, 0) : row + 4, max(col - 3, 0) : col + 4]
        assert window.mean() > 0.8, f"ball at {centre} not drawn around pixel {(col, row)}"
    assert 20 < red.sum() < 0.05 * width * height


def test_close_up_ball_fills_the_screen():
    # Far larger on screen than any GL point size limit (often 64-256 px) would allow.
    scene = BallArrays([(0.0, -30.0, 0.0, 2.0)], [RED])
    camera = OrbitCamera.looking_at((0.0, -30.0, 0.0), distance=3.0, yaw=10.0, pitch=5.0)
    pixels = render_pixels(scene, 640, 400, camera=camera)
    red = _reddish(pixels)
    assert red.mean() > 0.5
    assert red[200, 320]


def test_camera_inside_a_ball_does_not_break_rendering():
    scene = BallArrays([(0.0, -30.0, 0.0, 2.0), (0.0, -30.0, -10.0, 2.0)], [RED, GREEN])
    camera = OrbitCamera.looking_at((0.0, -30.0, 0.0), distance=1.0)
    pixels = render_pixels(scene, 320, 200, camera=camera)
    assert pixels.shape == (200, 320, 3)
    green = (pixels[..., 1] > 80) & (pixels[..., 1] > 2 * pixels[..., 0])
    assert green.any(), "the other ball, in front of the camera, should still show"


@pytest.mark.parametrize("front", [0, 1])
def test_intersecting_balls_nearer_one_in_front(front):
    # Two intersecting balls side by side, both covering the image centre; the camera looks
    # along -z from +z, so the one with the larger z is nearer.
    z_red, z_green = (1.0, -1.0) if front == 0 else (-1.0, 1.0)
    balls = [(-0.6, -30.0, z_red, 2.0), (0.6, -30.0, z_green, 2.0)]
    scene = BallArrays(balls, [RED, GREEN])
    camera = OrbitCamera.looking_at((0.0, -30.0, 0.0), distance=15.0)
    pixels = render_pixels(scene, 320, 200, camera=camera).astype(int)
    r, g, _ = pixels[100, 160]
    if front == 0:
        assert r > 2 * g, f"red is nearer but the centre is {pixels[100, 160]}"
    else:
        assert g > 2 * r, f"green is nearer but the centre is {pixels[100, 160]}"
    # Both balls are visible: the rear one shows on its own side.
    assert _reddish(pixels.astype(np.uint8)).any()
    assert ((pixels[..., 1] > 80) & (pixels[..., 1] > 2 * pixels[..., 0])).any()


def test_panel_changes_pixels_in_the_panel_area():
    from sim import create_scene
    from viewer.panel.style import PANEL_WIDTH

    scene = create_scene("balls", preset="T")
    scene.advance_frame()
    width, height = 1280, 800
    camera = OrbitCamera.for_trough(scene.trough)
    without = render_pixels(scene, width, height, camera=camera).astype(int)
    with_panel = render_pixels(scene, width, height, camera=camera, panel=True).astype(int)
    panel_area = np.s_[20 : height - 20, width - PANEL_WIDTH : width - 12]
    changed = np.any(np.abs(with_panel[panel_area] - without[panel_area]) > 8, axis=2)
    assert changed.mean() > 0.5, "the panel should cover its area"
    # Text and widgets: the panel is not one flat colour.
    assert len(np.unique(with_panel[panel_area].reshape(-1, 3), axis=0)) > 20
