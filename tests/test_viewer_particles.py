"""The particles scene in the viewer: a top view of its 2D box, keys that apply and keys that say
they do not, switching scenes, and headless rendering. Window tests need a display (Xvfb)."""

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sim import create_scene
from viewer.keys import KeyMap, key
from viewer.panel.style import PANEL_WIDTH
from viewer.render.camera import OrbitCamera
from viewer.render.view import BACKGROUND
from viewer.window.controller import Controller

ROOT = Path(__file__).resolve().parent.parent
N = 3000


def _press(ctl, symbol, modifiers=0) -> str:
    KeyMap(ctl).press(symbol, modifiers)
    return ctl.message


def test_balls_only_keys_say_they_do_not_apply():
    ctl = Controller(create_scene("particles", n=N))
    assert "does not apply to the particles scene" in _press(ctl, key.T)
    assert "does not apply to the particles scene" in _press(ctl, key.T, key.MOD_SHIFT)
    assert "does not apply to the particles scene" in _press(ctl, key.F4)
    assert ctl.scene.spec.name == "particles" and ctl.scene.preset == "2020" and ctl.scene.n == N


def test_top_view_zooms_down_to_single_particles_at_ten_million():
    side = math.sqrt(0.0005 * 10_000_000)
    camera = OrbitCamera.top_view(side, side / math.sqrt(10_000_000))
    camera.zoom(1e-9)
    view_height = 2 * camera.distance * math.tan(math.radians(camera.fov_y) / 2)
    assert view_height < 0.1, "the closest view should show a few particles (0.01 wide) across"
    assert camera.near < camera.distance - 0.005, "particles (radius 0.005 at z = 0) stay beyond the near plane"
    yaw, pitch = camera.yaw, camera.pitch
    camera.orbit(50, 30)
    assert (camera.yaw, camera.pitch) == (yaw, pitch), "a 2D scene's camera does not orbit"


def test_render_image_without_a_display(tmp_path):
    # Its own process with DISPLAY unset: headless rendering must not need an X server.
    shot = tmp_path / "particles.png"
    code = (
        "from sim import create_scene; from viewer.headless import render_image; "
        f"scene = create_scene('particles', n={N}); scene.advance_frame(); "
        f"render_image(scene, {str(shot)!r}, 400, 300, color_mode='speed')"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    if "EGL" in result.stderr and result.returncode:
        pytest.skip(f"no EGL here: {result.stderr.strip().splitlines()[-1]}")
    assert result.returncode == 0, result.stderr
    from viewer.image import read_image

    pixels = read_image(shot).astype(int)
    assert pixels.shape == (300, 400, 3)
    inside = pixels[120:180, 170:230]  # the middle of the box, which sits in the middle of the image
    off_background = np.any(np.abs(inside - np.array(BACKGROUND) * 255) > 12, axis=2)
    assert 0.03 < off_background.mean() < 0.9, "particles should cover part of the box"


# --- in a window (Xvfb under make test) ---------------------------------------------------------


def _display_problem():
    from viewer.window.display import display_problem

    return display_problem()


_NO_DISPLAY = _display_problem()
needs_display = pytest.mark.skipif(_NO_DISPLAY is not None, reason=f"needs a display: {_NO_DISPLAY}")


@pytest.fixture(scope="module")
def viewer(tmp_path_factory):
    from viewer.window.app import Viewer

    v = Viewer(create_scene("particles", n=N), 900, 600, max_fps=None, screenshot_dir=tmp_path_factory.mktemp("shots"))
    for _ in range(3):
        v.tick()
    yield v
    v.close()


def press(v, symbol, modifiers=0, ticks=1):
    v.window.dispatch_event("on_key_press", symbol, modifiers)
    v.window.dispatch_event("on_key_release", symbol, modifiers)
    for _ in range(ticks + 1 if ticks else 0):
        assert v.tick()


@pytest.mark.window
@needs_display
def test_window_runs_frames_and_space_pauses(viewer):
    if viewer.paused:
        press(viewer, key.SPACE)
    before = viewer.scene.steps
    viewer.tick()
    assert viewer.scene.steps == before + viewer.scene.spec.steps_per_frame == before + 10
    press(viewer, key.SPACE)
    assert viewer.paused
    frozen = viewer.scene.steps
    viewer.tick()
    assert viewer.scene.steps == frozen
    press(viewer, key.S)
    assert viewer.scene.steps == frozen + 1
    press(viewer, key.SPACE)
    assert not viewer.paused


@pytest.mark.window
@needs_display
def test_window_r_resets_the_steps(viewer):
    viewer.controller.paused = False
    viewer.tick()
    assert viewer.scene.steps > 0
    press(viewer, key.R, ticks=0)
    viewer.window.dispatch_events()  # the key without the next frame's physics
    assert viewer.scene.steps == 0
    assert viewer.tick()


@pytest.mark.window
@needs_display
def test_window_keys_that_need_a_gpu_or_the_balls_say_so(viewer):
    press(viewer, key.T)
    assert "does not apply to the particles scene" in viewer.message
    if viewer.controller.gpu.reason() is None:
        pytest.skip("this machine runs the scene on a GPU")
    press(viewer, key.Q)
    assert viewer.message.startswith("q: needs a GPU")
    assert viewer.scene.knobs.variant == "plain" and viewer.scene.backend == "cpu"


@pytest.mark.window
@needs_display
def test_window_shows_particles_inside_the_box_outline(viewer):
    from viewer.image import read_image

    press(viewer, key.HOME)
    press(viewer, key.F12)
    pixels = read_image(viewer.last_screenshot).astype(int)
    height, width, _ = pixels.shape
    camera = viewer.camera
    side = viewer.scene.size
    shift = (PANEL_WIDTH + 16) * width / viewer.window.get_size()[0] / width  # as Viewer.draw_frame
    clip = camera.projection_matrix(width / height, shift) @ camera.view_matrix()

    def pixel(x, y):
        p = clip @ np.array([x, y, 0.0, 1.0])
        return int((p[0] / p[3] + 1) / 2 * width), int((1 - p[1] / p[3]) / 2 * height)

    (left, top), (right, bottom) = pixel(0.0, side), pixel(side, 0.0)
    assert 0 <= left < right < width and 0 <= top < bottom < height
    inside = pixels[top + 5 : bottom - 5, left + 5 : right - 5]
    off_background = np.any(np.abs(inside - np.array(BACKGROUND) * 255) > 12, axis=2)
    assert 0.03 < off_background.mean() < 0.9, "particles should cover part of the box"
    outline = pixels[(top + bottom) // 2, left - 1 : left + 2]
    assert outline.max() > 120, "the box outline should show"


@pytest.mark.window
@needs_display
def test_window_left_drag_pans_a_2d_scene(viewer):
    viewer.controller.paused = True
    target = viewer.camera.target.copy()
    win = viewer.window
    win.dispatch_event("on_mouse_motion", 200, 300, 0, 0)
    viewer.tick()
    win.dispatch_event("on_mouse_press", 200, 300, 1, 0)  # left button
    win.dispatch_event("on_mouse_drag", 240, 300, 40, 0, 1, 0)
    win.dispatch_event("on_mouse_release", 240, 300, 1, 0)
    viewer.tick()
    assert viewer.camera.target[0] < target[0] and viewer.camera.pitch == 0.0


@pytest.mark.window
@needs_display
def test_window_switches_balls_particles_balls(viewer):
    ctl = viewer.controller
    ctl.switch_scene("balls")
    viewer.tick()
    assert viewer.scene.spec.name == "balls" and viewer.view.points.box is None and viewer.camera.orbit_enabled
    ctl.set_count(500)
    viewer.tick()
    ctl.switch_scene("particles")
    viewer.tick()
    while viewer.loop.warm_up is not None:  # a switched-to scene runs: its first frame on the worker (keys wait)
        viewer.tick()
    assert viewer.scene.spec.name == "particles" and viewer.view.points.box.side == pytest.approx(viewer.scene.size)
    assert not viewer.camera.orbit_enabled
    ctl.set_count(N)
    ctl.paused = False
    steps = viewer.scene.steps
    viewer.tick()
    while viewer.loop.warm_up is not None:  # the switched-to scene's first frame runs on the worker
        viewer.tick()
    assert viewer.scene.steps == steps + 10
    ctl.switch_scene("balls")
    viewer.tick()
    assert viewer.scene.spec.name == "balls" and viewer.view.points.box is None
    ctl.switch_scene("particles")  # the module's window goes on with particles
    ctl.set_count(N)
    viewer.tick()
