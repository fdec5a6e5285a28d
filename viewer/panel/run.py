"""The panel's run section: pause / step / reset, and with a window the camera, help, frame limit
and screenshot buttons."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.panel.section import PanelContext, PanelSection
from viewer.panel.style import RUN, tooltip


class RunSection(PanelSection):
    title = RUN

    def draw(self, ctx: PanelContext) -> None:
        _draw(ctx.controller, ctx.window)


def _draw(ctl, app) -> None:
    if imgui.button("Resume" if ctl.paused else "Pause", (80, 0)):
        ctl.toggle_pause()
    tooltip("space")
    imgui.same_line()
    if imgui.button("Step"):
        ctl.single_step()
    tooltip("s: pause and advance one physics step")
    imgui.same_line()
    if imgui.button("Reset"):
        ctl.reset()
    tooltip("r: reload the preset")
    if app is None:
        return
    imgui.same_line()
    if imgui.button("Camera"):
        app.actions.reset_camera()
    tooltip("Home: default view")
    imgui.same_line()
    if imgui.button("Help"):
        app.actions.toggle_help()
    tooltip("F1: keys and mouse")
    changed, limited = imgui.checkbox("limit to 60 fps", app.max_fps is not None)
    if changed:
        app.max_fps = 60.0 if limited else None
    tooltip("off: draw as fast as possible (physics then runs faster than real time)")
    imgui.same_line()
    if imgui.button("Screenshot"):
        app.actions.screenshot()
    tooltip("F12")
