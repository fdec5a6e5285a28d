"""The panel's colour section: the colour mode (CUDA block colouring greyed out with the reason when
it cannot be chosen), what a marked item means under verification, and the legend of the view
(a colour bar with its range and unit, e.g. a field's "particles per cell")."""

from __future__ import annotations

from imgui_bundle import imgui

from sim.colormap import stops
from sim.contract import BLOCK_COLORS, FieldView, Legend, PointsView
from viewer.panel.style import GREY, disabled_tooltip, wrapped
from viewer.render.field import highlight_color

BLOCK_COLORS_LABEL = "CUDA block"
POINTS_COLORMAP = "viridis"  # what sim.colormap colours points with
BAR_HEIGHT = 14.0


def draw_color_section(ctl, shown=None) -> None:
    """``shown``: the view drawn this frame (its legend and colour map), if known."""
    scene, spec = ctl.scene, ctl.spec
    modes = scene.color_modes
    legend = shown.legend if isinstance(shown, (PointsView, FieldView)) else None
    marks = scene.verify and spec.verifier is not None
    if not (modes or spec.block_colors is not None or legend is not None or marks):
        return
    imgui.separator_text("Colour")
    if modes or spec.block_colors is not None:
        if imgui.begin_combo("colour by", modes.get(ctl.color_mode, ctl.color_mode)):
            block_reason = ctl.block_colors_reason()
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
    if legend is not None:
        colormap = shown.colormap if isinstance(shown, FieldView) else POINTS_COLORMAP
        draw_legend(legend, colormap)
    if marks:
        if isinstance(shown, FieldView):
            _swatch(highlight_color(shown.colormap))
            imgui.same_line()
        wrapped(GREY, spec.verifier.mismatch)


def legend_text(legend: Legend) -> tuple[str, str]:
    """The two ends of the colour bar: low value, and high value with the unit."""
    unit = f" {legend.unit}" if legend.unit else ""
    return f"{legend.lo:.4g}", f"{legend.hi:.4g}{unit}"


def draw_legend(legend: Legend, colormap: str) -> None:
    """The label, a colour bar of the map across the panel, its range and unit beneath."""
    imgui.text(legend.label)
    draw = imgui.get_window_draw_list()
    start = imgui.get_cursor_screen_pos()
    width = imgui.get_content_region_avail().x
    colours = stops(colormap)
    segments = len(colours) - 1
    for i in range(segments):
        left = imgui.color_convert_float4_to_u32(imgui.ImVec4(*map(float, colours[i]), 1.0))
        right = imgui.color_convert_float4_to_u32(imgui.ImVec4(*map(float, colours[i + 1]), 1.0))
        x0, x1 = start.x + width * i / segments, start.x + width * (i + 1) / segments
        draw.add_rect_filled_multi_color((x0, start.y), (x1, start.y + BAR_HEIGHT), left, right, right, left)
    imgui.dummy((width, BAR_HEIGHT))
    low, high = legend_text(legend)
    imgui.text(low)
    imgui.same_line(max(width - imgui.calc_text_size(high).x, 0.0))
    imgui.text(high)


def _swatch(rgb) -> None:
    draw = imgui.get_window_draw_list()
    at = imgui.get_cursor_screen_pos()
    size = imgui.get_text_line_height()
    colour = imgui.color_convert_float4_to_u32(imgui.ImVec4(*(float(v) for v in rgb), 1.0))
    draw.add_rect_filled(at, (at.x + size, at.y + size), colour)
    imgui.dummy((size, size))
