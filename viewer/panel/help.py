"""The F1 help window: the viewer's keys and the scene's own (from its spec), then the mouse, read
from the same tables as the key dispatcher so it cannot drift."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.keys import MOUSE_HELP, bindings_for
from viewer.panel.style import GREY


def draw_help(spec) -> bool:
    """The F1 window for a scene of ``spec``; returns False when the user closed it."""
    io = imgui.get_io()
    centre = (io.display_size.x * 0.33, io.display_size.y * 0.5)
    imgui.set_next_window_pos(centre, imgui.Cond_.appearing, (0.5, 0.5))
    imgui.set_next_window_bg_alpha(0.94)
    flags = imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_saved_settings
    _, still_open = imgui.begin("Keys and mouse (F1)", True, flags)
    rows = [(b.label, b.help) for b in bindings_for(spec)]
    mouse = [(gesture, what) for gesture, what in MOUSE_HELP if spec.tool is not None or "tool" not in gesture]
    if imgui.begin_table("keys", 2, imgui.TableFlags_.row_bg):
        for left, right in rows + mouse:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(left)
            imgui.table_next_column()
            imgui.text(right)
        imgui.end_table()
    imgui.text_colored(GREY, "(GPU) keys say why they are unavailable when there is no GPU backend.")
    imgui.end()
    return bool(still_open)
