"""The panel: a window at the right edge holding the message line and, scrolling under it, every
section in order.

Sections fold (their open state is kept with the settings); the counters come early so that they
stay in sight on a small window."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.panel.baseline import BaselineBars
from viewer.panel.colour import ColourSection
from viewer.panel.display import DisplaySection
from viewer.panel.gpu import CudaSection
from viewer.panel.histogram import PairDistancesSection
from viewer.panel.physics import PhysicsSection
from viewer.panel.record import RecordSection, draw_recording_indicator
from viewer.panel.run import RunSection
from viewer.panel.scene import SceneSection
from viewer.panel.section import PanelContext, Section
from viewer.panel.speed_of_light import SpeedOfLightSection
from viewer.panel.stats import CountersSection
from viewer.panel.style import GREY, MARGIN, MESSAGE, PANEL_WIDTH, SECTIONS, panel_width, section, wrapped
from viewer.panel.timings import StageTimesSection
from viewer.panel.tool import ToolSection
from viewer.panel.user_kernel import YourKernelSection

__all__ = ["PANEL_WIDTH", "Panel"]


def in_panel_order(sections: list[Section]) -> list[Section]:
    """``sections`` in ``style.SECTIONS``' order: one for each title there, no other."""
    by_title = {s.title: s for s in sections}
    if sorted(by_title) != sorted(SECTIONS) or len(by_title) != len(sections):
        raise ValueError(f"the panel's sections {sorted(s.title for s in sections)} are not style.SECTIONS")
    return [by_title[title] for title in SECTIONS]


class Panel:
    def __init__(self, baseline: dict | None = None):
        self.scene_section = SceneSection()
        self.speed_of_light = SpeedOfLightSection()
        self.baseline = BaselineBars(baseline)  # a report of sim.cmdline.baseline.load (view --baseline), or None
        self.sections = in_panel_order(
            [
                self.scene_section,
                RunSection(),
                CountersSection(),
                ColourSection(),
                RecordSection(),
                CudaSection(),
                YourKernelSection(self.speed_of_light),
                PhysicsSection(),
                ToolSection(),
                StageTimesSection(self.baseline),
                self.speed_of_light,
                PairDistancesSection(),
                DisplaySection(),
            ]
        )
        self.context = PanelContext()  # filled each frame: the sections' one argument

    def draw(self, ctl, app=None, shown=None, feed=None, legend=None) -> None:
        """Draw the panel for controller ``ctl``; ``app`` (the window's ``WindowControls``) adds its own rows
        and sections; ``shown`` is the view drawn this frame, ``legend`` its legend over the range in force,
        ``feed`` how it reached the GL buffers."""
        ctx = self.context
        ctx.controller, ctx.window, ctx.shown, ctx.feed, ctx.legend = ctl, app, shown, feed, legend
        if _begin_panel_window():
            # The recording dot and the message line stay above the sections, which scroll in a region
            # of their own: key feedback is never scrolled out of sight.
            if app is not None and app.recording.active:
                draw_recording_indicator(app)
            _message_line(ctl)
            imgui.begin_child("##sections")  # its items are clipped when it is hidden; end_child always
            for part in self.sections:
                if not part.shows(ctx):
                    continue
                if section(part.title, part.folded):
                    part.draw(ctx)
                else:
                    part.draw_folded(ctx)
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
