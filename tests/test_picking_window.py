"""Picking in a window (Xvfb), or in pyglet's headless (EGL) window where there is no display: the tooltip of
a ball placed under the pointer shows that ball's values from the state, a click pins it and Esc unpins, the
camera follows the pinned ball; a density cell and a histogram bucket are picked with their counts; under
verification the tooltip of a marked item shows the GPU and CPU values side by side (GPU tests: the tooltip
from the device state through CUDA–GL interop, a planted kernel fault)."""

import numpy as np
import pytest

from sim import create_scene
from viewer.pick.picker import DEVICE_RAY, RAY
from viewer.window.display import display_problem

_PROBLEM = display_problem()  # with no display, pyglet's headless (EGL) window stands in


KNOWN = np.array(
    [
        [0.0, 10.0, 0.0, 2.0],
        [9.0, 12.0, 3.0, 1.5],
        [-9.0, 8.0, -4.0, 2.5],
        [0.0, 25.0, -30.0, 3.0],
        [15.0, 5.0, 30.0, 2.0],
    ],
    np.float32,
)
VELOCITIES = np.array(
    [[1.0, -2.0, 0.5, 0], [0, 0, 0, 0], [3.0, 0, -1.0, 0], [0, -9.5, 0, 0], [0.25, 0, 0, 0]], np.float32
)


def window_point(v, world):
    """The window pixel (pyglet: y up) where ``world`` is drawn."""
    fb = v.window.get_framebuffer_size()
    proj = v.camera.projection_matrix(fb[0] / fb[1], v.covered_right(fb) / fb[0])
    clip = proj @ v.camera.view_matrix() @ np.array([*world, 1.0])
    ndc = clip[:3] / clip[3]
    width, height = v.window.get_size()
    return (ndc[0] + 1) / 2 * width, (ndc[1] + 1) / 2 * height


def hover(v, point, ticks=2):
    v.window.dispatch_event("on_mouse_motion", int(round(point[0])), int(round(point[1])), 0, 0)
    for _ in range(ticks):
        v.tick()


def click(v, point):
    x, y = (int(round(c)) for c in point)
    v.window.dispatch_event("on_mouse_press", x, y, 1, 0)  # left
    v.window.dispatch_event("on_mouse_release", x, y, 1, 0)
    v.tick()
    v.tick()


def press_key(v, symbol, modifiers=0):
    v.window.dispatch_event("on_key_press", symbol, modifiers)
    v.window.dispatch_event("on_key_release", symbol, modifiers)
    v.tick()


def numbers(text):
    return [float(t) for t in text.split(")")[0].strip("(").split(",")]


@pytest.fixture
def window(tmp_path):
    """Viewers in a window, or in pyglet's headless (EGL) window where there is no display: a GPU
    machine draws through NVIDIA's EGL there, so the scene writes the GL buffers through CUDA."""
    from viewer.window.app import Viewer

    opened = []

    def make(scene):
        try:
            v = Viewer(scene, 1000, 700, visible=_PROBLEM is None, max_fps=None, screenshot_dir=tmp_path)
        except Exception as exc:  # noqa: BLE001  no window of either kind here
            pytest.skip(f"no window: {exc}")
        v.controller.paused = True
        for _ in range(3):
            v.tick()
        opened.append(v)
        return v

    yield make
    for v in opened:
        v.close()


def balls_with_known_state(backend="cpu"):
    scene = create_scene("balls", preset="block", n=len(KNOWN), backend=backend)  # no dripper adding balls
    scene.set_state(KNOWN, VELOCITIES)
    scene.run_frame(1)  # a proximity pass
    return scene


def check_tooltip_is_the_state(v, item):
    report = v.pointing.hover_report
    assert report is not None and report.item == item and not report.error
    assert report.values == v.scene.inspector.describe(item)
    pos, vel, _ = v.scene.state()
    assert numbers(report.values["position"]) == pytest.approx(pos[item, :3].tolist(), rel=1e-5, abs=1e-5)
    assert numbers(report.values["velocity"]) == pytest.approx(vel[item, :3].tolist(), rel=1e-5, abs=1e-5)
    assert report.values["radius"] == f"{pos[item, 3]:.4g}"


def test_the_tooltip_shows_the_values_of_the_ball_under_the_pointer(window):
    v = window(balls_with_known_state())
    for item in (0, 2, 3):
        hover(v, window_point(v, v.scene.state()[0][item, :3]), ticks=3)
        assert v.pointing.picking.hovered == item and v.pointing.picking.used == RAY
        check_tooltip_is_the_state(v, item)
    hover(v, (20, 680))  # the sky: nothing
    assert v.pointing.picking.hovered is None and v.pointing.hover_report is None


def test_a_click_pins_the_ball_and_esc_unpins_it(window):
    from viewer.keys import key

    v = window(balls_with_known_state())
    target = window_point(v, KNOWN[1, :3])
    hover(v, target)
    click(v, target)
    assert v.pointing.picking.pinned is not None and "pinned ball #1" in v.message
    hover(v, (20, 680))
    assert v.pointing.pinned_report.values == v.scene.inspector.describe(1), "the pinned window stays"
    v.controller.paused = False
    v.tick()
    moved = v.scene.inspector.describe(1)["position"]
    assert v.pointing.pinned_report.values["position"] == moved, "followed as it moves"
    press_key(v, key.ESCAPE)
    assert v.pointing.picking.pinned is None and not v.closed and v.message == "unpinned"


def test_the_camera_follows_the_pinned_ball(window):
    v = window(balls_with_known_state())
    target = window_point(v, KNOWN[3, :3])
    hover(v, target)
    click(v, target)
    v.pointing.picking.follow = True
    v.controller.paused = False
    for _ in range(3):
        v.tick()
    assert v.camera.target == pytest.approx(v.scene.state()[0][3, :3], abs=0.05)


def test_a_density_cell_is_picked_with_its_count(window):
    v = window(create_scene("density", n=3000))
    counts = v.scene.host_counts()
    row, col = np.unravel_index(int(np.argmax(counts)), counts.shape)
    cells = v.scene.cells
    width = v.scene.size / cells
    hover(v, window_point(v, ((col + 0.5) * width, (row + 0.5) * width, 0.0)))
    assert v.pointing.picking.hovered == row * cells + col
    assert v.pointing.hover_report.values["particles"].startswith(f"{int(counts[row, col])} ")


def test_a_histogram_bucket_is_picked_with_its_count(window):
    v = window(create_scene("sdh", n=2000))
    v.controller.single_step()
    for _ in range(3):
        v.tick()
    width, height = v.window.get_size()
    hover(v, (width * 0.15, height * 0.75), ticks=3)  # inside the top plot (the histogram), y up
    bucket = v.pointing.picking.hovered
    assert bucket is not None
    assert v.pointing.hover_report.values["pairs"] == f"{int(v.scene.counts[bucket]):,}"
    click(v, (width * 0.15, height * 0.75))
    assert v.pointing.picking.pinned is not None and v.view.plots.pinned_pixel is not None


def test_a_marked_particle_shows_gpu_and_cpu_values_side_by_side(window):
    """On the CPU, a check record is planted as the GPU verification would leave it."""
    scene = create_scene("particles", n=400)
    scene.advance_frame()
    n = scene.n
    cpu = np.stack([scene.x, scene.y, scene.vx, scene.vy]).astype(float)
    gpu = cpu.copy()
    gpu[0, 7] += 1e-3  # particle 7 moved differently "on the GPU"
    scene.checked = (gpu, cpu, np.arange(n))
    scene.checks.mismatch = np.zeros(n, bool)
    scene.checks.mismatch[7] = True
    scene.checks.on = True
    v = window(scene)
    hover(v, window_point(v, (scene.x[7], scene.y[7], 0.0)), ticks=3)
    assert v.pointing.picking.hovered == 7
    rows = {name: (g, c, d) for name, g, c, d in v.pointing.hover_report.check}
    assert rows["x"] == (f"{gpu[0, 7]:.10g}", f"{cpu[0, 7]:.10g}", f"{gpu[0, 7] - cpu[0, 7]:+.3g}")
    assert rows["y"][2] == "+0"


# --- on a GPU ------------------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_gpu_tooltip_values_come_from_the_device_state(window):
    v = window(balls_with_known_state("gpu"))
    assert v.view.points.feed.path == "CUDA–GL interop"
    for item in range(len(KNOWN)):
        pos = v.scene.state()[0]
        hover(v, window_point(v, pos[item, :3]), ticks=3)
        assert v.pointing.picking.used == DEVICE_RAY
        check_tooltip_is_the_state(v, v.pointing.picking.hovered)
        assert v.pointing.picking.hovered == item
        assert v.pointing.hover_report.values["CUDA"].startswith(f"block {item // v.scene.knobs.block}, thread ")


@pytest.mark.gpu
def test_a_planted_gpu_fault_shows_both_values_in_the_tooltip(window):
    from sim.gpu import cuda

    with cuda.planted("sim/balls/proximity.cu", "-DPLANT_MARGIN=1.0f"):
        scene = create_scene("balls", preset="t", backend="gpu", variant="global")
    scene.checks.set_on(True)
    for _ in range(3):
        scene.advance_frame()
    marked = np.flatnonzero(scene.checks.mismatch)
    assert marked.size, "the wrong margin makes the GPU miss pairs"
    v = window(scene)
    pos = scene.state()[0]
    shown = None
    for item in marked[:40]:
        hover(v, window_point(v, pos[item, :3]), ticks=3)
        if v.pointing.picking.hovered in set(marked.tolist()) and v.pointing.hover_report.check:
            shown = v.pointing.hover_report
            break
    assert shown is not None, "a red ball on the surface is hovered"
    rows = {name: (g, c, d) for name, g, c, d in shown.check}
    gpu_count, cpu_count, difference = rows["partners"]
    assert int(gpu_count) != int(cpu_count) and difference == f"{int(gpu_count) - int(cpu_count):+d}"
    assert "only" in rows["partner ids"][2]
