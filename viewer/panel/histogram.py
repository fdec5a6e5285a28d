"""The panel section of the live distance histogram, for scenes whose points feed it
(``spec.histogram``): an on / off checkbox, then the bucket width, the timing line and an ImPlot
chart of the pair counts (stairs) and g(r) (a line, right axis)."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from viewer.live_histogram import EVERY_FRAMES, LiveHistogram
from viewer.panel.section import PanelContext, PanelSection
from viewer.panel.style import GREY, MESSAGE, PAIR_DISTANCES, item_width, tooltip, wrapped


class PairDistancesSection(PanelSection):
    """The controller's ``LiveHistogram`` of the scene shown."""

    title = PAIR_DISTANCES

    def shows(self, ctx: PanelContext) -> bool:
        return ctx.scene.spec.histogram is not None

    def draw(self, ctx: PanelContext) -> None:
        _draw(ctx.controller.histogram, ctx.scene, item_width())


def _draw(hist: LiveHistogram, scene, width: float) -> None:
    changed, on = imgui.checkbox("distance histogram", hist.enabled)
    if changed:
        hist.set_enabled(on)
    tooltip(
        f"all pair distances of the current points and g(r), recounted every {EVERY_FRAMES} "
        "frames on the physics backend"
    )
    if not hist.enabled:
        return
    hist.follow(scene)
    _width_slider(hist, width)
    if hist.message:
        wrapped(MESSAGE, hist.message)
    if hist.result is None:
        return
    imgui.text(hist.timing_line())
    if hist.truncated:
        last = hist.result.counts.shape[0] - 1
        wrapped(GREY, f"drawn up to r = {last * hist.result.width:.4g}: farther pairs are counted in the last bucket")
    _plot(hist)


def _width_slider(hist: LiveHistogram, width: float) -> None:
    span = hist.range
    imgui.set_next_item_width(width)
    changed, width = imgui.slider_float(
        "bucket width", hist.width, span.lo, span.hi, "%.4g", imgui.SliderFlags_.logarithmic
    )
    if changed:
        hist.set_width(width)
    tooltip(f"world units; default {span.default:.4g}; ctrl+click to type")


def _plot(hist: LiveHistogram) -> None:
    result = hist.result
    keep = result.counts.shape[0] - 1 if hist.truncated else result.counts.shape[0]
    edges = np.arange(keep, dtype=np.float64) * result.width
    counts = result.counts[:keep].astype(np.float64)
    g = np.ascontiguousarray(result.g[:keep], np.float64)  # as far as there are pairs enough to measure it
    flags = implot.Flags_.no_menus | implot.Flags_.no_box_select
    if not implot.begin_plot("##distances", (-1, 180), flags):
        return
    fit = implot.AxisFlags_.auto_fit
    implot.setup_axes("r", "pairs", fit, fit)
    implot.setup_axis(implot.ImAxis_.y2, "g(r)", fit | implot.AxisFlags_.opposite)
    legend = implot.LegendFlags_.horizontal | implot.LegendFlags_.outside
    implot.setup_legend(implot.Location_.north, legend)
    implot.plot_stairs("pairs", edges, counts)
    implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y2)
    implot.plot_line("g(r)", edges[: g.size] + 0.5 * result.width, g)
    implot.end_plot()
