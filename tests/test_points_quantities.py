"""Points carry a quantity and the viewer colours it: values through the colour map the field uses
(over the range fixed from the panel or the values' own), categories through a palette (CUDA blocks:
thread index // block), and verification's mask drawn in the mismatch colour over either.

Pictures are compared with the same balls drawn in categories of exactly the colours expected, so
the shading cancels out. The GPU's half (the kernels writing quantities, the splat colouring them)
runs under ``pytest -m gpu``.
"""

import time

import numpy as np
import pytest
from gl_support import HostOnly, needs_egl

from sim import create_scene
from sim.contract import BLOCK_COLORS, Legend, PointsView, Trough
from sim.framework.colormap import BLOCK_PALETTE, MISMATCH_RGBA, colormap, spread
from viewer.render.camera import OrbitCamera

SIZE = (240, 160)
CAMERA = OrbitCamera.looking_at((0.0, -30.0, 0.0), distance=15.0)
BALLS = np.array([[-4.0, -30.0, 0.0, 1.6], [0.0, -30.0, 0.0, 1.6], [4.0, -30.0, 0.0, 1.6]], np.float32)
RED = np.array(MISMATCH_RGBA[:3], np.float32)


class Balls:
    """Three balls in a row carrying one quantity: values (``palette`` None) or categories."""

    color_modes = {"q": "quantity"}
    trough = Trough(40.0, -80.0, 80.0)

    def __init__(self, quantity, palette=None, value_range=None, mask=None):
        self.quantity = np.asarray(quantity, np.float32 if palette is None else np.int32)
        self.kept = self.quantity.copy()
        self.palette, self.value_range, self.mask = palette, value_range, mask

    def view(self, color_mode):
        return PointsView(
            3,
            3,
            self.trough,
            2.0,
            lambda: (BALLS, self.quantity),
            palette=self.palette,
            value_range=self.value_range,
            mask=None if self.mask is None else np.asarray(self.mask),
        )


def _pixels(scene) -> np.ndarray:
    from viewer.headless import render_pixels

    return render_pixels(scene, *SIZE, camera=CAMERA, color_mode="q").astype(int)


def _painted(colours) -> np.ndarray:
    """The three balls drawn in exactly these RGB colours."""
    return _pixels(Balls([0, 1, 2], palette=np.array(colours, np.float32)))


def _ramp(t: float) -> np.ndarray:
    return colormap(np.array([t]))[0, :3]


def _assert_same(a, b, levels: int = 2):
    assert np.abs(a - b).max() <= levels, f"up to {np.abs(a - b).max()} levels apart"


@needs_egl
def test_values_span_their_own_range_on_the_colour_map():
    drawn = _pixels(Balls([3.0, 5.5, 8.0]))  # automatic: 3 .. 8, the middle one halfway
    _assert_same(drawn, _painted([_ramp(0.0), _ramp(0.5), _ramp(1.0)]))


@needs_egl
def test_a_fixed_range_places_values_on_it_and_clamps_outside():
    drawn = _pixels(Balls([-50.0, 25.0, 400.0], value_range=(0.0, 100.0)))
    _assert_same(drawn, _painted([_ramp(0.0), _ramp(0.25), _ramp(1.0)]))


@needs_egl
def test_categories_take_their_palette_colour_cycling_past_its_end():
    drawn = _pixels(Balls([0, 13, 2], palette=BLOCK_PALETTE))
    _assert_same(drawn, _painted([BLOCK_PALETTE[0], BLOCK_PALETTE[13 % len(BLOCK_PALETTE)], BLOCK_PALETTE[2]]))


@needs_egl
@pytest.mark.parametrize("palette", [None, BLOCK_PALETTE], ids=["values", "categories"])
def test_masked_items_are_drawn_in_the_mismatch_colour_and_the_scene_keeps_its_quantity(palette):
    scene = Balls([0, 1, 2], palette=palette, mask=[False, True, False])
    drawn = _pixels(scene)
    expected = [_ramp(0.0), RED, _ramp(1.0)] if palette is None else [palette[0], RED, palette[2]]
    _assert_same(drawn, _painted(expected))
    np.testing.assert_array_equal(scene.quantity, scene.kept)


class _Legended:
    """Balls whose view has a legend, in units "u"."""

    def __init__(self, balls):
        self.balls, self.color_modes = balls, balls.color_modes

    def view(self, color_mode):
        view = self.balls.view(color_mode)
        view.legend = Legend("q", 0.0, 1.0, "u")
        return view


@needs_egl
def test_the_automatic_range_counts_marked_items_too():
    """The legend shows the values' own range, taken before the marked items are marked."""
    from viewer.headless import HeadlessRenderer

    with HeadlessRenderer(*SIZE) as renderer:
        renderer.render(_Legended(Balls([2.0, 9.0, 4.0], mask=[False, True, False])), CAMERA, "q")
        legend = renderer.view.legend
    assert (legend.lo, legend.hi) == (2.0, 9.0) and legend.unit == "u"


# --- what the scenes hand over -----------------------------------------------------------------------


def test_balls_hand_over_quantities_not_colours():
    scene = create_scene("balls", preset="T")
    scene.advance_frame()
    speed = np.linalg.norm(scene.vel[:, :3].astype(np.float64), axis=1)
    positions, quantity = scene.view("speed").host()
    np.testing.assert_array_equal(positions, scene.pos)
    assert quantity.dtype == np.float32
    np.testing.assert_allclose(quantity, speed, rtol=1e-6)
    _, height = scene.view("height").host()
    np.testing.assert_array_equal(height, scene.pos[:, 1])
    uniform = scene.view("uniform")
    assert uniform.categorical and uniform.legend is None and (uniform.host()[1] == 0).all()
    with pytest.raises(ValueError, match="unknown colour mode 'block'"):
        scene.view(BLOCK_COLORS)  # no CUDA proximity here


def test_block_categories_are_the_thread_index_over_the_block_size():
    scene = create_scene("balls", preset="T", block=64)
    out = np.empty(scene.n, np.int32)
    scene.fill_quantity(BLOCK_COLORS, np, out)
    np.testing.assert_array_equal(out, np.arange(scene.n) // 64)
    scene.thread_of = np.arange(scene.n)[::-1].copy()  # CPU physics, CUDA proximity: the pass's threads
    scene.fill_quantity(BLOCK_COLORS, np, out)
    np.testing.assert_array_equal(out, scene.thread_of // 64)


def test_particle_bins_are_categories_apart_in_colour():
    scene = create_scene("particles", n=2000)
    view = scene.view("bin")
    _, bins = view.host()
    inv = scene.nbins / scene.size
    expected = np.minimum((scene.y * inv).astype(int), scene.nbins - 1) * scene.nbins + np.minimum(
        (scene.x * inv).astype(int), scene.nbins - 1
    )
    np.testing.assert_array_equal(bins, expected)
    assert view.palette is spread("viridis") and view.legend.categorical
    neighbours = np.linalg.norm(np.diff(view.palette, axis=0), axis=1)
    assert neighbours.min() > 0.1, "neighbouring bins are apart in colour"


def test_verification_marks_are_the_views_mask():
    scene = create_scene("particles", n=500)
    assert scene.view("speed").mask is None
    scene.checks.on = True  # as checks.set_on does on a GPU
    differing = np.zeros(scene.n, bool)
    differing[::7] = True
    scene.checks.record("the CPU", differing, time.perf_counter())
    for mode in ("speed", "bin", "uniform"):
        np.testing.assert_array_equal(scene.view(mode).mask, differing)


# --- on a GPU ------------------------------------------------------------------------------------------


def _render_gpu(scene, mode: str, camera: OrbitCamera):
    from viewer.gpu.egl import standalone_context
    from viewer.render.offscreen import Offscreen
    from viewer.render.view import SceneView

    ctx = standalone_context()
    try:
        view, target = SceneView(ctx), Offscreen(ctx, (800, 500))
        try:
            view.show(scene, mode)
            view.draw(target.fbo, camera, (800, 500))
            ctx.finish()
            return target.read_rgb().astype(int), view.drawn_as, view.splat_problem
        finally:
            view.release()
            target.release()
    finally:
        ctx.release()


class _Marked:
    """A device scene whose views mark every 5th item."""

    def __init__(self, scene):
        self._scene = scene

    def __getattr__(self, name):
        return getattr(self._scene, name)

    def view(self, color_mode):
        view = self._scene.view(color_mode)
        view.mask = np.arange(view.count) % 5 == 0
        return view


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["speed", "pairs", BLOCK_COLORS])
def test_splatted_quantities_and_marks_look_like_impostors(mode):
    """splat.cu colours a ball from its quantity as spheres.glsl does (values, categories, marks)."""
    from viewer.render.view import IMPOSTORS, SPLAT

    scene = create_scene("balls", preset="t", backend="gpu", seed=1)
    for _ in range(20):
        scene.advance_frame()
    camera = OrbitCamera.for_trough(scene.trough)
    splatted, drawn, problem = _render_gpu(_Marked(scene), mode, camera)
    assert drawn == SPLAT, problem
    impostors, drawn, _ = _render_gpu(HostOnly(_Marked(scene)), mode, camera)
    assert drawn == IMPOSTORS
    differing = np.any(np.abs(splatted - impostors) > 2, axis=2)
    assert differing.sum() <= 0.002 * differing.size, f"{differing.sum()} pixels differ"
    red = (splatted[..., 0] > 150) & (splatted[..., 1] < 60) & (splatted[..., 2] < 60)
    assert red.sum() > 100, "marked balls show in the mismatch colour"


@needs_egl
def test_the_panel_shows_the_colour_marked_points_are_drawn_in():
    from viewer.headless import render_pixels
    from viewer.panel.style import PANEL_WIDTH

    scene = create_scene("balls", preset="T")
    width, height = 1024, 1000

    def red_in_panel() -> int:
        pixels = render_pixels(scene, width, height, panel=True)[:, width - PANEL_WIDTH :].astype(int)
        return int(np.all(np.abs(pixels - RED * 255) <= 1, axis=2).sum())

    assert red_in_panel() == 0
    scene.checks.on = True  # as checks.set_on does where the GPU kernels run
    assert red_in_panel() >= 64, "a swatch of the mismatch colour beside what a marked ball means"
