"""The panel's "Speed of light": how close each GPU stage is to what the device can do.

Per stage (the scene's models, ``sim.gpu.roofline``, over the median of the last frames' stage times): GB/s and
% of the device's copy peak, GFLOP/s and % of its FLOP peak, % of its schedulers' issue slots where the model
counts the stage's instructions ("-" where it does not), and what bounds it (L1's data pipe among the limits
where the model counts its wavefronts; the stage's name tells the model behind them and its speed-of-light time
when hovered); a log-log roofline with
the memory and compute roofs from the device's peaks (``sim.gpu.peaks``) and a point per stage, which moves as
the variant, the block size or the size change; and where the peaks came from. The section measures GPU
stages only: on the CPU it says how to run them on the GPU.

While a user's own kernel does its stage (``--kernel-file``), that stage's row and dot are the kernel's,
named after its file and figured with the stage's model for it (``sim.userkernel.speed``); the built-in
variant's figures for the stage at the same size, from the frames before the kernel took over, stay beside
it ("before yours").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from imgui_bundle import imgui, implot

from sim.gpu.roofline import Setup, StagePerf, analyse_stages, model_lines, percent
from sim.userkernel.speed import live_perf
from viewer.panel.section import PanelContext, PanelSection
from viewer.panel.style import GREY, SPEED_OF_LIGHT, tooltip, wrapped, wrapped_tooltip

RECENT = 30  # frames whose median a figure takes: a switched variant shows within half a second
COLUMNS = ("stage", "GB/s", "% copy", "GFLOP/s", "% FLOP", "% issue", "bound")
ISSUE_HELP = "% of the schedulers' issue slots the stage's warp instructions take ('-': the model counts none)"
INTENSITIES = np.logspace(-3, 4, 64)  # FLOP per byte, the roofline's x axis
BOUND_HELP = {
    "memory": "at least 60% of the copy peak: fewer bytes (or fused steps) would help",
    "arithmetic": "at least 60% of the FLOP peak: fewer operations would help",
    "issue": "at least 60% of the issue slots: fewer instructions (not only arithmetic) would help",
    "l1": "at least 60% of L1's data pipe: fewer wavefronts (shared-memory bank conflicts, scattered loads) would help",
    "latency": "no peak past 60%: launches, waits, exchanges or too little parallelism",
}


def recent_ms(timer, name: str) -> float:
    """The median of the stage's last RECENT frames that ran it (0 when none did)."""
    history = timer.history(name)[-RECENT:]
    ran = history[history > 0]
    return float(np.median(ran)) if ran.size else 0.0


def scene_perf(scene, peaks) -> list[StagePerf]:
    """Each modelled stage of the scene's last frames on the roofline. A frame's stage time covers the
    frame's steps (at least one: frames that step less often record no time)."""
    setup = Setup.of_scene(scene, steps=max(scene.frame_steps, 1.0))
    stage_ms = {name: recent_ms(scene.timer, name) for name in scene.timer.names}
    perfs = analyse_stages(scene.spec, setup, stage_ms, peaks)
    stage = user_stage_running(scene)
    if stage is None:
        return perfs
    # the stage's time is the user's kernel's: its row is figured with the model for the kernel, not the variant's
    mine = live_perf(scene, stage_ms.get(stage, 0.0), peaks)
    return [mine if p.stage == stage else p for p in perfs if p.stage != stage or mine is not None]


def user_stage_running(scene) -> str | None:
    """The stage a user's own kernel does now, or None."""
    knobs = getattr(scene, "knobs", None)
    user = getattr(knobs, "user", None)
    return user.stage.name if user is not None and knobs.user_runs() else None


def rows(perfs: list[StagePerf]) -> list[tuple[str, ...]]:
    """The table's rows, as the section writes them."""
    return [
        (
            p.stage,
            f"{p.gbs:,.1f}",
            percent(p.copy_pct),
            f"{p.gflops:,.1f}",
            percent(p.flop_pct),
            percent(p.issue_pct),
            p.bound or "-",
        )
        for p in perfs
    ]


@dataclass
class SpeedOfLightSection(PanelSection):
    """The section, with what it drew last (``rows``, ``note``) for the tests and the peaks it uses."""

    peaks_of: object = None  # device -> sim.gpu.peaks.Peaks or None; sim.gpu.peaks.current unless a test sets it
    rows: list | None = None
    note: str = ""
    mine: StagePerf | None = None  # the user's kernel's figures, while it does its stage
    before: StagePerf | None = None  # the built-in's for that stage at this size, before the kernel took over
    _builtin: dict = field(default_factory=dict)  # (stage, items) -> (variant, its last figures) of a replaceable stage
    title = SPEED_OF_LIGHT

    def shows(self, ctx: PanelContext) -> bool:
        return ctx.scene.spec.gpu is not None

    def draw(self, ctx: PanelContext) -> None:
        ctl = ctx.controller
        scene = ctl.scene
        if not ctl.gpu.kernels_run():
            self.rows, self.note = None, f"measures the GPU's stages: {scene.spec.gpu.kernels_run_hint}"
            wrapped(GREY, self.note)
            return
        peaks = self.peaks(scene.device)
        perfs = self._beside_yours(scene, scene_perf(scene, peaks))
        self.rows = rows(perfs)
        self.note = "" if perfs else "no modelled stage timed in the last frames"
        if self.note:
            wrapped(GREY, self.note)
        self._table(perfs)
        if peaks is not None:
            self._roofline(perfs, peaks)
            for line in peaks.source_lines():
                wrapped(GREY, line)
        else:
            wrapped(GREY, "no peaks for this device: measuring failed and no datasheet lists it")

    def _beside_yours(self, scene, perfs: list[StagePerf]) -> list[StagePerf]:
        """Remember the built-in's figures of a stage a user's kernel can replace; while the kernel does it,
        its figures with the built-in's last at this size beside them."""
        spec = scene.spec
        if not spec.user_stages:
            return perfs
        stage = user_stage_running(scene)
        if stage is None:
            self.mine = self.before = None
            replaceable = {s.name for s in spec.user_stages}
            for p in perfs:
                if p.stage in replaceable:
                    self._builtin[(p.stage, scene.n)] = (scene.knobs.variant, p)
            return perfs
        self.mine = next((p for p in perfs if p.stage == scene.knobs.user.variant), None)
        variant, found = self._builtin.get((stage, scene.n), (None, None))
        self.before = None if found is None else replace(found, stage=f"{stage}: {variant}, before yours")
        return perfs + ([self.before] if self.before is not None else [])

    def peaks(self, device: int):
        if self.peaks_of is None:
            from sim.gpu import peaks

            self.peaks_of = peaks.current
        return self.peaks_of(device)

    def _table(self, perfs: list[StagePerf]) -> None:
        flags = imgui.TableFlags_.borders_inner_h | imgui.TableFlags_.row_bg
        if not perfs or not imgui.begin_table("speed_of_light", len(COLUMNS), flags):
            return
        for name in COLUMNS:
            imgui.table_setup_column(name)
        imgui.table_headers_row()
        for perf, row in zip(perfs, self.rows, strict=True):
            imgui.table_next_row()
            for i, cell in enumerate(row):
                imgui.table_next_column()
                imgui.text(cell)
                if i == 0 and imgui.is_item_hovered(imgui.HoveredFlags_.for_tooltip):
                    wrapped_tooltip("\n".join(model_lines(perf)))
                if i == COLUMNS.index("% issue"):
                    tooltip(ISSUE_HELP)
                if i == len(row) - 1:
                    tooltip(BOUND_HELP.get(perf.bound, "host work: no device peak applies"))
        imgui.end_table()

    def _roofline(self, perfs: list[StagePerf], peaks) -> None:
        flags = implot.Flags_.no_menus | implot.Flags_.no_box_select
        if not implot.begin_plot("##roofline", (-1, 200), flags):
            return
        implot.setup_axes("FLOP per byte", "GFLOP/s", implot.AxisFlags_.none, implot.AxisFlags_.none)
        implot.setup_axis_scale(implot.ImAxis_.x1, implot.Scale_.log10)
        implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.log10)
        top = max(peaks.fp32_gflops, peaks.fp64_gflops) * 2
        implot.setup_axis_limits(implot.ImAxis_.x1, INTENSITIES[0], INTENSITIES[-1], imgui.Cond_.always)
        implot.setup_axis_limits(implot.ImAxis_.y1, top * 1e-6, top, imgui.Cond_.always)
        implot.setup_legend(implot.Location_.south_east, implot.LegendFlags_.none)
        memory = INTENSITIES * peaks.copy_gbs
        implot.plot_line("fp32 roof", INTENSITIES, np.minimum(memory, peaks.fp32_gflops))
        implot.plot_line("fp64 roof", INTENSITIES, np.minimum(memory, peaks.fp64_gflops))
        for perf in perfs:
            if perf.intensity > 0 and perf.gflops > 0 and perf.copy_pct is not None:
                implot.plot_scatter(perf.stage, np.array([perf.intensity]), np.array([perf.gflops]))
        implot.end_plot()
