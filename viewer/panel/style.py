"""Sizes, colours and small helpers shared by the panel's sections.

Sizes are in display pixels at UI scale 1; ``set_ui_scale`` (the panel's UI scale setting, by
default the monitor's content scale) makes the panel, its items and its font larger on a
high-DPI screen: read them through ``panel_width()``, ``item_width()``, ``panel_cover()``.
"""

from __future__ import annotations

import math

from imgui_bundle import imgui

PANEL_WIDTH = 400  # display pixels at scale 1, at the window's right edge
ITEM_WIDTH = PANEL_WIDTH - 170  # sliders and combos, leaving room for their labels
MARGIN = 8  # between the panel and the window's edges
FONT = "fonts/Roboto-Regular.ttf"  # under assets/
FONT_SIZE = 15.0
UI_SCALES = (0.75, 3.0)  # the range the setting accepts

GREY = imgui.ImVec4(0.62, 0.64, 0.68, 1.0)
MESSAGE = imgui.ImVec4(1.0, 0.82, 0.35, 1.0)
ERROR = imgui.ImVec4(1.0, 0.38, 0.33, 1.0)
RECORDING = imgui.ImVec4(1.0, 0.2, 0.2, 1.0)

_scale = 1.0


def clamp_ui_scale(scale) -> float:
    try:
        scale = float(scale)
    except (TypeError, ValueError):
        return 1.0
    if not math.isfinite(scale):
        return 1.0
    return min(max(scale, UI_SCALES[0]), UI_SCALES[1])


def set_ui_scale(scale: float) -> float:
    """Set the panel's scale (clamped to UI_SCALES); returns what was set."""
    global _scale
    _scale = clamp_ui_scale(scale)
    return _scale


def ui_scale() -> float:
    return _scale


def panel_width() -> float:
    return PANEL_WIDTH * _scale


def item_width() -> float:
    return ITEM_WIDTH * _scale


def panel_cover() -> int:
    """Display pixels the panel covers at the window's right edge, its margins included."""
    return int(round(panel_width() + 2 * MARGIN))


def tooltip(text: str) -> None:
    """A tooltip on the last item, wrapped so a long reason stays on screen."""
    if text and imgui.is_item_hovered(imgui.HoveredFlags_.for_tooltip):
        wrapped_tooltip(text)


def disabled_tooltip(text: str) -> None:
    if text and imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        wrapped_tooltip(text)


def wrapped_tooltip(text: str) -> None:
    imgui.begin_tooltip()
    imgui.push_text_wrap_pos(imgui.get_font_size() * 32)
    imgui.text_unformatted(text)
    imgui.pop_text_wrap_pos()
    imgui.end_tooltip()


def wrapped(colour, text: str) -> None:
    """Coloured text wrapped at the panel's edge."""
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(colour, text)
    imgui.pop_text_wrap_pos()


# --- sections that fold ---------------------------------------------------------------------------
layout: dict[str, bool] = {}  # section title -> open; kept with the settings (the panel layout)
# Every section's title in the panel's order, and those folded until a user opens them.
SECTIONS = (
    "Scene",
    "Run",
    "Counters",
    "Colour",
    "Record",
    "CUDA",
    "Your kernel",
    "Physics",
    "Tool",
    "Stage times (ms per frame)",
    "Speed of light",
    "Pair distances",
    "Display",
)
FOLDED = ("Record", "Speed of light", "Display")
# Each section's title, by name: the sections take theirs from here, and the panel lays them out in SECTIONS' order.
(
    SCENE,
    RUN,
    COUNTERS,
    COLOUR,
    RECORD,
    CUDA,
    YOUR_KERNEL,
    PHYSICS,
    TOOL,
    STAGE_TIMES,
    SPEED_OF_LIGHT,
    PAIR_DISTANCES,
    DISPLAY,
) = SECTIONS


def open_sections(titles) -> None:
    """Lay the panel out with exactly ``titles`` open (every other section folded), as a user's settings do."""
    unknown = sorted(set(titles) - set(SECTIONS))
    if unknown:
        raise ValueError(f"no panel section {', '.join(map(repr, unknown))} (the sections: {', '.join(SECTIONS)})")
    layout.update({title: title in titles for title in SECTIONS})


def section(title: str, folded: bool | None = None) -> bool:
    """A panel section's header, folding; open as ``layout`` says (else open unless ``folded``, by default
    whether it is one of ``FOLDED``). True when open."""
    folded = title in FOLDED if folded is None else folded
    imgui.set_next_item_open(layout.get(title, not folded), imgui.Cond_.once)
    is_open = bool(imgui.collapsing_header(title))
    layout[title] = is_open
    return is_open


def text_table(table_id: str, headings: tuple[str, ...], rows, flags: int, coloured: int, colour_of) -> None:
    """A table of text, a row per item: column ``coloured`` in ``colour_of(text)``, the rest plain."""
    if not rows or not imgui.begin_table(table_id, len(headings), flags):
        return
    for heading in headings:
        imgui.table_setup_column(heading)
    imgui.table_headers_row()
    for row in rows:
        imgui.table_next_row()
        for i, text in enumerate(row):
            imgui.table_next_column()
            if i == coloured:
                imgui.text_colored(colour_of(text), text)
            else:
                imgui.text_unformatted(text)
    imgui.end_table()


def difference_table(table_id: str, headings: tuple[str, ...], rows, colour, flags: int) -> None:
    """A table of compared values, a row per item: the last column (the difference) in ``colour``."""
    text_table(table_id, headings, rows, flags, len(headings) - 1, lambda _text: colour)
