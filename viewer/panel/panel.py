"""The panel: a window at the right edge holding the message line and, scrolling under it, every
section in order.

Sections fold (their open state is kept with the settings); the counters come early so that they
stay in sight on a small window."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.panel.baseline import BaselineBars
from viewer.panel.colour import draw_color_section
from viewer.panel.display import draw_display_section
from viewer.panel.gpu import draw_gpu_section
from viewer.panel.histogram import draw_histogram_section
from viewer.panel.physics import draw_physics_section
from viewer.panel.record import draw_record_section, draw_recording_indicator
from viewer.panel.run import draw_run_section
from viewer.panel.scene import SceneSection
from viewer.panel.speed_of_light import SpeedOfLightSection
from viewer.panel.stats import draw_stats_section
from viewer.panel.style import GREY, MARGIN, MESSAGE, PANEL_WIDTH, panel_width, wrapped
from viewer.panel.timings import draw_timing_section
from viewer.panel.tool import draw_tool_section
from viewer.panel.user_kernel import draw_user_kernel_section

__all__ = ["PANEL_WIDTH", "Panel"]


class Panel:
    def __init__(self, baseline: dict | None = None):
        self.scene_section = SceneSection()
        self.speed_of_light = SpeedOfLightSection()
        self.baseline = BaselineBars(baseline)  # a report of sim.baseline.load (view --baseline), or None

    def draw(self, ctl, app=None, shown=None, feed=None, legend=None) -> None:
        """Draw the panel for controller ``ctl``; ``app`` (the window) adds its own rows and sections;
        ``shown`` is the view drawn this frame, ``legend`` its legend over the range in force, ``feed``
        how it reached the GL buffers."""
        if _begin_panel_window():
            # The recording dot and the message line stay above the sections, which scroll in a region
            # of their own: key feedback is never scrolled out of sight.
            if app is not None and app.recording.active:
                draw_recording_indicator(app)
            _message_line(ctl)
            imgui.begin_child("##sections")  # its items are clipped when it is hidden; end_child always
            self.scene_section.draw(ctl)
            draw_run_section(ctl, app)
            draw_stats_section(ctl, app)
            draw_color_section(ctl, shown, legend)
            if app is not None:
                draw_record_section(app)
            draw_gpu_section(ctl, feed)
            draw_user_kernel_section(ctl, self.speed_of_light)
            draw_physics_section(ctl)
            draw_tool_section(ctl)
            draw_timing_section(ctl, self.baseline)
            self.speed_of_light.draw(ctl)
            draw_histogram_section(ctl.histogram, ctl.scene)
            if app is not None:
                draw_display_section(app)
            imgui.end_child()
        imgui.end()

    @staticmethod
    def draw_busy(ctl, note: str) -> None:
        """The panel while the scene's first frame runs on a worker thread (its kernels compiling): the
        message line, which scene, and ``note``. The sections read the scene the worker is stepping, so they
        wait; the panel stays in place rather than vanish for the seconds a cold compile takes."""
        if _begin_panel_window():
            _message_line(ctl)
            scene = ctl.scene
            wrapped(GREY, f"scene {ctl.spec.name}, preset {scene.preset}, physics on {scene.backend}")
            wrapped(MESSAGE, note)
        imgui.end()


def _begin_panel_window() -> bool:
    """The panel's window at the right edge; True when it is expanded. ``imgui.end()`` closes it either way."""
    io = imgui.get_io()
    width = panel_width()
    height = io.display_size.y - 2 * MARGIN
    imgui.set_next_window_pos((io.display_size.x - width - MARGIN, MARGIN), imgui.Cond_.always)
    imgui.set_next_window_size((width, height), imgui.Cond_.always)
    imgui.set_next_window_bg_alpha(0.88)
    flags = imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_resize
    flags |= imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_scrollbar
    flags |= imgui.WindowFlags_.no_scroll_with_mouse
    expanded, _ = imgui.begin("kernel-lab", None, flags)
    return expanded


def _message_line(ctl) -> None:
    if ctl.message:
        wrapped(MESSAGE, ctl.message)
    else:
        wrapped(GREY, "F1: keys and mouse; hover an item for its values, click pins it")
    imgui.separator()
