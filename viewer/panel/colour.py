"""The panel's colour section: the colour mode (CUDA block colouring greyed out with the reason when
it cannot be chosen), the legend of what is drawn (a colour bar with its range and unit), the range
automatic (the data's own, every frame) or fixed from here, and what a marked item means under
verification."""

from __future__ import annotations

from imgui_bundle import imgui

from sim.contract import BLOCK_COLORS, FieldView, Legend, PointsView
from sim.framework.colormap import BLOCK_PALETTE, stops
from viewer.panel.section import PanelContext, PanelSection
from viewer.panel.style import COLOUR, GREY, disabled_tooltip, item_width, tooltip, ui_scale, wrapped
from viewer.render.colormaps import highlight_color
from viewer.render.points.colours import MARKED_COLOR

BLOCK_COLORS_LABEL = "CUDA block"
BAR_HEIGHT = 14.0
PALETTE_SWATCHES = 16  # a categorical palette shows this many of its colours


class ColourSection(PanelSection):
    """Reads the view drawn this frame (``ctx.shown``) and its legend with the range in force (``ctx.legend``:
    the renderer's for a field, whose range the viewer applies; else the view's own)."""

    title = COLOUR

    def shows(self, ctx: PanelContext) -> bool:
        scene, spec = ctx.scene, ctx.scene.spec
        return bool(
            scene.color_modes
            or spec.block_colors is not None
            or _legend(ctx) is not None
            or scene.checks.on
            and spec.verifier is not None
        )

    def draw(self, ctx: PanelContext) -> None:
        _draw(ctx.controller, ctx.shown, _legend(ctx))


def _legend(ctx: PanelContext) -> Legend | None:
    return ctx.legend if ctx.legend is not None else getattr(ctx.shown, "legend", None)


def _draw(ctl, shown, legend: Legend | None) -> None:
    scene, spec = ctl.scene, ctl.spec
    modes = scene.color_modes
    marks = scene.checks.on and spec.verifier is not None
    if modes or spec.block_colors is not None:
        _mode_combo(ctl, modes)
    if legend is not None:
        draw_legend(legend, legend_colormap(shown, legend))
        if not legend.categorical:
            _range_controls(ctl, legend)
    if marks:
        mark = _mark_color(shown)
        if mark is not None:
            _swatch(mark)
            imgui.same_line()
        wrapped(GREY, spec.verifier.mismatch)


def _mark_color(shown) -> tuple[float, float, float] | None:
    """The colour marked items are drawn in: a field's highlight, the points' mismatch colour."""
    if isinstance(shown, FieldView):
        return highlight_color(shown.colormap)
    if isinstance(shown, PointsView):
        return MARKED_COLOR
    return None


def _mode_combo(ctl, modes: dict[str, str]) -> None:
    spec = ctl.spec
    if imgui.begin_combo("colour by", modes.get(ctl.color_mode, ctl.color_mode)):
        block_reason = ctl.gpu.block_colors_reason()
        for mode, label in modes.items():
            unavailable = block_reason if mode == BLOCK_COLORS else None
            flags = imgui.SelectableFlags_.disabled if unavailable else 0
            if imgui.selectable(label, mode == ctl.color_mode, flags)[0]:
                ctl.set_color_mode(mode)
            disabled_tooltip(unavailable or ("c: on / off" if mode == BLOCK_COLORS else ""))
        if BLOCK_COLORS not in modes and spec.block_colors is not None:
            imgui.selectable(BLOCK_COLORS_LABEL, False, imgui.SelectableFlags_.disabled)
            disabled_tooltip(block_reason or "")
        imgui.end_combo()


def legend_text(legend: Legend) -> tuple[str, str]:
    """The two ends of the colour bar: low value, and high value with the unit."""
    unit = f" {legend.unit}" if legend.unit else ""
    return f"{legend.lo:.4g}", f"{legend.hi:.4g}{unit}"


def legend_colours(legend: Legend, colormap: str):
    """The colours across the bar: the map's stops, or a categorical palette's first colours."""
    if colormap == "block":
        return BLOCK_PALETTE[:PALETTE_SWATCHES]
    return stops(colormap)


OVERLAY_WIDTH = 220.0  # display pixels at UI scale 1


def legend_colormap(shown, legend: Legend) -> str:
    return legend.colormap or shown.colormap


def draw_legend_overlay(legend: Legend, colormap: str, area: tuple[float, float, float, float]) -> None:
    """The legend in the view's bottom-left corner (``area``: x, y, w, h of the view in display
    pixels), so that screenshots and recordings without the panel carry their scale too."""
    x, y, _, h = area
    imgui.set_next_window_pos((x + 12, y + h - 12), imgui.Cond_.always, (0.0, 1.0))
    imgui.set_next_window_bg_alpha(0.6)
    flags = (
        imgui.WindowFlags_.no_decoration
        | imgui.WindowFlags_.always_auto_resize
        | imgui.WindowFlags_.no_saved_settings
        | imgui.WindowFlags_.no_inputs
        | imgui.WindowFlags_.no_focus_on_appearing
        | imgui.WindowFlags_.no_bring_to_front_on_focus
    )
    imgui.begin("##legend", None, flags)
    draw_legend(legend, colormap, OVERLAY_WIDTH * ui_scale())
    imgui.end()


def draw_legend(legend: Legend, colormap: str, width: float | None = None) -> None:
    """The label, a colour bar across the panel (a palette as swatches), its range and unit beneath."""
    imgui.text(legend.label)
    draw = imgui.get_window_draw_list()
    start = imgui.get_cursor_screen_pos()
    width = imgui.get_content_region_avail().x if width is None else width
    colours = legend_colours(legend, colormap)
    swatches = colormap == "block"
    segments = len(colours) if swatches else len(colours) - 1
    for i in range(segments):
        left = imgui.color_convert_float4_to_u32(imgui.ImVec4(*map(float, colours[i]), 1.0))
        right = left if swatches else imgui.color_convert_float4_to_u32(imgui.ImVec4(*map(float, colours[i + 1]), 1.0))
        x0, x1 = start.x + width * i / segments, start.x + width * (i + 1) / segments
        draw.add_rect_filled_multi_color((x0, start.y), (x1, start.y + BAR_HEIGHT), left, right, right, left)
    imgui.dummy((width, BAR_HEIGHT))
    low, high = legend_text(legend)
    imgui.text(low)
    imgui.same_line(max(width - imgui.calc_text_size(high).x, 0.0))
    imgui.text(high)


def _range_controls(ctl, legend: Legend) -> None:
    """Automatic (the data's range, every frame) or fixed (typed or dragged here)."""
    mode = ctl.color_mode
    fixed = ctl.scene.color_scales.ranges.get(mode)
    if imgui.radio_button("automatic", fixed is None) and fixed is not None:
        ctl.set_color_range(mode, None)
    tooltip("the colours span the data's range, taken again every frame")
    imgui.same_line()
    if imgui.radio_button("fixed", fixed is not None) and fixed is None:
        ctl.set_color_range(mode, (legend.lo, legend.hi))  # freeze what is shown now
    tooltip("the colours span the range below, whatever the data do")
    if fixed is None:
        return
    imgui.set_next_item_width(item_width())
    span = max(abs(fixed[1] - fixed[0]), 1e-9)
    changed, values = imgui.drag_float2("range", list(fixed), span / 200, 0.0, 0.0, "%.4g")
    if changed or imgui.is_item_deactivated_after_edit():
        lo, hi = (float(v) for v in values)
        if lo < hi:
            ctl.set_color_range(mode, (lo, hi))
    tooltip(f"low and high end of the colour bar ({legend.unit or 'the mapped value'}); drag, or ctrl+click to type")


def _swatch(rgb) -> None:
    draw = imgui.get_window_draw_list()
    at = imgui.get_cursor_screen_pos()
    size = imgui.get_text_line_height()
    colour = imgui.color_convert_float4_to_u32(imgui.ImVec4(*(float(v) for v in rgb), 1.0))
    draw.add_rect_filled(at, (at.x + size, at.y + size), colour)
    imgui.dummy((size, size))
