"""Sizes, colours and small helpers shared by the panel's sections."""

from __future__ import annotations

from imgui_bundle import imgui

PANEL_WIDTH = 400  # display pixels, at the window's right edge
ITEM_WIDTH = PANEL_WIDTH - 170  # sliders and combos, leaving room for their labels
FONT = "fonts/Roboto-Regular.ttf"  # under assets/
FONT_SIZE = 15.0

GREY = imgui.ImVec4(0.62, 0.64, 0.68, 1.0)
MESSAGE = imgui.ImVec4(1.0, 0.82, 0.35, 1.0)
ERROR = imgui.ImVec4(1.0, 0.38, 0.33, 1.0)


def tooltip(text: str) -> None:
    if text:
        imgui.set_item_tooltip(text)


def disabled_tooltip(text: str) -> None:
    if text and imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip(text)


def wrapped(colour, text: str) -> None:
    """Coloured text wrapped at the panel's edge."""
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(colour, text)
    imgui.pop_text_wrap_pos()
