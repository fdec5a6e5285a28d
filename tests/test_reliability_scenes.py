"""The scenes' own defects found by the hostile-input and newcomer trials: the durbin LPC plots after
the first frame, pins that follow the item and not its index, legends off the data, sdh's g(r) of a
finite cube."""

import numpy as np
import pytest
from gl_support import needs_egl

from sim.contract import Plot, PlotsView, Series
from sim.registry import create_scene

RED = (1.0, 0.1, 0.1, 1.0)


def _red(pixels: np.ndarray) -> np.ndarray:
    pixels = pixels.astype(int)
    return (pixels[..., 0] > 200) & (pixels[..., 1] < 90) & (pixels[..., 2] < 90)


# --- 2. the durbin LPC plots, frame after frame ---------------------------------------------------------


def test_lpc_plots_hand_over_finite_arrays_of_the_right_length_frame_after_frame():
    from sim.durbin.lpc_mode import NFFT

    scene = create_scene("durbin", preset="lpc")
    order = scene.lpc.order
    frames = set()
    for _ in range(40):
        scene.run_frame(1)
        spectrogram, z_plane, spectrum, reflection, errors = scene.view("plain").plots
        frames.add(scene.frame)
        for plot in (spectrogram, z_plane, spectrum, reflection, errors):
            for series in plot.series:
                x, y = np.asarray(series.x, np.float64), np.asarray(series.y, np.float64)
                assert x.shape == y.shape, f"{plot.title}: {series.label}"
                assert np.isfinite(x).all() and np.isfinite(y).all(), f"{plot.title}: {series.label}"
        for series in spectrum.series:
            assert series.x.shape == (NFFT // 2 + 1,)
            assert -310.0 < series.y.min() and series.y.max() < 200.0, "dB of a 16-bit sound"
        alphas = reflection.series[1].y
        assert alphas.shape == (order,) and np.all(np.abs(alphas) < 1.0)
        e = errors.series[0].y
        assert e.shape == (order + 1,) and e[0] == 1.0 and np.all((e > 0) & (e <= 1.0))
        assert np.all(np.diff(e) <= 0), "the prediction error never grows with the order"
        poles = z_plane.series[1]
        assert poles.x.shape == (order,) and np.all(np.hypot(poles.x, poles.y) < 1.0), "a stable predictor"
    assert len(frames) == 40, "a step moves to the next frame"


class Curve:
    """A plots scene of one red curve with an auto-fitted y axis, its title and height set by the test."""

    color_modes = {"plain": "Plain"}

    def __init__(self):
        self.title, self.level = "curve", 0.0

    def view(self, color_mode):
        x = np.linspace(0.0, 8.0, 257)
        y = self.level + 50.0 + 40.0 * np.sin(x)
        return PlotsView(
            [Plot(self.title, [Series("curve", x, y, "line", RED)], "x", "y", x_limits=(0.0, 8.0))], columns=1
        )


@needs_egl
def test_a_plot_whose_title_changes_every_frame_keeps_its_fitted_axes():
    """As in the window: one ImGui frame a displayed frame. The title names the frame shown (durbin's
    "frame 22: ..."); the curve stays on its axes every frame, not only the first."""
    from viewer.gpu.egl import standalone_context
    from viewer.panel.gui import Gui
    from viewer.render.offscreen import Offscreen
    from viewer.render.view import SceneView

    size = (400, 300)
    ctx = standalone_context()
    gui, view, target = Gui(ctx), SceneView(ctx), Offscreen(ctx, size)
    scene = Curve()
    try:
        drawn = []
        for frame in range(8):
            scene.title = f"frame {max(frame - 2, 0)}: the curve"  # the first two frames lay the plot out
            view.take(scene.view("plain"))
            gui.new_frame(size, size, 1 / 60)
            view.draw_plots((0.0, 0.0, *map(float, size)), lambda *_: None)
            gui.end_frame()
            view.draw(target.fbo, None, size)
            gui.draw(target.fbo)
            drawn.append(int(_red(target.read_rgb()).sum()))
        steady = drawn[1]
        assert steady > 300 and min(drawn[2:]) > 0.8 * steady, f"red pixels of the curve, frame by frame: {drawn}"
    finally:
        gui.release()
        target.release()
        ctx.release()


@needs_egl
def test_a_headless_picture_fits_its_axes_to_its_own_data():
    """A recording's frames come steps apart: each picture's axes fit the data it shows, not the last
    picture's (ImPlot fits at the end of a frame)."""
    from viewer.headless import HeadlessRenderer

    scene = Curve()
    with HeadlessRenderer(400, 300) as renderer:
        drawn = []
        for frame, level in enumerate((0.0, 1000.0, -5000.0, 0.0)):
            scene.title, scene.level = f"frame {frame}", level
            renderer.render(scene)
            drawn.append(int(_red(renderer.pixels()).sum()))
    assert min(drawn) > 0.8 * max(drawn), f"red pixels of the curve, picture by picture: {drawn}"


@needs_egl
def test_lpc_recording_draws_the_spectrum_on_its_axes_in_every_frame():
    from sim.durbin.lpc_plots import ENVELOPE_RGBA
    from viewer.headless import HeadlessRenderer

    envelope = np.array(ENVELOPE_RGBA[:3]) * 255
    scene = create_scene("durbin", preset="lpc")
    with HeadlessRenderer(1280, 800) as renderer:
        drawn = []
        for _ in range(4):
            scene.run_frame(1)
            renderer.render(scene)
            spectrum = renderer.pixels()[380:600, 40:630].astype(int)  # the spectrum plot (left column, middle)
            on_curve = np.abs(spectrum - envelope).max(axis=2) < 40
            drawn.append(int(on_curve.any(axis=0).sum()))
    assert min(drawn) > 150, f"columns the LPC envelope crosses (of 590), frame by frame: {drawn}"


# --- 4. a pin follows its item, whatever the scene does to the order ------------------------------------


def _pin(scene, item: int):
    from viewer.pick.picker import Picking

    picking = Picking()
    picking.hovered, picking.hovered_kind = item, "points"
    assert picking.pin(scene) == item
    return picking


def _drip_with_drops(backend: str = "cpu", cuda_proximity: bool = True):
    """The drip preset topped up and losing balls over the trough's ends (a drop at most passes)."""
    scene = create_scene("balls", preset="drip", n=300, backend=backend)
    scene.controls.set_toggle("cuda_proximity", cuda_proximity)
    while scene.n < 300 or scene.pass_log.count < 400:
        scene.run_frame(1)
    return scene


def _resting(scene) -> int:
    """A ball at rest in the trough, late in the order (balls before it fall off and are dropped)."""
    pos, vel, _ = scene.state()
    speed = np.linalg.norm(vel[:, :3], axis=1)
    late = np.arange(scene.n // 2, scene.n)
    return int(late[np.argmin(speed[late])])


@pytest.mark.parametrize(
    "backend, cuda_proximity",
    [
        ("cpu", False),
        pytest.param("gpu", True, marks=pytest.mark.gpu),  # the pass reorders the balls and drops the fallen
        pytest.param("gpu", False, marks=pytest.mark.gpu),  # the CPU's pass drops them and reloads the device
    ],
)
def test_a_pinned_ball_in_the_drip_stays_the_same_ball_across_proximity_passes(backend, cuda_proximity):
    scene = _drip_with_drops(backend, cuda_proximity)
    item = _resting(scene)
    picking = _pin(scene, item)
    key = picking.pinned.key
    before = scene.state()[0][item, :3].copy()
    indices = {item}
    n_before = scene.n
    dropped = 0
    for _ in range(60 * 6):  # 60 proximity passes
        scene.run_frame(1)
        dropped += max(0, n_before - scene.n)
        n_before = scene.n
        item = picking.pinned_item(scene, "points")
        assert item is not None, "the pinned ball is still there"
        assert scene.inspector.item_key(item) == key
        assert scene.inspector.describe(item)["ball"] == f"#{key}"
        where = scene.state()[0][item, :3]
        assert np.linalg.norm(where - before) < 0.5, f"the pin jumped from {before} to {where}"
        before = where.copy()
        indices.add(item)
    assert dropped > 0 and len(indices) > 1, "balls before the pinned one were dropped: its index moved"


def test_dripped_balls_get_ids_no_ball_has_had():
    scene = _drip_with_drops()
    ids = scene.host.ids
    assert np.unique(ids).size == ids.size
    assert ids.max() >= scene.n, "balls were dropped and new ones dripped after them"
    first = set(ids.tolist())
    for _ in range(60 * 6):
        scene.run_frame(1)
    new = set(scene.host.ids.tolist()) - first
    assert new and min(new) > max(first), "a new ball never takes a dropped ball's id"


# --- 11. legends off the data -------------------------------------------------------------------------


class Band:
    """A plot filled edge to edge by a red band, with a long legend entry (none: ``legend`` None), its legend
    where the test says."""

    color_modes = {"plain": "Plain"}

    def __init__(self, legend: str | None):
        self.legend = legend

    def view(self, color_mode):
        x = np.array([0.0, 8.0])
        label = "a band that fills the whole plot area, edge to edge" if self.legend else "##band"
        band = Series(label, x, np.ones(2), "shaded", RED, y2=np.zeros(2))
        return PlotsView(
            [Plot("band", [band], "x", "y", x_limits=(0.0, 8.0), y_limits=(0.0, 1.0), legend=self.legend or "nw")],
            columns=1,
        )


def _band_share(legend: str | None) -> float:
    """The share of the plot area (the bounding box of the band's fill colour) where the band shows."""
    from viewer.headless import render_pixels

    pixels = render_pixels(Band(legend), 500, 360).astype(int)
    reddish = pixels[pixels[..., 0] - pixels[..., 1] > 15]
    colours, counts = np.unique(reddish, axis=0, return_counts=True)
    fill = colours[np.argmax(counts)]
    band = np.abs(pixels - fill).max(axis=2) <= 2
    rows, cols = np.flatnonzero(band.any(axis=1)), np.flatnonzero(band.any(axis=0))
    return float(band[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1].mean())


@needs_egl
def test_a_legend_placed_above_the_plot_leaves_the_data_uncovered():
    bare = _band_share(None)  # no legend: only the grid lines cross the band
    assert _band_share("nw") < bare - 0.03, "inside a corner the legend covers the band"
    assert _band_share("above") > bare - 0.01, "above the plot it covers nothing (the grid is a little denser)"


def test_lpc_plots_put_their_legends_where_their_data_is_not():
    scene = create_scene("durbin", preset="lpc")
    spectrogram, z_plane, spectrum, reflection, errors = scene.view("plain").plots
    for plot in (spectrogram, spectrum, reflection):  # a heatmap, spectra and bars reach every corner
        assert plot.legend == "above", plot.title
    e = errors.series[0].y
    assert errors.legend == "ne" and e[-1] < 0.1 * e[0], "E_m falls with the order: the top right is free"


# --- 11. g(r) of a finite box -------------------------------------------------------------------------


def test_uniform_atoms_give_g_of_r_near_one_across_the_cube():
    from sim.sdh import data

    scene = create_scene("sdh", n=5000)
    scene.run_frame(1)
    _, rdf = scene.view("plain").plots
    r, g = rdf.series[0].x, rdf.series[0].y
    side = data.BOX_SIZE
    near = r <= 0.9 * side
    assert near.sum() >= 40
    assert np.all(np.abs(g[near] - 1.0) < 0.03), f"g(r) up to 0.9 L: {np.round(g[near], 3)}"
    assert r[-1] > 1.4 * side, "drawn out to where the far corners leave too few pairs"
    assert np.all(np.abs(g - 1.0) < 0.25), "and near 1 all the way"
    item = int(np.argmin(np.abs(r - 0.8 * side)))
    assert float(scene.inspector.describe(item)["g(r)"].split()[0]) == pytest.approx(g[item], rel=1e-3)


def test_uniform_points_give_g_of_r_near_one_in_the_live_histogram_2d_and_3d():
    from sim.sdh.live import distance_histogram

    rng = np.random.default_rng(7)
    for dims, n in ((2, 3000), (3, 3000)):
        points = np.zeros((n, 3))
        points[:, :dims] = rng.random((n, dims)) * 40.0
        result = distance_histogram(points, dims, 0.8)
        r = result.centres[: result.g.size]
        near = (r >= 0.1 * 40.0) & (r <= 0.9 * 40.0)  # closer, too few pairs in a bucket to tell 5%
        assert near.sum() >= 40
        assert np.all(np.abs(result.g[near] - 1.0) < 0.05), f"{dims}D: {np.round(result.g[near], 3)}"


def test_an_ideal_gas_puts_every_pair_in_some_bucket():
    from sim.sdh.ideal import ideal_pairs

    for sides in ((1.0, 1.0), (1.0, 3.0), (1.0, 1.0, 1.0), (2.0, 3.0, 5.0)):
        pairs = ideal_pairs(1000, sides, 0.05, 40)  # the last bucket takes the longer pairs
        assert pairs.sum() == pytest.approx(1000 * 999 / 2, rel=5e-4), sides
        assert np.all(pairs >= 0)


def test_the_wall_correction_vanishes_as_the_box_grows():
    from sim.sdh.ideal import ideal_pairs

    width, buckets = 1.0, 10
    r = np.arange(buckets + 1) * width
    for dims in (2, 3):
        shell = np.diff(np.pi * r**2) if dims == 2 else np.diff(4 / 3 * np.pi * r**3)
        errors = []
        for side in (20.0, 200.0, 2000.0, 20000.0):
            unbounded = 1000 * 999 / 2 * shell / side**dims  # an ideal gas with no walls
            ratio = ideal_pairs(1000, (side,) * dims, width, buckets + 1)[:-1] / unbounded  # the last takes the rest
            errors.append(float(np.abs(ratio - 1.0).max()))
            assert errors[-1] <= 2 * r[-1] / side, f"{dims}D, side {side}: {errors[-1]}"
        assert errors == sorted(errors, reverse=True) and errors[-1] < 1e-3, errors
