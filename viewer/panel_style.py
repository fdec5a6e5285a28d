"""Colours and tooltip helpers shared by the panel's sections."""

from __future__ import annotations

from imgui_bundle import imgui

GREY = imgui.ImVec4(0.62, 0.64, 0.68, 1.0)
MESSAGE = imgui.ImVec4(1.0, 0.82, 0.35, 1.0)
ERROR = imgui.ImVec4(1.0, 0.38, 0.33, 1.0)


def tooltip(text: str) -> None:
    if text:
        imgui.set_item_tooltip(text)


def disabled_tooltip(text: str) -> None:
    if text and imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip(text)
