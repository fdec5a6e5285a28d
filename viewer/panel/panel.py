"""The panel: a window at the right edge holding the message line and every section in order."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.panel.colour import draw_color_section
from viewer.panel.gpu import draw_gpu_section
from viewer.panel.histogram import draw_histogram_section
from viewer.panel.physics import draw_physics_section
from viewer.panel.run import draw_run_section
from viewer.panel.scene import SceneSection
from viewer.panel.stats import draw_stats_section
from viewer.panel.style import GREY, MESSAGE, PANEL_WIDTH, wrapped
from viewer.panel.timings import draw_timing_section
from viewer.panel.tool import draw_tool_section

__all__ = ["PANEL_WIDTH", "Panel"]


class Panel:
    def __init__(self):
        self.scene_section = SceneSection()

    def draw(self, ctl, app=None, shown=None, feed=None) -> None:
        """Draw the panel for controller ``ctl``; ``app`` (the window) adds its own rows; ``shown`` is
        the view drawn this frame (for its legend), ``feed`` how it reached the GL buffers."""
        io = imgui.get_io()
        height = io.display_size.y - 16
        imgui.set_next_window_pos((io.display_size.x - PANEL_WIDTH - 8, 8), imgui.Cond_.always)
        imgui.set_next_window_size((PANEL_WIDTH, height), imgui.Cond_.always)
        imgui.set_next_window_bg_alpha(0.88)
        flags = imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_resize
        flags |= imgui.WindowFlags_.no_saved_settings
        expanded, _ = imgui.begin("kernel-lab", None, flags)
        if expanded:
            if ctl.message:  # first, so key feedback is never scrolled out of sight
                wrapped(MESSAGE, ctl.message)
            else:
                imgui.text_colored(GREY, "F1: keys and mouse")
            self.scene_section.draw(ctl)
            draw_gpu_section(ctl, feed)
            draw_run_section(ctl, app)
            draw_physics_section(ctl)
            draw_tool_section(ctl)
            draw_color_section(ctl, shown)
            draw_stats_section(ctl, app)
            draw_timing_section(ctl)
            draw_histogram_section(ctl.histogram, ctl.scene)
        imgui.end()
