"""Speed of light: what a stage must move and compute, against what the device can do.

Each scene declares a model per stage (``SceneSpec.models``: ``models(setup) -> {stage: StageModel}``,
beside its builds in ``kernels.py``): per unit of work (an item, a pair, an item-step, a system) the
bytes the algorithm must move at the least, the DRAM bytes the chosen variant moves, and the
arithmetic it does, and where measured the SASS warp instructions and L1 data-pipe wavefronts the variant
executes; ``units`` is how many
units the timed window covers. ``analyse`` turns a model, the window's milliseconds and the device's peaks
(``sim.gpu.peaks``) into the roofline's figures: GB/s and % of the copy peak, GFLOP/s and % of the FLOP peak,
% of the schedulers' issue slots and of L1's data pipe (where the model counts instructions, wavefronts), and
what bounds the stage.

Plain data, no GPU: the viewer's "Speed of light" section and the benchmarks' columns share it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sim.contract import SceneSpec, load

FlopKind = Literal["fp32", "fp64", "fp64-tensor", "int"]
Where = Literal["device", "link", "host"]  # DRAM of the GPU, the host<->device link, the host alone
BOUND_SHARE = 60.0  # % of a peak from which that peak bounds the stage


@dataclass(frozen=True)
class StageModel:
    """One stage's work: bytes and operations per unit, and the units in the timed window."""

    bytes_min: float  # the algorithm's least DRAM traffic per unit, one step at a time
    bytes_actual: float  # what this variant moves through DRAM per unit (what ncu's dram__bytes counts)
    flops: float  # arithmetic per unit (``flop_kind``; integer ops for "int")
    units: float  # units the timed window covers
    per: str  # what a unit is: "item", "pair", "item-step", "entry-step", "system"
    flop_kind: FlopKind = "fp32"
    where: Where = "device"
    note: str = ""
    # SASS warp instructions per unit the variant executes (what ncu's smsp__inst_executed counts): each takes
    # one scheduler's issue slot. 0: not modelled (no issue limit)
    instructions: float = 0.0
    # L1 data-pipe wavefronts per unit the variant executes (ncu's l1tex__data_pipe_lsu_wavefronts): an SM's pipe
    # takes one a clock; a shared-memory access one per round of bank conflicts. 0: not modelled (no L1 limit)
    wavefronts: float = 0.0
    # Stages that run one after another inside this one (a frame of both replayed as one CUDA graph): its
    # least time is the sum of theirs, since a stage waits for the one before. Empty: a stage of its own.
    parts: tuple[StageModel, ...] = ()

    @property
    def total_bytes(self) -> float:
        return self.bytes_actual * self.units

    @property
    def total_flops(self) -> float:
        return self.flops * self.units

    @property
    def total_instructions(self) -> float:
        return self.instructions * self.units

    @property
    def total_wavefronts(self) -> float:
        return self.wavefronts * self.units

    @property
    def intensity(self) -> float:
        """FLOP per DRAM byte (the roofline's x axis)."""
        return self.flops / self.bytes_actual if self.bytes_actual > 0 else 0.0


@dataclass(frozen=True)
class Setup:
    """What a model reads: the scene's size and knobs, and the steps the timed window covers."""

    n: int
    steps: float = 1.0  # steps the timed milliseconds cover (bench: 1, per step; the viewer: a frame's)
    variant: str = ""
    block: Any = None
    options: Mapping[str, str | int] = field(default_factory=dict)  # the knobs' choices; heat's k may be an int
    preset: str = ""
    stats: Mapping[str, Any] = field(default_factory=dict)  # the scene's statistics (pairs, k, buckets, ...)

    @classmethod
    def of_scene(cls, scene, steps: float) -> Setup:
        knobs = scene.knobs
        return cls(scene.n, steps, knobs.variant, knobs.block, dict(knobs.options), scene.preset, scene.stats())


def models(spec: SceneSpec, setup: Setup) -> dict[str, StageModel]:
    """The spec's stage models for ``setup`` (empty when the scene declares none)."""
    return load(spec.models)(setup) if spec.models else {}


@dataclass(frozen=True)
class StagePerf:
    """A stage's place on the roofline."""

    stage: str
    ms: float
    gbs: float  # DRAM (or link) GB/s the model's actual bytes make in ``ms``
    copy_pct: float | None  # % of the copy peak (None: no peak applies, host work)
    gflops: float
    flop_pct: float | None
    intensity: float  # FLOP per byte
    bound: str  # "memory", "arithmetic", "issue", "l1", "latency"; "" where no peak applies
    min_ms: float | None  # the speed-of-light time: the slowest of the least bytes, FLOPs, instructions, wavefronts
    model: StageModel | None = None  # what the figures come from
    issue_pct: float | None = None  # % of the issue slots (None: the model counts no instructions, or no peaks)
    l1_pct: float | None = None  # % of L1's data pipe (None: the model counts no wavefronts, or no peaks)

    def as_json(self) -> dict:
        return {
            "gbs": self.gbs,
            "copy_pct": self.copy_pct,
            "gflops": self.gflops,
            "flop_pct": self.flop_pct,
            "intensity": self.intensity,
            "bound": self.bound,
            "sol_ms": self.min_ms,
            "issue_pct": self.issue_pct,
            "l1_pct": self.l1_pct,
        }


def bound(
    copy_pct: float | None, flop_pct: float | None, issue_pct: float | None = None, l1_pct: float | None = None
) -> str:
    """What limits a stage: the peak it reaches at least 60% of (the nearest if more than one), else latency.
    The issue slots and L1's data pipe count only where the model gives instructions, wavefronts (not None)."""
    if copy_pct is None or flop_pct is None:
        return ""
    shares = [(copy_pct, "memory"), (flop_pct, "arithmetic")]
    if issue_pct is not None:
        shares.append((issue_pct, "issue"))
    if l1_pct is not None:
        shares.append((l1_pct, "l1"))
    share, name = max(shares, key=lambda pair: pair[0])  # the first of equals: memory, then arithmetic
    return name if share >= BOUND_SHARE else "latency"


def least_ms(model: StageModel, peaks) -> float:
    """The speed-of-light time of a stage of its own: the slowest of its least bytes at the copy peak, its
    arithmetic at the FLOP peak and, where counted, its instructions at the issue peak and its wavefronts at
    L1's (``peaks`` of a device)."""
    byte_peak = peaks.link_gbs if model.where == "link" else peaks.copy_gbs
    least = min(model.bytes_min, model.bytes_actual)  # a variant that fuses steps beats the step's least
    limits = [least * model.units / (byte_peak * 1e9), model.total_flops / (peaks.flop_peak(model.flop_kind) * 1e9)]
    if model.instructions > 0 and peaks.issue_ginst:
        limits.append(model.total_instructions / (peaks.issue_ginst * 1e9))
    if model.wavefronts > 0 and peaks.l1_gwave:
        limits.append(model.total_wavefronts / (peaks.l1_gwave * 1e9))
    return 1e3 * max(limits)


def analyse(stage: str, model: StageModel, ms: float, peaks) -> StagePerf:
    """The figures of ``stage`` timed at ``ms`` for its window; ``peaks`` (``sim.gpu.peaks.Peaks``) or None."""
    seconds = ms * 1e-3
    gbs = model.total_bytes / seconds / 1e9 if seconds > 0 else 0.0
    gflops = model.total_flops / seconds / 1e9 if seconds > 0 else 0.0
    ginst = model.total_instructions / seconds / 1e9 if seconds > 0 else 0.0
    gwave = model.total_wavefronts / seconds / 1e9 if seconds > 0 else 0.0
    byte_peak = flop_peak = issue_peak = l1_peak = None
    if peaks is not None and model.where != "host":
        byte_peak = peaks.link_gbs if model.where == "link" else peaks.copy_gbs
        flop_peak = peaks.flop_peak(model.flop_kind)
        issue_peak = peaks.issue_ginst if model.instructions > 0 else None
        l1_peak = peaks.l1_gwave if model.wavefronts > 0 else None
    copy_pct = 100.0 * gbs / byte_peak if byte_peak else None
    flop_pct = 100.0 * gflops / flop_peak if flop_peak else None
    issue_pct = 100.0 * ginst / issue_peak if issue_peak else None
    l1_pct = 100.0 * gwave / l1_peak if l1_peak else None
    min_ms = None
    if byte_peak and flop_peak:
        min_ms = sum(least_ms(part, peaks) for part in model.parts) if model.parts else least_ms(model, peaks)
    return StagePerf(
        stage,
        ms,
        gbs,
        copy_pct,
        gflops,
        flop_pct,
        model.intensity,
        bound(copy_pct, flop_pct, issue_pct, l1_pct),
        min_ms,
        model,
        issue_pct,
        l1_pct,
    )


def analyse_stages(spec: SceneSpec, setup: Setup, stage_ms: Mapping[str, float], peaks) -> list[StagePerf]:
    """Every modelled stage with a time (> 0) in ``stage_ms``, in its order (a timer's: the spec's stages,
    then those a scene times now and then, such as a frame replayed as one CUDA graph)."""
    stage_models = models(spec, setup)
    return [
        analyse(name, stage_models[name], ms, peaks)
        for name, ms in stage_ms.items()
        if name in stage_models and ms > 0.0
    ]


def figures(spec: SceneSpec, setup: Setup, stage_ms: Mapping[str, float], peaks) -> dict[str, dict]:
    """The benchmark record's ``speed_of_light``: stage -> its figures (JSON)."""
    return {perf.stage: perf.as_json() for perf in analyse_stages(spec, setup, stage_ms, peaks)}


OPERATIONS = {"fp32": "FP32 FLOP", "fp64": "FP64 FLOP", "fp64-tensor": "FP64 tensor-core FLOP", "int": "integer ops"}
TRAFFIC = {"device": "through DRAM", "link": "over the host link", "host": "on the host"}


def model_lines(perf: StagePerf) -> list[str]:
    """The model behind a stage's figures, in words: its time against its speed of light, its bytes and
    operations per unit, the units timed and the model's note."""
    lines = [f"{perf.ms:.4g} ms now" + (f", {perf.min_ms:.4g} ms at the speed of light" if perf.min_ms else "")]
    m = perf.model
    if m is not None:
        issue = f", {m.instructions:,.4g} warp instructions" if m.instructions > 0 else ""
        issue += f", {m.wavefronts:,.4g} L1 wavefronts" if m.wavefronts > 0 else ""
        lines += [
            f"per {m.per}: {m.bytes_actual:,.4g} B {TRAFFIC[m.where]} ({m.bytes_min:,.4g} B the least), "
            f"{m.flops:,.4g} {OPERATIONS[m.flop_kind]}{issue}",
            f"{m.units:,.0f} {m.per}s in the timed steps",
        ]
        if perf.issue_pct is not None:
            lines.append(f"{perf.issue_pct:.0f}% of the schedulers' issue slots")
        if perf.l1_pct is not None:
            lines.append(f"{perf.l1_pct:.0f}% of L1's data pipe (its wavefronts)")
        if m.note:
            lines.append(m.note)
    return lines


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}%"


def has_issue(figs: Iterable[Mapping[str, Any]]) -> bool:
    """Whether any of the figures has a % of the issue slots (a table then prints that column)."""
    return any(fig.get("issue_pct") is not None for fig in figs)


def figure_text(fig: Mapping[str, Any], rates_only: bool = False, issue: bool | None = None) -> str:
    """One stage's figures as the tables print them: GB/s, % of copy, GFLOP/s, % of FLOP peak, % of the issue
    slots (with ``issue``; None: where the figure has it, as records older than it do not), bound;
    ``rates_only`` (no peaks, as on the CPU): GB/s and GFLOP/s alone."""
    if rates_only:
        return f"{fig['gbs']:>9.1f} GB/s  {fig['gflops']:>9.1f} GFLOP/s"
    if issue is None:
        issue = has_issue([fig])
    slots = f" {percent(fig.get('issue_pct')):>6}" if issue else ""
    return (
        f"{fig['gbs']:>9.1f} GB/s {percent(fig['copy_pct']):>5}  {fig['gflops']:>9.1f} GFLOP/s "
        f"{percent(fig['flop_pct']):>5}{slots}  {fig['bound'] or '-'}"
    )


def figure_header(rates_only: bool = False, issue: bool = False) -> str:
    """The heads over ``figure_text``'s columns (``issue``: with the % of the issue slots)."""
    if rates_only:
        return f"{'memory':>14}  {'compute':>17}  speed of light: rates only (no peaks on the CPU: no % or bound)"
    slots = f" {'%issue':>6}" if issue else ""
    return f"{'memory':>14} {'%copy':>5}  {'compute':>17} {'%peak':>5}{slots}  bound (speed of light)"


def record_lines(record: Mapping[str, Any]) -> list[str]:
    """A benchmark record's speed-of-light lines, one per stage (none when it has no figures); the % of the
    issue slots in a column of its own where any stage has it."""
    found = record.get("speed_of_light", {})
    issue = has_issue(found.values())
    return [f"speed of light {stage:<16}{figure_text(fig, issue=issue)}" for stage, fig in found.items()]
