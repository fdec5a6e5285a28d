"""Colour bars: every colour mode with a scale has a legend whose automatic range is the data's own,
taken by the viewer for points and fields alike; a range fixed from the panel changes the colours
and the legend; categorical modes (bins, CUDA blocks) have no range to fix."""

import numpy as np
import pytest
from gl_support import needs_egl

from sim import create_scene
from sim.balls.render_cpu import mapped_values


@pytest.fixture(scope="module")
def balls():
    scene = create_scene("balls", preset="T")
    for _ in range(40):
        scene.advance_frame()
    return scene


def _shown_legend(scene, mode: str):
    """The legend the viewer shows for the scene drawn in ``mode``."""
    from viewer.headless import HeadlessRenderer

    with HeadlessRenderer(320, 200) as renderer:
        renderer.render(scene, color_mode=mode)
        return renderer.view.legend


@needs_egl
@pytest.mark.parametrize("mode, unit", [("speed", "units/s"), ("height", "units (y)"), ("pairs", "partners")])
def test_ball_legends_span_the_data(balls, mode, unit):
    balls.color_scales.set(mode, None)
    legend = _shown_legend(balls, mode)
    values = mapped_values(balls, mode, np)
    assert (legend.lo, legend.hi) == pytest.approx((float(values.min()), float(values.max())))
    assert legend.unit == unit and not legend.categorical and legend.hi > legend.lo
    assert balls.view(mode).value_range is None, "automatic: the viewer takes the values' own range"


@needs_egl
def test_a_fixed_range_changes_the_colours_and_the_legend(balls):
    from viewer.headless import render_pixels

    auto = render_pixels(balls, 320, 200, color_mode="speed")
    balls.color_scales.set("speed", (0.0, 100.0))
    try:
        legend = _shown_legend(balls, "speed")
        assert (legend.lo, legend.hi) == (0.0, 100.0) and balls.view("speed").value_range == (0.0, 100.0)
        fixed = render_pixels(balls, 320, 200, color_mode="speed")
        assert np.abs(fixed.astype(int) - auto.astype(int)).max() > 40
    finally:
        balls.color_scales.set("speed", None)
    with pytest.raises(ValueError):
        balls.color_scales.set("speed", (5.0, 5.0))


@needs_egl
def test_particle_legends():
    scene = create_scene("particles", n=2000)
    scene.advance_frame()
    speed = np.hypot(scene.vx, scene.vy)
    legend = _shown_legend(scene, "speed")
    assert (legend.lo, legend.hi) == pytest.approx((speed.min(), speed.max())) and legend.unit == "box units/s"
    bins = scene.view("bin").legend
    assert bins.categorical and (bins.lo, bins.hi) == (0, scene.nbins**2 - 1)
    assert scene.view("uniform").legend is None


@needs_egl
def test_a_fields_range_is_the_data_or_the_fixed_one():
    from viewer.headless import HeadlessRenderer

    scene = create_scene("density", n=5000)
    scene.advance_frame()
    counts = scene.host_counts()
    with HeadlessRenderer(400, 300) as renderer:
        renderer.render(scene)
        legend = renderer.view.legend
        assert (legend.lo, legend.hi) == (float(counts.min()), float(counts.max()))
        assert legend.unit == "particles per cell" and legend.colormap == "inferno"
        scene.color_scales.set("count", (0.0, 50.0))
        renderer.render(scene)
        assert renderer.view.field.value_range == (0.0, 50.0) and renderer.view.legend.hi == 50.0


@needs_egl
def test_the_legend_is_drawn_in_the_view_for_pictures_without_the_panel():
    from viewer.headless import render_pixels

    scene = create_scene("balls", preset="T")
    with_legend = render_pixels(scene, 640, 400, color_mode="speed")
    without = render_pixels(scene, 640, 400, color_mode="uniform")
    corner = np.s_[300:395, 5:250]  # bottom-left
    assert np.abs(with_legend[corner].astype(int) - without[corner].astype(int)).max() > 60
    yellow = np.array([0.993, 0.906, 0.144]) * 255  # the top of viridis, at the bar's right end
    assert np.min(np.abs(with_legend[corner].astype(int) - yellow).max(axis=-1)) <= 12
