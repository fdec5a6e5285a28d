"""The panel's GPU section, shown when the scene can use a GPU here: its GPU toggles (the balls'
CUDA proximity), options (the particles' precision), kernel variant and CUDA block, verification
with its counts, and how the view reaches the GL buffers."""

from __future__ import annotations

import time

from imgui_bundle import imgui

from sim.cmdline.cli import block_text
from viewer.panel.section import PanelContext, PanelSection
from viewer.panel.style import CUDA, ERROR, GREY, disabled_tooltip, item_width, tooltip

BLINK = (imgui.ImVec4(1.0, 0.25, 0.2, 1.0), imgui.ImVec4(1.0, 0.85, 0.3, 1.0))


class CudaSection(PanelSection):
    """Reads ``ctx.feed``: the renderer's feed of the current view (``path``, ``fallback_reason``), if any."""

    title = CUDA

    def shows(self, ctx: PanelContext) -> bool:
        return ctx.controller.gpu.reason() is None and ctx.scene.spec.gpu is not None

    def draw(self, ctx: PanelContext) -> None:
        _draw(ctx.controller, ctx.feed)


def _draw(ctl, feed) -> None:
    scene, spec = ctl.scene, ctl.spec
    for toggle in spec.toggles:
        if toggle.gpu_only and imgui.checkbox(toggle.label, bool(scene.controls.toggles[toggle.name]))[0]:
            ctl.toggle(toggle.name)
        if toggle.gpu_only:
            tooltip((f"{toggle.key}: " if toggle.key else "") + toggle.help)

    kernels_run = ctl.gpu.kernels_run()
    imgui.push_item_width(item_width())
    for option in spec.options:
        imgui.begin_disabled(option.gpu_only and not kernels_run)
        if imgui.begin_combo(option.name, scene.knobs.options[option.name]):
            for choice in option.choices:
                if imgui.selectable(choice, choice == scene.knobs.options[option.name])[0]:
                    ctl.set_option(option.name, choice)
            imgui.end_combo()
        imgui.end_disabled()
        disabled_tooltip(option.help + (ctl.gpu.variant_note() if option.gpu_only else ""))
    imgui.begin_disabled(not kernels_run and not spec.gpu.cpu_variants)
    chosen = scene.knobs.chosen  # the user's own kernel is one of them while loaded
    if imgui.begin_combo("variant", chosen):
        for variant in scene.knobs.variants:
            if imgui.selectable(variant, variant == chosen)[0]:
                ctl.gpu.set_variant(variant)
        imgui.end_combo()
    imgui.end_disabled()
    disabled_tooltip(f"q: {ctl.words.variant}" + ctl.gpu.variant_note())
    if imgui.begin_combo("block size", block_text(scene.knobs.block)):
        for block in spec.gpu.blocks:
            if imgui.selectable(block_text(block), block == scene.knobs.block)[0]:
                ctl.gpu.set_block(block)
        imgui.end_combo()
    tooltip("Q: threads per CUDA block")
    imgui.pop_item_width()

    if spec.verifier is not None:
        imgui.begin_disabled(not kernels_run and not scene.checks.on)  # on can always go off
        changed = imgui.checkbox("verify against the CPU", bool(scene.checks.on))[0]
        imgui.end_disabled()
        if changed:
            ctl.gpu.toggle_verify()
        disabled_tooltip(f"v: {spec.verifier.checks}; {spec.verifier.mismatch}" + ctl.gpu.variant_note())
        if scene.checks.on:
            imgui.same_line()
            imgui.text_colored(BLINK[int(time.monotonic() * 4) % 2], "VERIFYING")  # 2 blinks/s
            draw_verification(scene.checks.verification, ctl.words.unit)
    if feed is not None and feed.path is not None:
        if feed.fallback_reason:
            imgui.text_colored(GREY, "view drawn through host copies")
            tooltip(feed.fallback_reason)
        else:
            imgui.text_colored(GREY, f"view drawn through {feed.path}")


def verification_lines(result, unit: str) -> list[tuple[str, bool]]:
    """The last check as (line, is_alarm): what differs, the scene's own figures, the time and totals."""
    if result is None:
        return [("waiting for the next check", False)]
    lines = [(f"{result.differing:,} of {result.checked:,} {unit} differ (marked)", result.differing > 0)]
    for name, value in result.details.items():
        text = f"{value:,}" if isinstance(value, int) else f"{value:.3g}" if isinstance(value, float) else str(value)
        lines.append((f"{name}: {text}", False))
    lines.append((f"check {result.check_ms:.1f} ms against {result.against}", False))
    lines.append(
        (
            f"passes: {result.passes_checked:,} checked, {result.passes_mismatched:,} mismatched",
            result.passes_mismatched > 0,
        )
    )
    return lines


def draw_verification(result, unit: str) -> None:
    for line, alarm in verification_lines(result, unit):
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(ERROR if alarm else GREY, line)
        imgui.pop_text_wrap_pos()
