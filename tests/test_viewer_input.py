"""Pointer routing: which gestures reach the camera and which the scene's tool (tool on / off,
ctrl), pixels turned into scene coordinates, and the particles' push tool driven through a real
window (Xvfb): particles near the pointer get the drag's velocity, particles far away do not."""

import math

import numpy as np
import pytest

from sim import create_scene
from viewer.keys import key, mouse
from viewer.render.camera import OrbitCamera
from viewer.window.input import ORBIT, PAN, TOOL, ZOOM, gesture, scene_point

LEFT, RIGHT, MIDDLE = mouse.LEFT, mouse.RIGHT, mouse.MIDDLE
SHIFT, CTRL = key.MOD_SHIFT, key.MOD_CTRL


@pytest.mark.parametrize(
    "button, modifiers, has_tool, tool_on, can_orbit, expected",
    [
        # the tool on: left and right drags use it; middle and shift + left pan
        (LEFT, 0, True, True, False, TOOL),
        (RIGHT, 0, True, True, False, TOOL),
        (MIDDLE, 0, True, True, False, PAN),
        (LEFT, SHIFT, True, True, False, PAN),
        (LEFT, CTRL, True, True, True, TOOL),
        # the tool off: the camera's gestures, and ctrl + left reaches the tool
        (LEFT, 0, True, False, False, PAN),
        (LEFT, 0, True, False, True, ORBIT),
        (RIGHT, 0, True, False, True, ZOOM),
        (MIDDLE, 0, True, False, True, PAN),
        (LEFT, CTRL, True, False, False, TOOL),
        (RIGHT, CTRL, True, False, False, ZOOM),
        # no tool: ctrl changes nothing
        (LEFT, CTRL, False, False, True, ORBIT),
        (LEFT, 0, False, True, True, ORBIT),
    ],
)
def test_gestures(button, modifiers, has_tool, tool_on, can_orbit, expected):
    assert gesture(button, modifiers, has_tool, tool_on, can_orbit) == expected


def _pixel(camera, point, size, covered=0.0):
    """The pixel (x, y from the bottom) of a world point, as the view draws it."""
    width, height = size
    clip = camera.projection_matrix(width / height, covered / width) @ camera.view_matrix() @ np.append(point, 1.0)
    ndc = clip[:3] / clip[3]
    return (ndc[0] + 1) / 2 * width, (ndc[1] + 1) / 2 * height


@pytest.mark.parametrize("covered", [0.0, 416.0])
def test_pixels_map_to_the_plane_they_show(covered):
    camera = OrbitCamera.plan_view((0.0, 0.0, 4.0, 3.0), 0.01)
    camera.zoom(0.7)
    camera.pan(30, -12, 800)
    size = (1280, 800)
    for point in ((0.0, 0.0), (4.0, 3.0), (1.3, 2.2)):
        px, py = _pixel(camera, (*point, 0.0), size, covered)
        x, y, origin, direction = scene_point(camera, px, py, size, covered)
        assert (x, y) == pytest.approx(point, abs=1e-6)
        assert direction[2] < 0 and origin[2] > 0, "the ray looks down onto the plane"


def test_a_3d_pixel_gives_its_ray():
    camera = OrbitCamera.framing()
    size = (1000, 700)
    target = np.array([5.0, -20.0, 10.0])
    px, py = _pixel(camera, target, size)
    _, _, origin, direction = scene_point(camera, px, py, size)
    # The ray passes through the point: the distance from the point to the line is ~0.
    offset = target - origin
    assert np.linalg.norm(offset - np.dot(offset, direction) * direction) < 1e-6
    assert np.linalg.norm(direction) == pytest.approx(1.0)


def test_a_ray_along_the_plane_has_no_point_on_it():
    camera = OrbitCamera.looking_at((0.0, 0.0, 0.0), 10.0, yaw=90.0, pitch=0.0)  # looking along -x, in z = 0
    x, y, _, _ = scene_point(camera, 500.0, 350.0, (1000, 700))
    assert math.isnan(x) and math.isnan(y)


# --- through a window --------------------------------------------------------------------------


def _display_problem():
    from viewer.window.display import display_problem

    return display_problem()


_NO_DISPLAY = _display_problem()
N = 3000


@pytest.fixture
def viewer(tmp_path):
    from viewer.window.app import Viewer

    v = Viewer(create_scene("particles", n=N), 900, 600, max_fps=None, screenshot_dir=tmp_path)
    v.controller.paused = True  # velocities change only through the tool
    for _ in range(3):
        v.tick()
    yield v
    v.close()


def _drag(v, start, end, button=LEFT, modifiers=0, steps=4):
    """Hover, press, drag in ``steps`` moves, release (window points, y from the bottom)."""
    win = v.window
    win.dispatch_event("on_mouse_motion", *start, 0, 0)
    v.tick()
    v.tick()
    win.dispatch_event("on_mouse_press", *start, button, modifiers)
    x, y = start
    for i in range(1, steps + 1):
        nx = start[0] + (end[0] - start[0]) * i // steps
        ny = start[1] + (end[1] - start[1]) * i // steps
        win.dispatch_event("on_mouse_drag", nx, ny, nx - x, ny - y, button, modifiers)
        x, y = nx, ny
    win.dispatch_event("on_mouse_release", *end, button, modifiers)
    v.tick()


def _scene_xy(v, x, y):
    fb = v.window.get_framebuffer_size()
    scale = fb[0] / v.window.get_size()[0]
    sx, sy, _, _ = scene_point(v.camera, x * scale, y * scale, fb, v.covered_right(fb))
    return sx, sy


def _pushed(v, start, end):
    """(near the drag's end, far from its whole path) masks, and the velocities now."""
    scene = v.scene
    (x0, y0), (x1, y1) = _scene_xy(v, *start), _scene_xy(v, *end)
    reach = scene.controls.tool_values["radius"] * scene.size
    near = np.hypot(scene.x - x1, scene.y - y1) <= reach
    # Distance to the segment start -> end: every drag event pushes around its own position.
    along = np.clip(
        ((scene.x - x0) * (x1 - x0) + (scene.y - y0) * (y1 - y0)) / ((x1 - x0) ** 2 + (y1 - y0) ** 2), 0.0, 1.0
    )
    path = np.hypot(scene.x - (x0 + along * (x1 - x0)), scene.y - (y0 + along * (y1 - y0)))
    return near, path > 1.5 * reach, np.column_stack([scene.vx, scene.vy])


needs_display = pytest.mark.skipif(_NO_DISPLAY is not None, reason=f"needs a display: {_NO_DISPLAY}")


@pytest.mark.window
@needs_display
def test_with_the_tool_on_a_left_drag_pushes_the_particles_under_the_pointer(viewer):
    viewer.controller.set_tool(True)
    before = np.column_stack([viewer.scene.vx, viewer.scene.vy]).copy()
    target = viewer.camera.target.copy()
    start, end = (200, 300), (260, 300)
    _drag(viewer, start, end)
    near, far, after = _pushed(viewer, start, end)
    assert near.sum() > 5 and far.sum() > N // 2
    assert np.all(after[near, 0] > 0.5) and np.allclose(after[near, 1], 0.0, atol=1e-9), "pushed along +x"
    assert np.all(after[near] == after[near][0]), "every particle near the pointer moves with it"
    np.testing.assert_array_equal(after[far], before[far])
    assert np.array_equal(viewer.camera.target, target), "the camera did not pan"


@pytest.mark.window
@needs_display
def test_with_the_tool_off_left_drag_pans_and_ctrl_drag_pushes(viewer):
    assert not viewer.scene.controls.tool_on, "the push tool starts off"
    before = np.column_stack([viewer.scene.vx, viewer.scene.vy]).copy()
    target = viewer.camera.target.copy()
    _drag(viewer, (200, 300), (240, 300))
    assert viewer.camera.target[0] < target[0], "a plain left drag pans"
    np.testing.assert_array_equal(np.column_stack([viewer.scene.vx, viewer.scene.vy]), before)
    target = viewer.camera.target.copy()
    start, end = (300, 200), (300, 150)  # downwards on screen: -y in the scene
    _drag(viewer, start, end, modifiers=CTRL)
    near, far, after = _pushed(viewer, start, end)
    assert near.sum() > 5
    assert np.all(after[near, 1] < -0.5) and np.allclose(after[near, 0], 0.0, atol=1e-9), "pushed along -y"
    np.testing.assert_array_equal(after[far], before[far])
    assert np.array_equal(viewer.camera.target, target), "ctrl + drag leaves the camera alone"


@pytest.mark.window
@needs_display
def test_drags_over_the_panel_reach_neither(viewer):
    from viewer.panel.style import PANEL_WIDTH

    viewer.controller.set_tool(True)
    before = np.column_stack([viewer.scene.vx, viewer.scene.vy]).copy()
    x = viewer.window.get_size()[0] - PANEL_WIDTH // 2
    _drag(viewer, (x, 300), (x - 60, 300))
    np.testing.assert_array_equal(np.column_stack([viewer.scene.vx, viewer.scene.vy]), before)
