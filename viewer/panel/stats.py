"""The panel's counters: the scene's statistics as its spec declares them (``spec.stats``: the same
lines ``run --headless`` prints), then the physics and render rates: frames per second with the time
between frames, and apart from it the time spent drawing one."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.panel.section import PanelContext, PanelSection
from viewer.panel.style import COUNTERS, tooltip


def counter_lines(ctl) -> list[tuple[str, str]]:
    """(line, help) per statistic of the scene's spec."""
    stats = ctl.stats()
    return [(stat.text(stats), stat.help) for stat in ctl.spec.stats]


def rate_lines(ctl, app=None) -> list[tuple[str, str]]:
    """(line, help) for the physics rate and, with a window, the frame rate and the draw time."""
    steps_s = 0.0 if ctl.paused else ctl.step_rate.rate
    lines = [
        (
            f"physics: {steps_s:,.0f} steps/s" + ("  (paused)" if ctl.paused else ""),
            "simulation steps per second of wall-clock time",
        )
    ]
    if app is not None:
        fps = app.frame_rate.rate
        apart = f", one every {1e3 / fps:.1f} ms" if fps > 0 else ""
        lines.append(
            (
                f"frames: {fps:.1f}/s{apart}",
                "frame time: from one displayed frame to the next (physics, drawing and waiting for the frame limit)",
            )
        )
        lines.append(
            (
                f"drawing: {app.render_ms:.1f} ms a frame",
                "draw time: the view, the panel and the buffer swap of one frame, without the physics",
            )
        )
    return lines


class CountersSection(PanelSection):
    title = COUNTERS

    def draw(self, ctx: PanelContext) -> None:
        imgui.push_text_wrap_pos(0.0)  # long values wrap instead of running under the panel's edge
        for line, help in counter_lines(ctx.controller) + rate_lines(ctx.controller, ctx.window):
            imgui.text_unformatted(line)
            tooltip(help)
        imgui.pop_text_wrap_pos()
