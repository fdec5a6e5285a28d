"""The "Your kernel" section's sanitizer row: a tool (memcheck, racecheck, synccheck, initcheck) and
"Run one step under the sanitizer", which runs the scene's next step through the kernel once under
compute-sanitizer off the frame thread (``sim.userkernel.live.LiveStage.sanitize``); then its findings
at ``file:line`` with the line, or "none found". ``sanitizer_lines`` builds the text (tested without a
window); ``draw_sanitizer`` draws the row and the lines."""

from __future__ import annotations

from imgui_bundle import imgui

from sim.userkernel.sanitizer import LIMIT_S, TOOLS, WHAT
from viewer.panel.style import item_width, tooltip


def sanitizer_lines(live) -> list[tuple[str, str]]:
    """(kind, text) lines of the last sanitized step: running, its error, its findings or "none found"."""
    box = live.sanitizer
    step = f"one step of {box.size:,} {live.adapter.item}s" if box.size else "one step"
    if box.running:
        return [("note", f"compute-sanitizer {box.tool}: {step} running… (the scene steps on; up to {LIMIT_S:g} s)")]
    if box.error:
        return [("error", f"compute-sanitizer {box.tool}: {box.error}")]
    if box.outcome is None:
        return []
    if not box.outcome.hazards:
        return [("good", f"compute-sanitizer {box.tool}: none found on {step} ({WHAT[box.tool]})")]
    return list(box.lines)


def draw_sanitizer(kernel, colours, wrapped) -> None:
    """The row and the lines, for a kernel with a build (``kernel``: the window's ``UserKernel``)."""
    live = kernel.live
    if live is None or live.build is None:
        return
    imgui.push_item_width(item_width() * 0.3)
    if imgui.begin_combo("##sanitizer tool", kernel.sanitizer_tool):
        for tool in TOOLS:
            if imgui.selectable(tool, tool == kernel.sanitizer_tool)[0]:
                kernel.sanitizer_tool = tool
        imgui.end_combo()
    imgui.pop_item_width()
    tooltip(f"{kernel.sanitizer_tool}: {WHAT[kernel.sanitizer_tool]}")
    imgui.same_line()
    imgui.begin_disabled(live.sanitizer.running)
    if imgui.button("Run one step under the sanitizer"):
        kernel.sanitize()
    imgui.end_disabled()
    tooltip(
        "the scene's next step through your kernel once under NVIDIA's compute-sanitizer (CUDA toolkit), in a "
        f"process of its own, up to {LIMIT_S:g} s: what it finds shows here at file:line"
    )
    for kind, text in sanitizer_lines(live):
        wrapped(colours[kind], text)
