"""The panel's stage timings: the scene timer's stages as a live ImPlot chart and a table, and the A/B
against a baseline JSON (``viewer.panel.baseline``)."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from viewer.panel.baseline import BaselineBars, draw_baseline
from viewer.panel.section import PanelContext, PanelSection
from viewer.panel.style import STAGE_TIMES


class StageTimesSection(PanelSection):
    """``bars``: the baseline drawn beside the live times (``Panel.baseline``)."""

    title = STAGE_TIMES

    def __init__(self, bars: BaselineBars):
        self.bars = bars

    def draw(self, ctx: PanelContext) -> None:
        _draw(ctx.controller, self.bars)


def _draw(ctl, bars: BaselineBars) -> None:
    timer = ctl.scene.timer
    names = list(timer.names)
    if implot.begin_plot("##stages", (-1, 140), implot.Flags_.no_menus | implot.Flags_.no_box_select):
        implot.setup_axes("frames ago", "ms", implot.AxisFlags_.auto_fit, 0)
        # Scale to the bulk of the data, not to one-off spikes such as the first (compiling) frame.
        tops = [np.percentile(h, 95) for h in map(timer.history, names) if h.size]
        implot.setup_axis_limits(implot.ImAxis_.y1, 0.0, 1.25 * max(tops, default=1.0) + 0.05, imgui.Cond_.always)
        legend = implot.LegendFlags_.horizontal | implot.LegendFlags_.outside
        implot.setup_legend(implot.Location_.north, legend)
        for name in names:
            ys = timer.history(name)
            if ys.size:
                xs = np.arange(-ys.size + 1, 1, dtype=np.float64)
                implot.plot_line(name, xs, ys)
        implot.end_plot()
    table_flags = imgui.TableFlags_.borders_inner_h | imgui.TableFlags_.row_bg
    if names and imgui.begin_table("stage_table", 3, table_flags):
        imgui.table_setup_column("stage")
        imgui.table_setup_column("last ms")
        imgui.table_setup_column("median ms")
        imgui.table_headers_row()
        latest = timer.latest()
        for name in names:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(name)
            imgui.table_next_column()
            imgui.text(f"{latest.get(name, 0.0):.2f}")
            imgui.table_next_column()
            imgui.text(f"{timer.median(name):.2f}")
        imgui.end_table()
    draw_baseline(ctl, bars)
