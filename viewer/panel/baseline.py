"""A/B in the window: a baseline benchmark JSON (``bench ... --json``) loaded in the stage times section,
its stage times drawn as ghost bars beside the live ones.

The baseline's record is the one closest to the live configuration (``sim.cmdline.baseline.closest``: the same
scene and backend, then variant, block, preset, options and the nearest count); the line above the bars
says which it is and in what it differs when inexact. Times are per physics step (a bench record's
``stage_ms`` are; the live ones are Speed of light's: the median of the last frames that ran a stage, over
the frame's steps, at least one). A file that cannot be read says why on the message line; the previous
baseline, if any, stays.
"""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from sim.cmdline import baseline
from sim.cmdline.bench import configuration
from sim.cmdline.cli import UsageError
from viewer.panel.speed_of_light import recent_ms
from viewer.panel.style import GREY, tooltip, wrapped

GHOST_ALPHA = 0.3
BAR_WIDTH = 0.38


class BaselineBars:
    """The loaded baseline (a report of ``sim.cmdline.baseline.load``), the file field's text, and the bars."""

    def __init__(self, report: dict | None = None):
        self.report = report
        self.path = report["path"] if report else ""
        self._matched: tuple | None = None  # (live configuration key, (record, differs))
        self.bars: tuple[list[str], np.ndarray, np.ndarray] | None = None  # the last drawn: names, live, ghost

    def load(self, ctl, path: str) -> bool:
        """Load ``path`` as the baseline; on failure the message line says why and nothing changes."""
        try:
            report = baseline.load(path.strip())
        except UsageError as exc:
            ctl.say(f"baseline not loaded: {exc}")
            return False
        self.report, self.path, self._matched = report, path.strip(), None
        ctl.say(
            f"baseline: {len(report['results'])} timed records from {self.path} "
            f"({report.get('device', '?')}, commit {report.get('commit', '?')})"
        )
        return True

    def match(self, scene) -> tuple[dict | None, list[str]]:
        """The baseline's record for the live configuration, found again only when that changes."""
        want = configuration(scene)
        key = baseline.key(want)
        if self._matched is None or self._matched[0] != key:
            self._matched = (key, baseline.closest(self.report["results"], want))
        return self._matched[1]

    def stage_times(self, scene, record: dict) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(the baseline's stage names, live ms per step, baseline ms per step): the stages the two share
        and the baseline's others (0 now); the window's own (render) has no counterpart in a bench."""
        steps = max(float(scene.frame_steps), 1.0)  # frames that step less often record no time
        old = record.get("stage_ms", {})
        names = list(old)
        live = np.array([recent_ms(scene.timer, name) / steps for name in names])
        ghost = np.array([float(old[name]) for name in names])
        return names, live, ghost


def draw_baseline(ctl, bars: BaselineBars) -> None:
    """The file field, Load, and (with a baseline) the live and ghost bars per stage."""
    imgui.set_next_item_width(-60)
    _, bars.path = imgui.input_text("##baseline", bars.path)
    tooltip("a benchmark JSON (bench ... --json FILE) to draw beside the live stage times")
    imgui.same_line()
    if imgui.button("Load##baseline"):
        bars.load(ctl, bars.path)
    if bars.report is None:
        wrapped(GREY, "no baseline: load one to compare stage times (A/B)")
        bars.bars = None
        return
    record, differs = bars.match(ctl.scene)
    if record is None:
        wrapped(GREY, f"the baseline has no {ctl.scene.spec.name} run on the {ctl.scene.backend}")
        bars.bars = None
        return
    inexact = f" (closest; differs in {', '.join(differs)})" if differs else ""
    wrapped(GREY, f"baseline: {baseline.describe(record)}{inexact}")
    names, live, ghost = bars.bars = bars.stage_times(ctl.scene, record)
    if implot.begin_plot("##baseline_bars", (-1, 120), implot.Flags_.no_menus | implot.Flags_.no_box_select):
        xs = np.arange(len(names), dtype=np.float64)
        implot.setup_axes("", "ms per step", 0, implot.AxisFlags_.auto_fit)
        implot.setup_axis_ticks(implot.ImAxis_.x1, xs.tolist(), names)
        implot.setup_axis_limits(implot.ImAxis_.x1, -0.6, len(names) - 0.4, imgui.Cond_.always)
        implot.setup_legend(implot.Location_.north, implot.LegendFlags_.horizontal | implot.LegendFlags_.outside)
        implot.plot_bars("now", xs - BAR_WIDTH / 2, live, BAR_WIDTH)
        ghost_spec = implot.Spec()
        ghost_spec.fill_alpha = GHOST_ALPHA
        implot.plot_bars("baseline", xs + BAR_WIDTH / 2, ghost, BAR_WIDTH, ghost_spec)
        implot.end_plot()
