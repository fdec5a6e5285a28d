"""The pointer tool's reach drawn around the pointer: a ring as wide as the tool acts (the push
radius, the brush), while the tool is on and the pointer is over the view, and during a tool drag
(also a Ctrl + drag with the tool off)."""

from __future__ import annotations

import math

from imgui_bundle import imgui

from viewer.pick.tooltip import project
from viewer.window.input import TOOL, scene_point

RING_LIGHT = imgui.ImVec4(1.0, 1.0, 1.0, 0.9)
RING_DARK = imgui.ImVec4(0.0, 0.0, 0.0, 0.6)  # under the light one: visible on light and dark colours


def draw_tool_reach(
    scene,
    camera,
    pointer: tuple[float, float] | None,
    geometry,
    panel_takes_mouse: bool,
    fb_size: tuple[int, int],
    drag: str | None,
) -> None:
    """Inside the ImGui frame, on the view's background layer (under the panel): the reach of ``scene``'s tool
    around ``pointer`` (display pixels, y up); ``geometry``: the window's ``WindowGeometry``; ``drag``: the
    gesture of the button held down, if any."""
    if scene.spec.tool is None or camera is None or pointer is None:
        return
    hovering = drag is None and scene.controls.tool_on and not panel_takes_mouse and geometry.over_view(pointer[0])
    reach = scene.tool_reach()
    if not (hovering or drag == TOOL) or not reach:
        return
    scale = geometry.fb_scale(fb_size)
    covered = geometry.covered_right(fb_size)
    x, y, _, _ = scene_point(camera, pointer[0] * scale, pointer[1] * scale, fb_size, covered)
    if not (math.isfinite(x) and math.isfinite(y)):
        return
    view = camera.view_matrix()
    proj = camera.projection_matrix(fb_size[0] / max(fb_size[1], 1), covered / max(fb_size[0], 1))
    display = tuple(float(v) for v in geometry.size())
    cx, cy, w = project((x, y, 0.0), view, proj, display)
    ex, ey, _ = project((x + reach, y, 0.0), view, proj, display)
    if not w > 0:
        return
    radius = math.hypot(ex - cx, ey - cy)
    draw = imgui.get_background_draw_list()
    draw.add_circle((cx, cy), radius, imgui.color_convert_float4_to_u32(RING_DARK), 0, 4.0)
    draw.add_circle((cx, cy), radius, imgui.color_convert_float4_to_u32(RING_LIGHT), 0, 2.0)
