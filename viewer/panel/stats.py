"""The panel's counters: the scene's statistics as its spec declares them (``spec.stats``: the same
lines ``run --headless`` prints), then the physics and render rates."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.panel.style import tooltip


def counter_lines(ctl) -> list[tuple[str, str]]:
    """(line, help) per statistic of the scene's spec."""
    stats = ctl.stats()
    return [(stat.text(stats), stat.help) for stat in ctl.spec.stats]


def draw_stats_section(ctl, app=None) -> None:
    imgui.separator_text("Counters")
    for line, help in counter_lines(ctl):
        imgui.text(line)
        tooltip(help)
    steps_s = 0.0 if ctl.paused else ctl.step_rate.rate
    imgui.text(f"physics: {steps_s:,.0f} steps/s" + ("  (paused)" if ctl.paused else ""))
    if app is not None:
        imgui.text(f"render: {app.frame_rate.rate:.1f} frames/s, {app.render_ms:.1f} ms per frame")
