"""What the viewer reads of the heat scene on the CPU: the twin's field handed over, stats, cells described,
which CUDA thread writes a cell (no GPU needed); headless pictures (EGL) and the scene in a window (Xvfb),
drawn, painted and answering its keys."""

import math

import numpy as np
import pytest
from test_heat_scene import event, scene, segment_distance

from sim.heat import SPEC, kernels
from sim.heat.cells import thread_of
from sim.registry import create_scene

# --- what the viewer reads -----------------------------------------------------------------------


def test_the_view_hands_over_the_twin_s_field_in_cell_units():
    s = scene("seed", n=300 * 200)
    s.controls.set_param("factor", 0.2)
    s.advance_frame()
    view = s.view("temperature")
    values = view.host()
    assert np.shares_memory(values, s.cpu.field), "the CPU backend's field is handed over, not copied"
    np.testing.assert_array_equal(values, s.cpu.field)
    assert view.shape == (s.nj, s.ni) == values.shape and values.dtype == np.float32
    assert view.extent == (0.0, 0.0, float(s.ni), float(s.nj)) and view.write is None
    assert view.value_range == (0.0, 100.0) and view.colormap == "inferno" and view.legend.label == "temperature"
    assert s.color_scales.ranges["temperature"] == (0.0, 100.0), "the colours span the DLI's temperatures"
    assert view.tiles is None and list(s.color_modes) == ["temperature"]


def test_stats_read_the_field():
    s = scene("seed")
    lo, mean, hi = s.temperature_summary()
    f = s.cpu.field
    assert (lo, hi) == (float(f.min()), float(f.max())) and mean == pytest.approx(float(f.mean(dtype=np.float64)))
    stats = s.stats()
    assert stats["grid"] == f"{s.ni:,} x {s.nj:,} ({s.n:,} cells)" and stats["temperature"].startswith(f"min {lo:.4g}")
    for stat in SPEC.stats:
        assert stat.text(stats).startswith(stat.label)


def test_a_cell_is_described_by_its_value_and_next_step():
    s = scene("seed", n=60 * 40)
    s.controls.set_param("factor", 0.2)
    i, j = 17, 23
    item = j * s.ni + i
    values = s.inspector.describe(item)
    assert values["cell"] == f"i {i}, j {j}"
    assert float(values["temperature"]) == pytest.approx(s.cpu.field[j, i], rel=1e-5)
    before = float(s.cpu.field[j, i])
    s.run_frame(1)
    assert float(values["next step"].split()[0]) == pytest.approx(float(s.cpu.field[j, i]) - before, rel=1e-2)
    assert "held" in s.inspector.describe(0)["boundary"] and "held" in s.inspector.describe(s.n - 1)["boundary"]
    assert "CUDA" not in values and s.inspector.describe_check(item) == []
    for bad in (-1, s.n):
        with pytest.raises(IndexError):
            s.inspector.describe(bad)


@pytest.mark.parametrize(
    "kernel, block, k",
    [
        ("global", (32, 8), 1),
        ("shared", (64, 4), 1),
        ("pitched", (128, 2), 1),
        ("temporal", (32, 8), 7),
        ("temporal", (64, 4), 3),
        ("temporal", (256, 1), 8),
    ],
)
def test_the_thread_that_writes_a_cell(kernel, block, k):
    ni, nj, rows = 700, 90, 9
    tiles = kernels.tiles(kernel, ni, nj, block, k, rows)
    blocks = tiles.block_map(ni, nj)
    for j in range(0, nj, 7):
        for i in range(ni):
            (bx, by), (tx, ty) = thread_of(tiles, i, j)
            assert by * tiles.grid[0] + bx == blocks[j, i]
            assert 0 <= tx < block[0] and 0 <= ty < block[1]
            if kernel == "temporal":  # the lane's float4 holds the cell, and the lane writes
                strip = bx * (block[0] // 32) + tx // 32
                first = strip * kernels.width(k) - kernels.halo(k) + kernels.COLS * (tx % 32)
                assert first <= i < first + kernels.COLS
                assert kernels.halo(k) // 4 <= tx % 32 < (kernels.halo(k) + kernels.width(k)) // 4
                assert (by * block[1] + ty) * rows <= j < (by * block[1] + ty + 1) * rows
            else:
                assert (bx * block[0] + tx, by * block[1] + ty) == (i, j % (tiles.grid[1] * block[1]))


# --- headless pictures (EGL) ------------------------------------------------------------------------


def _egl():
    from gl_support import egl_problem

    return egl_problem()


needs_egl = pytest.mark.skipif(_egl() is not None, reason=str(_egl()))
SIZE = (600, 400)


def cell_pixel(s, i, j):
    """(row from the top, column) of cell (i, j)'s centre under the default camera of SIZE."""
    from viewer.render.view import default_camera

    camera = default_camera(s.view("temperature"))
    width, height = SIZE
    clip = camera.projection_matrix(width / height) @ camera.view_matrix() @ np.array([i + 0.5, j + 0.5, 0.0, 1.0])
    ndc = clip[:3] / clip[3]
    return int((1 - ndc[1]) / 2 * height), int((ndc[0] + 1) / 2 * width)


@needs_egl
def test_the_field_is_drawn_and_painting_shows():
    from viewer.headless import render_pixels
    from viewer.render.colormaps import ramp
    from viewer.render.view import BACKGROUND

    s = scene("plate", n=120 * 120)
    before = render_pixels(s, *SIZE).astype(int)
    background = np.all(np.abs(before - np.array(BACKGROUND) * 255) <= 2, axis=2)
    assert 0.2 < np.mean(~background) < 0.95, "the field covers part of the picture"
    s.controls.set_tool_value("radius", 10.0)
    s.controls.set_tool_value("temperature", 100.0)
    s.pointer(event("press", 60, 40))
    s.pointer(event("drag", 60, 80))
    s.controls.set_tool_value("radius", 8.0)
    s.pointer(event("press", 90, 90, "right"))
    after = render_pixels(s, *SIZE).astype(int)
    hot, cold = ramp("inferno")[-1] * 255, ramp("inferno")[0] * 255
    for j in (40, 60, 80):
        assert np.abs(after[cell_pixel(s, 60, j)] - hot).max() <= 3
    assert np.abs(after[cell_pixel(s, 90, 90)] - cold).max() <= 3
    assert np.abs(before[cell_pixel(s, 60, 60)] - hot).max() > 20, "the painted place was not hot before"
    changed = np.any(np.abs(after - before) > 20, axis=2)
    assert 0.01 < changed.mean() < 0.2


# --- in a window (Xvfb) ---------------------------------------------------------------------------


def _display_problem():
    from viewer.window.display import display_problem

    return display_problem()


def _press(v, symbol, modifiers=0):
    v.window.dispatch_event("on_key_press", symbol, modifiers)
    v.window.dispatch_event("on_key_release", symbol, modifiers)
    v.tick()
    v.tick()


def _window_point(v, i, j):
    """Window coordinates (y from the bottom) of cell (i, j)'s centre."""
    fb = v.window.get_framebuffer_size()
    proj = v.camera.projection_matrix(fb[0] / fb[1], v.covered_right(fb) / fb[0])
    clip = proj @ v.camera.view_matrix() @ np.array([i + 0.5, j + 0.5, 0.0, 1.0])
    width, height = v.window.get_size()
    return int(round((clip[0] / clip[3] + 1) / 2 * width)), int(round((clip[1] / clip[3] + 1) / 2 * height))


@pytest.mark.window
@pytest.mark.skipif(_display_problem() is not None, reason=f"needs a display: {_display_problem()}")
def test_heat_in_a_window_draws_paints_and_answers_its_keys(tmp_path):
    from viewer.image import read_image
    from viewer.keys import key, mouse
    from viewer.window.app import Viewer

    v = Viewer(create_scene("heat", preset="plate", n=200 * 200), 900, 600, max_fps=None, screenshot_dir=tmp_path)
    try:
        for _ in range(3):
            assert v.tick()
        assert v.view.kind == "field" and not v.scene.controls.tool_on
        v.controller.set_tool(True)
        steps = v.scene.steps
        v.tick()
        assert v.scene.steps == steps + SPEC.steps_per_frame
        v.controller.paused = True
        v.tick()
        before = v.scene.cpu.field.copy()
        radius = v.scene.controls.tool_values["radius"]
        far = np.ones_like(before, bool)
        for button, (i0, j0), (i1, j1), value in (
            (mouse.LEFT, (40, 100), (160, 100), 100.0),
            (mouse.RIGHT, (100, 40), (100, 160), 0.0),
        ):
            start, end = _window_point(v, i0, j0), _window_point(v, i1, j1)
            v.window.dispatch_event("on_mouse_motion", *start, 0, 0)
            v.tick()
            v.window.dispatch_event("on_mouse_press", *start, button, 0)
            v.window.dispatch_event("on_mouse_drag", *end, end[0] - start[0], end[1] - start[1], button, 0)
            v.window.dispatch_event("on_mouse_release", *end, button, 0)
            v.tick()
            field = v.scene.cpu.field
            for t in np.linspace(0, 1, 9):
                i, j = round(i0 + t * (i1 - i0)), round(j0 + t * (j1 - j0))
                assert field[j, i] == value, f"cell {(i, j)} on the stroke"
            far &= segment_distance(v.scene.ni, v.scene.nj, (i0, j0), (i1, j1)) > radius + 2  # a pixel's slack
        np.testing.assert_array_equal(field[far], before[far])
        _press(v, key.F12)
        shot = read_image(v.last_screenshot).astype(int)
        assert shot[:, : shot.shape[1] - 420].std() > 20
        if v.controller.gpu.reason() is not None:
            for symbol, modifiers in ((key.A, 0), (key.Q, 0), (key.Q, key.MOD_SHIFT), (key.V, 0), (key.C, 0)):
                _press(v, symbol, modifiers)
                assert "needs a GPU" in v.message and v.scene.backend == "cpu"
                assert v.controller.color_mode == "temperature"
        _press(v, key.S)
        assert v.scene.steps == steps + SPEC.steps_per_frame + 1
        _press(v, key.R)
        assert v.scene.steps == 0 and v.scene.cpu.field[100, 100] == 0.0
        v.camera.zoom(1e-9)  # all the way in: a couple of cells across
        assert 2 * v.camera.distance * math.tan(math.radians(v.camera.fov_y) / 2) <= 2.01
    finally:
        v.close()
