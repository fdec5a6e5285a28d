"""The viewer in a real pyglet window (Xvfb under `make test`), driven frame by frame with tick().

Key presses are queued with ``window.dispatch_event`` and take effect at the next tick's
``dispatch_events()``.
"""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from viewer.window.display import display_problem

_PROBLEM = display_problem()
pytestmark = [
    pytest.mark.window,
    pytest.mark.skipif(_PROBLEM is not None, reason=f"needs a display: {_PROBLEM}"),
]

from imgui_bundle import imgui  # noqa: E402

from sim import create_scene  # noqa: E402
from viewer.image import read_image  # noqa: E402
from viewer.keys import key, mouse  # noqa: E402
from viewer.panel.style import PANEL_WIDTH  # noqa: E402
from viewer.window.app import Viewer  # noqa: E402

WIDTH, HEIGHT = 1024, 700


@pytest.fixture(scope="module")
def viewer(tmp_path_factory):
    scene = create_scene("balls", preset="block", n=400, seed=1)
    v = Viewer(scene, WIDTH, HEIGHT, max_fps=None, screenshot_dir=tmp_path_factory.mktemp("shots"))
    for _ in range(3):
        v.tick()
    yield v
    v.close()


def press(v, symbol, modifiers=0, ticks=1):
    """Press and release a key, then run ``ticks`` frames and one more for ImGui's input queue
    (it spreads a press and release that arrive in one frame over two frames)."""
    v.window.dispatch_event("on_key_press", symbol, modifiers)
    v.window.dispatch_event("on_key_release", symbol, modifiers)
    for _ in range(ticks + 1 if ticks else 0):
        assert v.tick()


def ensure_running(v):
    if v.paused:
        press(v, key.SPACE)
    assert not v.paused


def test_space_pauses_and_resumes(viewer):
    ensure_running(viewer)
    before = viewer.scene.steps
    viewer.tick()
    assert viewer.scene.steps > before
    press(viewer, key.SPACE)
    assert viewer.paused
    frozen = viewer.scene.steps
    for _ in range(3):
        viewer.tick()
    assert viewer.scene.steps == frozen
    press(viewer, key.SPACE, ticks=2)
    assert not viewer.paused
    assert viewer.scene.steps > frozen


def test_s_single_steps_while_paused(viewer):
    press(viewer, key.S)
    assert viewer.paused
    steps = viewer.scene.steps
    press(viewer, key.S)
    assert viewer.scene.steps == steps + 1


def test_r_resets(viewer):
    ensure_running(viewer)
    viewer.tick()
    assert viewer.scene.steps > 0
    press(viewer, key.R, ticks=0)
    viewer.window.dispatch_events()  # handle the key without running the next frame's physics
    assert viewer.scene.steps == 0
    assert viewer.tick()


def _scene_pixels(v) -> np.ndarray:
    """A screenshot's part left of the panel."""
    press(v, key.F12)
    pixels = read_image(v.last_screenshot).astype(int)
    return pixels[:, : v.window.get_framebuffer_size()[0] - PANEL_WIDTH - 20]


def test_color_mode_changes_colours(viewer):
    modes = list(viewer.scene.color_modes)
    assert len(modes) >= 2
    was_running = not viewer.paused
    if was_running:
        press(viewer, key.SPACE)  # the balls stay where they are: only their colours may change
    viewer.controller.set_color_mode(modes[0])
    viewer.tick()
    first = _scene_pixels(viewer)
    target = "uniform" if "uniform" in modes and modes[0] != "uniform" else modes[1]
    viewer.controller.set_color_mode(target)
    viewer.tick()
    assert viewer.controller.color_mode == target
    changed = np.any(np.abs(_scene_pixels(viewer) - first) > 24, axis=2)
    assert changed.mean() > 0.01, "the balls are drawn in other colours"
    if was_running:
        press(viewer, key.SPACE)


def test_T_and_t_load_the_benchmarks(viewer):
    press(viewer, key.T, key.MOD_SHIFT)
    assert viewer.scene.preset == "T" and viewer.scene.n == 1715
    press(viewer, key.T)
    assert viewer.scene.preset == "t" and viewer.scene.n == 8575
    viewer.controller.load_preset("block", 400)
    viewer.tick()
    assert viewer.scene.n == 400


@pytest.mark.parametrize(
    "symbol, modifiers", [(key.A, 0), (key.F4, 0), (key.V, 0), (key.C, 0), (key.Q, 0), (key.Q, key.MOD_SHIFT)]
)
def test_gpu_keys_explain_and_change_nothing_without_a_gpu(viewer, symbol, modifiers):
    if viewer.controller.gpu.reason() is None:
        pytest.skip("this machine can run the scene on a GPU")
    mode, backend = viewer.controller.color_mode, viewer.scene.backend
    press(viewer, symbol, modifiers)
    assert viewer.scene.backend == backend == "cpu"
    assert viewer.controller.color_mode == mode
    assert "needs a GPU" in viewer.message


def test_f12_writes_a_screenshot_with_spheres(viewer):
    press(viewer, key.F12)
    path = viewer.last_screenshot
    assert path is not None and path.is_file()
    assert path.name.startswith("kernel-lab-") and path.suffix == ".png"
    assert str(path) in viewer.message
    pixels = read_image(path)
    width, height = viewer.window.get_framebuffer_size()
    assert pixels.shape == (height, width, 3)
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 100
    scene_part = pixels[:, : width - PANEL_WIDTH - 20]
    assert scene_part.std() > 10


def test_f1_toggles_help(viewer):
    press(viewer, key.F1)
    assert viewer.show_help
    press(viewer, key.F1)
    assert not viewer.show_help


def test_bad_slider_values_do_not_crash(viewer):
    ensure_running(viewer)
    saved = {p.name: viewer.scene.controls.param_value(p.name) for p in viewer.scene.params}
    for param in viewer.scene.params:
        for bad in (math.nan, math.inf, -math.inf, 1e308, -1e308, "junk", None):
            viewer.controller.set_param(param.name, bad)
            value = viewer.scene.controls.param_value(param.name)
            assert math.isfinite(value) and param.lo <= value <= param.hi
        assert viewer.tick()
    viewer.controller.set_count(-(10**12))  # clamped to the smallest count
    assert viewer.scene.n == viewer.scene.count_range[0]
    viewer.controller.set_count("many")
    assert "not a number" in viewer.message
    assert viewer.tick()
    viewer.controller.load_preset("no-such-preset")
    assert "failed" in viewer.message
    assert viewer.tick()
    for name, value in saved.items():
        viewer.controller.set_param(name, value)
    viewer.controller.load_preset("block", 400)


def test_keys_go_to_imgui_while_it_has_keyboard_focus(viewer):
    ensure_running(viewer)
    viewer.gui.make_current()
    imgui.set_next_frame_want_capture_keyboard(True)
    viewer.tick()  # this frame's new_frame() applies the override
    press(viewer, key.SPACE)
    assert not viewer.paused


def test_mouse_drags_orbit_the_camera_but_not_over_the_panel(viewer):
    viewer.controller.paused = True
    win = viewer.window
    # Over the panel: ImGui takes the drag.
    px, py = WIDTH - PANEL_WIDTH // 2, HEIGHT // 2
    win.dispatch_event("on_mouse_motion", px, py, 0, 0)
    viewer.tick()
    yaw = viewer.camera.yaw
    win.dispatch_event("on_mouse_press", px, py, mouse.LEFT, 0)
    win.dispatch_event("on_mouse_drag", px - 40, py, -40, 0, mouse.LEFT, 0)
    win.dispatch_event("on_mouse_release", px - 40, py, mouse.LEFT, 0)
    viewer.tick()
    assert viewer.camera.yaw == yaw
    # Over the scene: the camera orbits; the wheel zooms.
    sx, sy = 200, HEIGHT // 2
    win.dispatch_event("on_mouse_motion", sx, sy, 0, 0)
    viewer.tick()
    viewer.tick()
    win.dispatch_event("on_mouse_press", sx, sy, mouse.LEFT, 0)
    win.dispatch_event("on_mouse_drag", sx + 40, sy, 40, 0, mouse.LEFT, 0)
    win.dispatch_event("on_mouse_release", sx + 40, sy, mouse.LEFT, 0)
    viewer.tick()
    assert viewer.camera.yaw != yaw
    distance = viewer.camera.distance
    win.dispatch_event("on_mouse_scroll", sx, sy, 0, 2)
    viewer.tick()
    assert viewer.camera.distance < distance
    press(viewer, key.HOME)
    assert viewer.camera.distance > distance * 0.99


def test_scripted_run_reaches_the_step_count_and_saves_the_window(tmp_path):
    # Its own process: main() opens (and closes) a window of its own.
    shot = tmp_path / "run.png"
    code = (
        "import sys; from sim import create_scene; from viewer.window.launch import main; "
        "scene = create_scene('balls', preset='block', n=100); "
        f"status = main(scene, 320, 240, steps=23, screenshot={str(shot)!r}); "
        "print('steps', scene.steps); sys.exit(status)"
    )
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "steps 23" in result.stdout
    pixels = read_image(shot)
    assert pixels.shape == (240, 320, 3) and pixels.std() > 5


def test_a_second_esc_closes_the_window(viewer):
    # Last test of the module: it closes the shared window.
    assert viewer.tick()
    viewer.window.dispatch_event("on_key_press", key.ESCAPE, 0)
    assert viewer.tick() and "Esc again" in viewer.message
    viewer.window.dispatch_event("on_key_press", key.ESCAPE, 0)
    assert viewer.tick() is False
    assert viewer.closed
    assert viewer.tick() is False
