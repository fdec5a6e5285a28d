"""A user's kernel that writes NaN, inf or garbage (huge values, negative counts, indices that name no item):
every scene's stage hands such an output to the scene, and its readouts, plots, tooltips, colour scales and
statistics take it for several frames without an exception, mark what is wrong, and the scene steps on."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from gl_support import needs_egl
from test_heat_scene_view import SIZE, cell_pixel

from sim import create_scene
from sim.framework import finite
from sim.framework.colormap import MISMATCH_RGBA
from sim.framework.scales import data_span
from sim.registry import SCENES
from viewer.pick.tooltip import report

FRAMES = 3


def adapter_of(scene: str, stage: str):
    module, _, name = SCENES[scene].user_stage(stage).adapter.partition(":")
    return getattr(importlib.import_module(module), name)()


def poisoned(values: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """A copy with garbage in items 1, 3, 4 and 6 of ``rows`` (floats: NaN, inf, -inf, the dtype's largest;
    integers: -7, the largest, the smallest, rows + 5 (an index past the end)), and which items it hit."""
    out = np.array(values, copy=True)
    per_row = out.reshape(rows, -1)
    if out.dtype.kind == "f":
        garbage = (np.nan, np.inf, -np.inf, np.finfo(out.dtype).max)
    else:
        info = np.iinfo(out.dtype)
        garbage = (
            info.max - 3 if out.dtype.kind == "u" else -7,
            info.max,
            info.max - 1 if out.dtype.kind == "u" else info.min,
            rows + 5,
        )
    hit = np.zeros(rows, bool)
    for row, value in zip((1, 3, 4, 6), garbage, strict=True):
        per_row[row, 0] = value
        hit[row] = True
    return out, hit


def readouts(scene) -> dict:
    """Everything the viewer reads of the scene in a frame: each colour mode's view (its values drawn), the
    statistics, and the tooltip of a few items. Returns the stats."""
    for mode in scene.color_modes:
        view = scene.view(mode)
        if view.kind == "points":
            positions, quantity = view.host()
            assert positions.shape[0] == view.count
            if not view.categorical and quantity.size:
                lo, hi = data_span(quantity)
                assert np.isfinite(lo) and np.isfinite(hi) and lo < hi
        elif view.kind == "field":
            lo, hi = data_span(view.host())
            assert np.isfinite(lo) and np.isfinite(hi) and lo < hi
        else:
            for plot in view.plots:
                for limits in (plot.x_limits, plot.y_limits):
                    assert limits is None or all(np.isfinite(limits)), plot.title
    stats = scene.stats()
    for stat in scene.spec.stats:
        stat.text(stats)
    for item in range(8):
        rep = report(scene, item)
        assert not rep.error, (item, rep.error)
    return stats


def red_series(plot):
    return [s for s in plot.series if s.color == MISMATCH_RGBA]


def drive(scene, stage: str, verify: bool, poison_outputs, frames: int = FRAMES):
    """``frames`` user steps whose outputs ``poison_outputs(expected) -> (outputs, hit)`` spoils, each followed by
    the viewer's readouts; returns the last (stats, hit)."""
    adapter = adapter_of(scene.spec.name, stage)
    for _ in range(frames):
        inputs = scene.user_stage_inputs("proximity")
        expected = adapter.expected(inputs)
        got, hit = poison_outputs(expected)
        stage = scene.spec.user_stages[0].name
        scene.apply_user_stage(stage, inputs, got, adapter.compare(inputs, expected, got) if verify else None)
        stats = readouts(scene)
        assert stats[finite.STAT_KEY] != finite.CLEAN
    return stats, hit


@pytest.fixture(params=[True, False], ids=["verifying", "not verifying"])
def verify(request):
    return request.param


def test_durbin_lpc_poles_and_plots_take_nan_and_inf(verify):
    scene = create_scene("durbin", preset="lpc")
    frames = scene.lpc.frames

    def spoil(expected):
        y, hit = poisoned(expected["y"], frames)
        y[scene.frame + 1] = np.nan  # the frame the step moves on to: the plots show it
        hit[scene.frame + 1] = True
        hit[6] = False  # the largest float64: a number, if an absurd one
        return {**expected, "y": y}, hit

    stats, hit = drive(scene, "batched", verify, spoil)
    shown = scene.frame
    note = stats[finite.STAT_KEY]
    assert "NaN" in note and "inf" in note and note.endswith("(4 frames, marked red)")
    assert np.flatnonzero(~scene.lpc.finite_frames).tolist() == np.flatnonzero(hit).tolist()
    spectrogram, z_plane, spectrum, reflection, errors = scene.view("plain").plots
    assert scene.lpc.poles(shown).size == 0
    assert "none" in z_plane.title and red_series(z_plane)[0].label.startswith(f"a_1..a_p hold {scene.lpc.order} NaN")
    assert red_series(spectrogram)[0].items.tolist() == np.flatnonzero(hit).tolist()
    assert red_series(spectrum) and "NaN" in red_series(spectrum)[0].label
    assert "no roots" in scene.inspector.describe(shown)["largest |pole|"]
    assert scene.inspector.describe(shown - 1)["largest |pole|"].endswith("(stable)")  # a frame the kernel got right
    before = scene.settings.frame
    scene.run_frame(1)  # the scene's own solve: every frame numbers again
    assert scene.settings.frame != before and scene.stats()[finite.STAT_KEY] == finite.CLEAN
    assert scene.lpc.poles(scene.frame).size == scene.lpc.order


def test_durbin_lpc_huge_coefficients_give_no_poles_and_say_so():
    scene = create_scene("durbin", preset="lpc")
    y = scene.lpc.y.copy()
    y[:, 0] = np.finfo(np.float64).max
    scene.apply_user_stage("batched", {}, {"y": y, "alphas": scene.lpc.alphas.copy()}, None)
    z_plane = scene.view("plain").plots[1]
    assert readouts(scene)[finite.STAT_KEY] == finite.CLEAN  # finite numbers, just absurd ones
    assert all(np.isfinite(s.x).all() for s in z_plane.series)


def test_durbin_recursion_plots_take_poisoned_host_copies():
    """The single-system presets' plots and tooltips read host copies of y, alphas and betas."""
    scene = create_scene("durbin", preset="ar")
    scene.advance(12)
    k = scene.host["y"].shape[0]
    assert k >= 8
    for name in ("y", "alphas", "betas"):
        scene.host[name], _ = poisoned(scene.host[name], k)
    scene.readout.changed()
    stats = readouts(scene)
    assert stats[finite.STAT_KEY] == "1 NaN, 2 inf in y; 1 NaN, 2 inf in alphas; 1 NaN, 2 inf in betas (marked red)"
    y_plot, alphas_plot, beta_plot, _ = scene.view("plain").plots
    assert red_series(y_plot)[0].items.tolist() == [1, 3, 4]
    assert red_series(alphas_plot) and red_series(beta_plot)
    assert beta_plot.y_limits is None and y_plot.y_limits is None  # the largest float64 leaves no room: fit


def test_sdh_impossible_counts_are_marked_and_not_drawn(verify):
    scene = create_scene("sdh", n=400)
    stats, hit = drive(
        scene,
        "histogram",
        verify,
        lambda e: (lambda h: ({"hist": h[0]}, h[1]))(poisoned(e["hist"], e["hist"].shape[0])),
    )
    bad = np.flatnonzero(hit).tolist()
    assert stats[finite.STAT_KEY] == "3 buckets below 0 or above N(N-1)/2 (marked red)"  # row 6 is a count of 85
    histogram = scene.view("plain").plots[0]
    marked = red_series(histogram)[0]
    assert marked.items.tolist() == [1, 3, 4] and "impossible" in marked.label
    assert np.isnan(histogram.series[0].y[[1, 3, 4]]).all() and bad == [1, 3, 4, 6]
    assert (
        stats["pairs"]
        == sum(scene.counts.tolist())
        == 400 * 399 // 2
        - sum(  # exact, never a wrapped int64
            int(c)
            for c in adapter_of("sdh", "histogram").expected(scene.user_stage_inputs("histogram"))["hist"][[1, 3, 4, 6]]
        )
        + (-4 - 1 - 2 + 85)
    )
    assert "impossible" in scene.inspector.describe(3)["share"]
    scene.advance_frame()
    assert scene.stats()[finite.STAT_KEY] == finite.CLEAN and scene.stats()["pairs"] == 400 * 399 // 2


def test_heat_nan_and_inf_cells_are_counted_and_the_scale_stays_finite(verify):
    scene = create_scene("heat", preset="plate", n=64 * 48)

    def spoil(expected):
        out, hit = poisoned(expected["tout"], expected["tout"].shape[0])
        return {"tout": out}, hit

    stats, _ = drive(scene, "step", verify, spoil)
    assert stats[finite.STAT_KEY].endswith("cells (drawn red)") and "NaN" in stats[finite.STAT_KEY]
    assert "of the finite cells" in stats["temperature"] and "nan" not in stats["temperature"]
    field = scene.view(next(iter(scene.color_modes))).host()
    assert np.isnan(field).any() and np.isinf(field).any()
    lo, hi = data_span(field)
    assert hi <= np.finfo(np.float32).max and lo < hi
    steps = scene.steps
    scene.advance_frame()
    assert scene.steps > steps
    readouts(scene)


def test_particles_refuse_forces_no_pair_could_give_and_keep_moving(verify):
    scene = create_scene("particles", n=400)
    for _ in range(5):
        scene.advance(1)

    def spoil(expected):
        ax, hit = poisoned(expected["ax"], expected["ax"].shape[0])
        return {"ax": ax, "ay": expected["ay"]}, hit

    stats, hit = drive(scene, "forces", verify, spoil)
    assert stats[finite.STAT_KEY] == "4 particles' forces refused (1 NaN, 2 inf): they coast, marked red"
    assert np.flatnonzero(scene.checks.marked(scene.n)).tolist() == np.flatnonzero(hit).tolist()
    assert scene.view(next(iter(scene.color_modes))).mask[hit].all()
    x, y, vx, vy = scene.arrays()
    assert all(np.isfinite(a).all() for a in (x, y, vx, vy))
    assert ((x >= 0) & (x <= scene.size)).all()
    steps = scene.steps
    scene.advance_frame()  # the scene's own step: the marks go
    assert scene.steps > steps and scene.checks.marked(scene.n) is None
    assert scene.stats()[finite.STAT_KEY] == finite.CLEAN


def test_balls_garbage_lists_mark_their_balls(verify):
    scene = create_scene("balls", preset="T")
    scene.advance(7)

    def spoil(expected):
        count, hit = poisoned(expected["count"], expected["count"].shape[0])
        return {"count": count, "partners": expected["partners"]}, hit

    stats, hit = drive(scene, "proximity", verify, spoil)
    assert stats[finite.STAT_KEY].startswith("4 counts outside 0..32 (clipped), ")  # the huge ones read 32 slots
    assert int(np.count_nonzero(scene.checks.marked(scene.n))) == 4
    steps = scene.steps
    scene.advance_frame()
    assert scene.steps > steps and scene.stats()[finite.STAT_KEY] == finite.CLEAN


def test_balls_partners_that_name_no_ball_are_counted():
    scene = create_scene("balls", preset="T")
    scene.advance(7)
    adapter = adapter_of("balls", "proximity")
    inputs = scene.user_stage_inputs("proximity")
    expected = adapter.expected(inputs)
    k = int(inputs["k"])
    partners = expected["partners"].reshape(-1, k).copy()
    listed = np.flatnonzero(expected["count"] > 0)[:5]
    partners[listed, 0] = [-1, scene.n, scene.n + 100, 2**31 - 1, -(2**31)]
    scene.apply_user_stage("proximity", inputs, {"count": expected["count"], "partners": partners.ravel()}, None)
    assert readouts(scene)[finite.STAT_KEY] == "5 partners naming no ball (dropped): those balls marked red"
    assert int(np.count_nonzero(scene.checks.marked(scene.n))) == 5


def test_finite_helpers():
    values = np.array([1.0, np.nan, np.inf, -np.inf, 2.0, np.nan, np.nan])
    assert finite.text(values) == "3 NaN, 2 inf" and finite.text(np.arange(4)) == ""
    assert finite.span(values) == (1.0, 2.0) and finite.span(np.full(2, np.nan)) == (0.0, 1.0)
    assert data_span(values) == (1.0, 2.0) and data_span(np.array([np.inf, np.nan])) == (0.0, 1.0)
    marks = finite.marks(np.arange(7.0), values, 5.0, np.arange(7) + 10)
    assert marks[0].items.tolist() == [11, 12, 13, 15, 16] and (marks[0].y == 5.0).all()
    assert marks[0].label == "3 NaN, 2 inf (not drawn)" and finite.marks(np.arange(2.0), np.ones(2), 0.0) == []
    assert finite.notes({"y": "1 NaN", "alphas": ""}, "1 frames") == "1 NaN in y (1 frames, marked red)"


# --- drawn: the colour scale's marks, and plots of garbage through ImPlot ----------------------------------
@needs_egl
def test_inf_cells_are_drawn_in_the_highlight_colour_like_nan_ones():
    from viewer.headless import render_pixels
    from viewer.render.colormaps import highlight_color

    scene = create_scene("heat", preset="plate", n=120 * 120)
    adapter = adapter_of("heat", "step")
    inputs = scene.user_stage_inputs("step")
    out = adapter.expected(inputs)["tout"].copy()
    out[30:50, 30:50] = np.inf  # cells (30..49, 30..49): inf; (70..89, 70..89): NaN; one cell absurd but finite
    out[70:90, 70:90] = np.nan
    out[100, 100] = np.finfo(np.float32).max
    scene.apply_user_stage("step", inputs, {"tout": out}, None)
    pixels = render_pixels(scene, *SIZE).astype(int)
    mark = np.array(highlight_color("inferno")) * 255
    for i, j in ((40, 40), (80, 80)):
        assert np.abs(pixels[cell_pixel(scene, i, j)] - mark).max() <= 3, (i, j)
    assert np.abs(pixels[cell_pixel(scene, 60, 15)] - mark).max() > 20, "a cell of numbers is not marked"
    assert readouts(scene)[finite.STAT_KEY] == "400 NaN, 400 inf cells (drawn red)"


@needs_egl
@pytest.mark.parametrize("name", ["durbin", "sdh"])
def test_poisoned_plots_are_drawn(name):
    from viewer.headless import render_pixels

    if name == "durbin":
        scene = create_scene("durbin", preset="lpc")
        y = scene.lpc.y.copy()
        y[:, 2] = np.nan
        y[::3, 5] = np.inf
        scene.apply_user_stage("batched", {}, {"y": y, "alphas": scene.lpc.alphas.copy()}, None)
    else:
        scene = create_scene("sdh", n=400)
        adapter = adapter_of("sdh", "histogram")
        inputs = scene.user_stage_inputs("histogram")
        hist, _ = poisoned(adapter.expected(inputs)["hist"], scene.counts.shape[0])
        scene.apply_user_stage("histogram", inputs, {"hist": hist}, None)
    pixels = render_pixels(scene, 1000, 700).astype(int)
    red = (pixels[..., 0] > 200) & (pixels[..., 1] < 60) & (pixels[..., 2] < 60)
    assert red.sum() > 20, "the red marks are drawn"


@pytest.mark.gpu
def test_heat_summary_on_the_gpu_counts_nan_and_inf_cells():
    """The reduction where the field is: the finite cells' min, mean and max, and the NaN and inf ones."""
    import cupy

    scene = create_scene("heat", preset="plate", n=120 * 120, backend="gpu")
    scene.advance_frame()
    field = scene.gpu.field
    field[5:9, 5:10] = cupy.nan  # 20 cells
    field[20:23, 20:23] = cupy.inf  # 9 cells
    field[30, 30] = -cupy.inf
    host = scene.gpu.get()
    finite_cells = host[np.isfinite(host)]
    lo, mean, hi, nan, inf = scene.field_summary()
    assert (nan, inf) == (20, 10)
    assert (lo, hi) == (float(finite_cells.min()), float(finite_cells.max()))
    assert mean == pytest.approx(float(finite_cells.mean(dtype=np.float64)), rel=1e-9)
    lo, hi = data_span(field, cupy)
    assert (lo, hi) == (float(finite_cells.min()), float(finite_cells.max()))
