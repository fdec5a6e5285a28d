"""The panel's "Your kernel" section, for a scene with a stage a user's own kernel can replace
(``SceneSpec.user_stages``), under the CUDA section: the "Load kernel…" field, the file and its stage,
its status, NVRTC's messages (errors red, warnings yellow, each with ``file:line`` and the offending
line), under verification the comparison with the CPU twin (how many items are wrong, the largest
absolute and relative error, the worst items, the first step that diverged), writes past an output's
end and the last sandbox error; what the compiler made of it (registers, local and shared memory, the
occupancy at its launch) and, while it runs, its GB/s, GFLOP/s and % of the stage's speed-of-light limit
beside the built-in's before it (from the "Speed of light" section, ``sol``); then every attempt of the
session (``user_attempts``). ``kernel_lines`` and ``worst_rows`` build the text (tested without a window);
``draw_user_kernel_section`` draws it."""

from __future__ import annotations

from imgui_bundle import imgui

from sim.userkernel.speed import live_perf, perf_text, sol_pct
from viewer.panel.section import PanelContext, PanelSection
from viewer.panel.style import ERROR, GREY, MESSAGE, YOUR_KERNEL, difference_table, item_width, tooltip, wrapped
from viewer.panel.user_attempts import draw_attempts
from viewer.panel.user_sanitizer import draw_sanitizer

GOOD = imgui.ImVec4(0.45, 0.85, 0.5, 1.0)
COLOURS = {"error": ERROR, "warning": MESSAGE, "note": GREY, "good": GOOD}


def status(ctl) -> tuple[str, str]:
    """(kind, text): whether the kernel compiles, runs, failed, or waits for the GPU kernels or q."""
    knobs = ctl.scene.knobs
    live = knobs.user
    own = f"the scene runs its own kernel ({knobs.variant})"
    checking = " (compiling a save…)" if live.checking else ""
    if live.build is None:
        if live.diagnostics or live.problem:
            return "error", f"does not compile: {own}{checking}"
        return "note", "compiling…"
    if live.error:
        return "error", f"failed: {own} until you save"
    stale = any(d.severity == "error" for d in live.diagnostics)  # the saved text does not compile
    if knobs.user_runs():
        ms = f", {live.ms:.3f} ms a step" if live.ms is not None else ""
        return "good", f"running{' the last good build' if stale else ''}: {live.steps_run:,} steps{ms}{checking}"
    built = ("the last good build compiled" if stale else "compiled") + checking
    if not knobs.user_chosen:
        return "note", f"{built}; choose {live.variant} (variant list, q) to run it"
    reason = ctl.gpu.reason()
    where = f"needs a GPU: {reason}" if reason else ctl.spec.gpu.kernels_run_hint
    return "note", f"{built}; it runs where the scene's GPU kernels run: {where}"


def kernel_lines(ctl, sol=None) -> list[tuple[str, str]]:
    """(kind, text) lines of the loaded kernel: "error", "warning", "note" or "good"; ``sol``: the "Speed of
    light" section (``viewer.panel.speed_of_light.SpeedOfLightSection``), whose figures it shows."""
    live = ctl.scene.knobs.user
    stage = live.stage
    lines = [("note", f"{live.source.path}: the {stage.name} stage ({stage.summary})"), status(ctl)]
    if live.problem:
        lines.append(("error", live.problem))
    lines += [("error" if d.severity == "error" else "warning", str(d)) for d in live.diagnostics]
    if live.error:
        lines.append(("error", f"sandbox: {live.error}"))
    lines += [("error", text) for text in live.overflow]
    comparison = live.comparison if ctl.scene.checks.on else None
    if comparison is not None:
        wrong, items = comparison.mismatches, comparison.mismatch.shape[0]
        lines.append(
            (
                "error" if wrong else "good",
                f"{wrong:,} of {items:,} {live.adapter.item}s wrong ({comparison.rule}); "
                f"max abs {comparison.max_abs:.3g}, max rel {comparison.max_rel:.3g}",
            )
        )
    elif ctl.scene.knobs.user_runs() and not ctl.scene.checks.on:
        lines.append(("note", "verification off (v): the results are not compared with the CPU twin"))
    if live.first_divergence is not None:
        lines.append(("error", f"first diverged from the CPU twin at step {live.first_divergence:,}"))
    lines += [("note", text) for text in live.compiled_lines()]
    mine = _perf(ctl, sol)
    if mine is not None:
        live.attempts.note_limit(sol_pct(mine))
        lines.append(("note", f"speed of light, yours: {perf_text(mine)}"))
        if sol.before is not None:
            lines.append(("note", f"{sol.before.stage}: {perf_text(sol.before)}"))
    return lines


def _perf(ctl, sol):
    """The kernel's figures over its last frames while it does the stage (None otherwise, or without ``sol``,
    whose peaks they use)."""
    scene = ctl.scene
    if sol is None or not scene.knobs.user_runs():
        return None
    from viewer.panel.speed_of_light import recent_ms

    return live_perf(scene, recent_ms(scene.timer, scene.knobs.user.stage.name), sol.peaks(scene.device))


def worst_rows(comparison) -> list[tuple[str, str, str, str]]:
    """The worst items as (item, expected, got, difference)."""
    return [(w.label, f"{w.expected:.9g}", f"{w.got:.9g}", f"{w.difference:+.3g}") for w in comparison.worst]


def draw_user_kernel_section(ctl, sol=None) -> None:
    spec = ctl.spec
    kernel, stage = ctl.kernel, spec.user_stage()
    imgui.push_item_width(item_width())
    entered, kernel.path_text = imgui.input_text_with_hint(
        "##kernel file", "Load kernel… (path of a .cu file)", kernel.path_text, imgui.InputTextFlags_.enter_returns_true
    )
    imgui.pop_item_width()
    tooltip(
        f"your own kernel for the {stage.name} stage: {stage.signature}; it becomes a variant named after "
        "the file, compiled again on every save"
    )
    imgui.same_line()
    if imgui.button("Load") or entered:
        kernel.load(kernel.path_text)
    if kernel.live is None:
        wrapped(GREY, f"start from the template: main.py template {spec.name} {stage.name} -o my_{stage.name}.cu")
        return
    for kind, text in kernel_lines(ctl, sol):
        wrapped(COLOURS[kind], text)
    draw_sanitizer(kernel, COLOURS, wrapped)
    comparison = kernel.live.comparison if ctl.scene.checks.on else None
    rows = worst_rows(comparison) if comparison is not None else []
    flags = imgui.TableFlags_.borders_inner_h | imgui.TableFlags_.row_bg | imgui.TableFlags_.sizing_fixed_fit
    difference_table("worst_items", ("worst", "expected", "got", "difference"), rows, ERROR, flags)
    draw_attempts(kernel.live)


class YourKernelSection(PanelSection):
    title = YOUR_KERNEL

    def __init__(self, sol=None):
        self.sol = sol  # the Speed of light section: the peaks and the built-in's figures before yours

    def shows(self, ctx: PanelContext) -> bool:
        return bool(ctx.scene.spec.user_stages)

    def draw(self, ctx: PanelContext) -> None:
        draw_user_kernel_section(ctx.controller, self.sol)
