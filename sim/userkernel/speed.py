"""Your kernel against the speed of light: its GB/s, GFLOP/s and % of the device's peaks from the stage's
model, beside the built-in variants' on the same inputs.

The model is the one the viewer's "Speed of light" section uses for the stage (``SceneSpec.models``,
keyed by the user stage's name: heat ``step``, sdh ``histogram``, balls ``proximity``, particles
``forces``, durbin ``batched``), at the setup the stage's adapter gives for the inputs
(``StageAdapter.model_setup``: the size, the variant, the block). Each variant is figured with its own
model (the user's kernel with its file's name: the algorithm's bytes, no variant's tricks), as the
section does. Without peaks (no GPU, as on the CPU) the figures are rates alone (``sim.gpu.roofline``'s
rates-only form).
"""

from __future__ import annotations

from collections.abc import Mapping

from sim.gpu.roofline import OPERATIONS, TRAFFIC, StagePerf, analyse, figure_header, figure_text, models, percent


def device_peaks(device: int = 0):
    """The device's peaks (``sim.gpu.peaks.current``: cached, else measured once), or None without a GPU."""
    from sim.gpu.backend import gpu_status

    if not gpu_status().available:
        return None
    from sim.gpu import peaks

    return peaks.current(device)


def perf(spec, stage, adapter, inputs, variant: str, block, ms: float | None, peaks, expected=None) -> StagePerf | None:
    """``variant``'s figures for ``ms`` on ``inputs`` (None without a time or a model for the stage)."""
    if not ms or ms <= 0:
        return None
    model = models(spec, adapter.model_setup(inputs, variant, block, expected)).get(stage.name)
    return analyse(variant, model, ms, peaks) if model is not None else None


def perfs(
    spec, stage, adapter, inputs, block, times: Mapping[str, float | None], peaks, expected=None
) -> dict[str, StagePerf]:
    """Each timed variant's figures, in ``times``' order (the user's kernel first)."""
    found = {name: perf(spec, stage, adapter, inputs, name, block, ms, peaks, expected) for name, ms in times.items()}
    return {name: p for name, p in found.items() if p is not None}


def grader_figures(spec, src, adapter, block):
    """The grader's ``speed`` callback: a case's figures by variant, the user's kernel first (the peaks read
    at the first case: by then the sandbox has found a GPU)."""
    peaks = []

    def figure(inputs, expected, case) -> dict[str, StagePerf]:
        if not peaks:
            peaks.append(device_peaks())
        times = {src.variant: case.ms, **{name: case.builtin_ms(name) for name in adapter.builtin}}
        return perfs(spec, src.stage, adapter, inputs, block, times, peaks[0], expected)

    return figure


def sol_pct(p: StagePerf) -> float | None:
    """The speed-of-light time as a % of the time taken: 100% is the stage's limit (None without peaks)."""
    return 100.0 * p.min_ms / p.ms if p.min_ms and p.ms > 0 else None


def as_json(p: StagePerf) -> dict:
    return {**p.as_json(), "sol_pct": sol_pct(p)}


def rates_only(found: Mapping[str, StagePerf]) -> bool:
    return not any(p.copy_pct is not None for p in found.values())


def lines(found: Mapping[str, StagePerf], mine: str, heading: str, indent: str = "") -> list[str]:
    """A block: one line a variant (GB/s, % of the copy peak, GFLOP/s, % of the FLOP peak, % of the issue slots
    where a model counts instructions, bound, % of the speed of light), the user's kernel marked; the model in
    words under it."""
    if not found:
        return []
    only = rates_only(found)
    issue = any(p.issue_pct is not None for p in found.values())
    head = f"  {'variant':<24}{figure_header(only, issue)}" + ("" if only else f"  {'% of limit':>10}")
    out = [heading, indent + head]
    for name, p in found.items():
        figure = as_json(p)
        row = f"{indent}{'* ' if name == mine else '  '}{name:<24}{figure_text(figure, only, issue)}"
        out.append(row + ("" if only else f"  {percent(figure['sol_pct']):>10}"))
    model = found[mine].model if mine in found else next(iter(found.values())).model
    if model is not None:
        out.append(
            f"{indent}  model per {model.per}: {model.bytes_actual:,.4g} B {TRAFFIC[model.where]} "
            f"({model.bytes_min:,.4g} B the least), {model.flops:,.4g} {OPERATIONS[model.flop_kind]}"
            + ("; % of limit: the speed-of-light time over the time taken" if not only else "")
        )
    return out


def columns(p: StagePerf | None, only: bool) -> tuple[str, ...]:
    """The user's kernel's cells in check's table: GB/s, and % of the limit where there are peaks."""
    gbs = "-" if p is None else f"{p.gbs:,.1f}"
    return (gbs,) if only else (gbs, "-" if p is None else percent(sol_pct(p)))


# --- the live scene (the viewer) ------------------------------------------------------------------------------
def live_perf(scene, ms: float, peaks) -> StagePerf | None:
    """The user's kernel's figures in the live scene: its stage's ``ms`` a frame (the scene's timer, as the
    "Speed of light" section reads it) with the stage's model at the scene's setup, the variant its file's."""
    from dataclasses import replace

    from sim.gpu.roofline import Setup

    live = scene.knobs.user
    if live is None or ms <= 0:
        return None
    setup = replace(Setup.of_scene(scene, steps=max(scene.frame_steps, 1.0)), variant=live.variant)
    model = models(scene.spec, setup).get(live.stage.name)
    return analyse(live.variant, model, ms, peaks) if model is not None else None


def perf_text(p: StagePerf) -> str:
    """One line: GB/s and GFLOP/s, with % of the peaks and of the limit where there are peaks."""
    if p.copy_pct is None:
        return f"{p.gbs:,.1f} GB/s, {p.gflops:,.1f} GFLOP/s (rates only: no peaks for this device)"
    return (
        f"{p.gbs:,.1f} GB/s ({percent(p.copy_pct)} of copy), {p.gflops:,.1f} GFLOP/s ({percent(p.flop_pct)} "
        f"of the FLOP peak), {percent(sol_pct(p))} of the speed-of-light limit, {p.bound or '-'}"
    )
