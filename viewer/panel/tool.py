"""The panel's tool section, for scenes with a pointer tool (``spec.tool``): on / off, how to use
it, and its own sliders."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.panel.section import PanelContext, PanelSection
from viewer.panel.style import GREY, TOOL, item_width, tooltip, wrapped


def tool_hint(ctl) -> str:
    """Which gestures reach the tool now, and which the camera keeps."""
    if ctl.scene.controls.tool_on:
        return "on: left and right drags use it; middle or shift + left drag pans, the wheel zooms"
    return "off: ctrl + left drag uses it; the camera keeps the other drags"


class ToolSection(PanelSection):
    title = TOOL

    def shows(self, ctx: PanelContext) -> bool:
        return ctx.scene.spec.tool is not None

    def draw(self, ctx: PanelContext) -> None:
        _draw(ctx.controller)


def _draw(ctl) -> None:
    tool, scene = ctl.spec.tool, ctl.scene
    changed, on = imgui.checkbox(f"{tool.name} tool", bool(scene.controls.tool_on))
    if changed:
        ctl.set_tool(on)
    tooltip(tool.help)
    wrapped(GREY, tool.help)
    wrapped(GREY, tool_hint(ctl))
    imgui.push_item_width(item_width())
    for param in tool.params:
        flags = imgui.SliderFlags_.logarithmic if param.log else 0
        value = float(scene.controls.tool_values[param.name])
        moved, new = imgui.slider_float(param.label, value, param.lo, param.hi, param.fmt, flags)
        if moved:
            ctl.set_tool_value(param.name, new)
        tooltip(param.help)
    imgui.pop_item_width()
