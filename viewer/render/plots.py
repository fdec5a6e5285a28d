"""The plots view kind: a ``PlotsView`` drawn with ImPlot in the area left of the panel (no 3D view).

``draw_plots`` runs inside an ImGui frame (the window's, or a headless one): one borderless
window over the area, the plots laid out in ``view.columns`` columns (plot i in column
i % columns), each column's height shared by its plots (``Plot.height``, equal shares when 0).
Series are lines, bars, stairs, scatter points or shaded bands; a plot may have log axes, an
equal aspect, fixed limits, horizontal lines, a heatmap (row 0 at the bottom, like a field) and
drag points: a point the user moves is handed to ``on_point(id, x, y)``. Points of series that name
their items (``Series.items``) can be hovered (``hovered``) and the pinned item is ringed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from imgui_bundle import imgui, implot

from sim.contract import Plot, PlotsView, Series
from sim.framework.colormap import stops

HEATMAP_COLORMAP = "inferno"
LEGEND_CORNERS = {
    "nw": implot.Location_.north_west,
    "ne": implot.Location_.north_east,
    "sw": implot.Location_.south_west,
    "se": implot.Location_.south_east,
}
SHADED_ALPHA = 0.35
PAD = 6.0


def _colormap(name: str) -> int:
    """The ImPlot index of one of our colour maps, added to the current ImPlot context once."""
    index = implot.get_colormap_index(name)
    if index >= 0:
        return index
    colours = np.ones((len(stops(name)), 4), np.float32)
    colours[:, :3] = stops(name)
    return implot.add_colormap(name, colours, False)


def _f64(values) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.float64)


def _limits(limits) -> tuple[float, float] | None:
    """An axis's fixed range as floats, or None (fit the data) when it is not a finite, increasing one: a
    range made from a user's garbage values must not take the axis with it."""
    if not limits:
        return None
    lo, hi = (float(v) for v in limits)
    return (lo, hi) if np.isfinite(lo) and np.isfinite(hi) and lo < hi else None


def _spec(series: Series) -> implot.Spec:
    spec = implot.Spec()
    if series.color is not None:
        colour = imgui.ImVec4(*series.color)
        spec.line_color = colour
        spec.fill_color = colour
        spec.marker_fill_color = colour
        spec.marker_line_color = colour
    if series.style == "shaded":
        spec.fill_alpha = SHADED_ALPHA
    if series.style == "scatter":
        spec.marker = implot.Marker_.circle
    return spec


def _series(series: Series) -> None:
    x, y = _f64(series.x), _f64(series.y)
    count = min(x.shape[0], y.shape[0])
    x, y = x[:count], y[:count]
    spec, label = _spec(series), series.label or "##series"
    if series.style == "line":
        implot.plot_line(label, x, y, spec)
    elif series.style == "bars":
        implot.plot_bars(label, x, y, float(series.width), spec)
    elif series.style == "stairs":
        implot.plot_stairs(label, x, y, spec)
    elif series.style == "scatter":
        implot.plot_scatter(label, x, y, spec)
    elif series.style == "shaded":
        if series.y2 is None:
            implot.plot_shaded(label, x, y, 0.0, spec)
        else:
            implot.plot_shaded(label, x, y, _f64(series.y2)[:count], spec)
    else:
        raise ValueError(f"unknown series style {series.style!r}")


def _legend(where: str) -> None:
    if where == "above":
        implot.setup_legend(implot.Location_.north, implot.LegendFlags_.outside | implot.LegendFlags_.horizontal)
    elif where in LEGEND_CORNERS:
        implot.setup_legend(LEGEND_CORNERS[where])
    else:
        raise ValueError(f"unknown legend place {where!r}")


def _layout(view: PlotsView, width: float, height: float) -> list[tuple[Plot, tuple[float, float, float, float]]]:
    """Each plot with its rectangle (x, y, w, h) inside the area."""
    columns = max(1, min(int(view.columns), len(view.plots)))
    column_width = width / columns
    placed = []
    for c in range(columns):
        mine = view.plots[c::columns]
        fixed = sum(p.height for p in mine if p.height > 0)
        free = [p for p in mine if p.height <= 0]
        share = max(0.0, 1.0 - fixed) / len(free) if free else 0.0
        y = 0.0
        for plot in mine:
            h = height * (plot.height if plot.height > 0 else share)
            placed.append((plot, (c * column_width, y, column_width, h)))
            y += h
    return placed


HOVER_PIXELS = 12.0  # how close the pointer must come to a line's or scatter's point
HIGHLIGHT = (1.0, 0.85, 0.3, 1.0)


def _to_pixels(x: np.ndarray, y: np.ndarray, plot: Plot) -> tuple[np.ndarray, np.ndarray]:
    """Plot coordinates -> display pixels of the current plot (inside begin_plot / end_plot)."""
    limits, pos, size = implot.get_plot_limits(), implot.get_plot_pos(), implot.get_plot_size()

    def axis(values, lo, hi, log):
        if log:
            values, lo, hi = (np.log10(np.maximum(v, 1e-300)) for v in (values, lo, hi))
        return (values - lo) / (hi - lo if hi != lo else 1.0)

    fx = axis(x, limits.x.min, limits.x.max, plot.x_log)
    fy = axis(y, limits.y.min, limits.y.max, plot.y_log)
    return pos.x + fx * size.x, pos.y + (1.0 - fy) * size.y


def hovered_point(plot: Plot, mouse: tuple[float, float]) -> tuple[int, tuple[float, float]] | None:
    """(item, pixel) of the plot's point under the pointer: the nearest point of a line or scatter
    within HOVER_PIXELS, else the bar or stair step whose x span holds the pointer."""
    best, best_distance, step = None, HOVER_PIXELS, None
    for series in plot.series:
        if series.items is None:
            continue
        x, y, items = _f64(series.x), _f64(series.y), np.asarray(series.items)
        count = min(x.shape[0], y.shape[0], items.shape[0])
        if count == 0:
            continue
        x, y, items = x[:count], y[:count], items[:count]
        px, py = _to_pixels(x, y, plot)
        if series.style in ("line", "scatter", "shaded"):
            distance = np.hypot(px - mouse[0], py - mouse[1])
            i = int(np.argmin(distance))
            if distance[i] <= best_distance:
                best, best_distance = (int(items[i]), (float(px[i]), float(py[i]))), float(distance[i])
        elif step is None:
            if series.style == "stairs":
                right = np.append(px[1:], px[-1] + (px[-1] - px[-2] if count > 1 else HOVER_PIXELS))
                inside = np.flatnonzero((px <= mouse[0]) & (mouse[0] < right))
            else:  # bars
                half = 0.5 * abs(
                    _to_pixels(np.array([series.width]), np.zeros(1), plot)[0][0]
                    - _to_pixels(np.zeros(1), np.zeros(1), plot)[0][0]
                )
                inside = np.flatnonzero(np.abs(px - mouse[0]) <= half)
            if inside.size:
                i = int(inside[0])
                step = (int(items[i]), (float(mouse[0]), float(py[i])))
    return best or step


class PlotsRenderer:
    """Draws plots views; remembers where the last frame put each drag point (pixels, for tests), the
    item under the pointer (``hovered``) and highlights the ``pinned`` item's points."""

    def __init__(self):
        self.point_pixels: dict[str, tuple[float, float]] = {}
        self.hovered: int | None = None  # the scene item of the point under the pointer (Series.items)
        self.hovered_pixel: tuple[float, float] | None = None
        self.pinned: int | None = None  # set by the viewer: drawn highlighted
        self.pinned_pixel: tuple[float, float] | None = None

    def draw(
        self, view: PlotsView, area: tuple[float, float, float, float], on_point: Callable[[str, float, float], None]
    ) -> None:
        """The view's plots over ``area`` (x, y, w, h in display pixels, y down); call inside a frame."""
        x, y, width, height = area
        self.point_pixels = {}
        self.hovered = self.hovered_pixel = self.pinned_pixel = None
        imgui.set_next_window_pos((x, y), imgui.Cond_.always)
        imgui.set_next_window_size((width, height), imgui.Cond_.always)
        flags = (
            imgui.WindowFlags_.no_decoration
            | imgui.WindowFlags_.no_move
            | imgui.WindowFlags_.no_saved_settings
            | imgui.WindowFlags_.no_bring_to_front_on_focus
            | imgui.WindowFlags_.no_scroll_with_mouse
        )
        imgui.push_style_var(imgui.StyleVar_.window_padding, (PAD, PAD))
        imgui.begin("##plots", None, flags)
        imgui.pop_style_var()
        if not view.plots:
            imgui.text("(no plots)")
        for i, (plot, (px, py, pw, ph)) in enumerate(_layout(view, width - 2 * PAD, height - 2 * PAD)):
            imgui.set_cursor_pos((PAD + px, PAD + py))
            self._plot(i, plot, (max(pw - PAD, 20.0), max(ph - PAD, 20.0)), on_point)
        imgui.end()

    def _plot(
        self, index: int, plot: Plot, size: tuple[float, float], on_point: Callable[[str, float, float], None]
    ) -> None:
        flags = implot.Flags_.no_menus | implot.Flags_.no_box_select
        if plot.equal_aspect:
            flags |= implot.Flags_.equal
        # "###": the plot's identity is its place, not its title (a title naming the frame changes every
        # step; a new identity would start the plot over, its axes unfitted, for one frame).
        if not implot.begin_plot(f"{plot.title}###plot{index}", size, flags):
            return
        fit = implot.AxisFlags_.auto_fit
        x_limits, y_limits = _limits(plot.x_limits), _limits(plot.y_limits)
        implot.setup_axes(plot.x_label, plot.y_label, 0 if x_limits else fit, 0 if y_limits else fit)
        _legend(plot.legend)
        if plot.x_log:
            implot.setup_axis_scale(implot.ImAxis_.x1, implot.Scale_.log10)
        if plot.y_log:
            implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.log10)
        if x_limits:
            implot.setup_axis_limits(implot.ImAxis_.x1, *x_limits, imgui.Cond_.always)
        if y_limits:
            implot.setup_axis_limits(implot.ImAxis_.y1, *y_limits, imgui.Cond_.always)
        if plot.heatmap is not None:
            self._heatmap(plot)
        for series in plot.series:
            _series(series)
        if plot.hlines:
            implot.plot_inf_lines("##hlines", _f64(plot.hlines), implot.Spec(flags=implot.InfLinesFlags_.horizontal))
        if implot.is_plot_hovered():
            mouse = imgui.get_mouse_pos()
            found = hovered_point(plot, (mouse.x, mouse.y))
            if found is not None:
                self.hovered, self.hovered_pixel = found
        if self.pinned is not None:
            self._highlight(plot)
        for i, point in enumerate(plot.drag_points):
            changed, x, y, *_ = implot.drag_point(i, float(point.x), float(point.y), imgui.ImVec4(*point.color), 6.0)
            pixel = implot.plot_to_pixels(x, y)
            self.point_pixels[point.id] = (pixel.x, pixel.y)
            if changed:
                on_point(point.id, float(x), float(y))
        implot.end_plot()

    def _highlight(self, plot: Plot) -> None:
        """A ring around each point of the pinned item."""
        draw = implot.get_plot_draw_list()
        colour = imgui.color_convert_float4_to_u32(imgui.ImVec4(*HIGHLIGHT))
        for series in plot.series:
            if series.items is None:
                continue
            where = np.flatnonzero(np.asarray(series.items) == self.pinned)
            where = where[where < min(len(series.x), len(series.y))]
            if where.size:
                i = int(where[0])
                px, py = _to_pixels(_f64(series.x[i : i + 1]), _f64(series.y[i : i + 1]), plot)
                if series.style == "stairs" and i + 1 < len(series.x):  # the middle of the step
                    px = (px + _to_pixels(_f64(series.x[i + 1 : i + 2]), _f64(series.y[i : i + 1]), plot)[0]) / 2
                self.pinned_pixel = (float(px[0]), float(py[0]))
                draw.add_circle(self.pinned_pixel, 7.0, colour, 0, 2.5)

    @staticmethod
    def _heatmap(plot: Plot) -> None:
        values = _f64(plot.heatmap)[::-1]  # ImPlot draws row 0 at the top; ours is at the bottom
        finite = values[np.isfinite(values)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        (x0, x1), (y0, y1) = plot.x_limits or (0.0, 1.0), plot.y_limits or (0.0, 1.0)
        implot.push_colormap(_colormap(HEATMAP_COLORMAP))
        implot.plot_heatmap(
            "##heatmap",
            np.ascontiguousarray(values),
            lo,
            hi if hi > lo else lo + 1.0,
            "",
            implot.Point(x0, y0),
            implot.Point(x1, y1),
        )
        implot.pop_colormap()
