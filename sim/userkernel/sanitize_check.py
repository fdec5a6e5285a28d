"""``check SCENE --kernel-file FILE --sanitize [TOOL]``: the kernel once under compute-sanitizer
(``sim.userkernel.sanitizer``), each hazard at ``file:line`` with the line, instead of the graded cases.

One small case, said on the first line: the largest of the stage's default sizes up to ``SMALL`` items
(several blocks, a ragged edge) or the smallest of ``--sizes``, seed 0, the stage's block or ``--block``.
Exit 0 when the tool found nothing, 1 when it found a hazard (or the run did not finish in time), 2 for
bad input, a compile error or no compute-sanitizer here, 3 when the kernel compiled but there is no GPU.
"""

from __future__ import annotations

import datetime
import sys

from sim.cmdline import cli
from sim.cmdline.cli import EXIT_FAILED, EXIT_NO_GPU, EXIT_USAGE, UsageError
from sim.userkernel import sanitizer
from sim.userkernel.sanitizer import SanitizerError

SMALL = 10_000  # items: a sanitized launch is 10-100 times slower, and racecheck keeps every access


def add_argument(p) -> None:
    p.add_argument(
        "--sanitize",
        nargs="?",
        const="memcheck",
        choices=sanitizer.TOOLS,
        metavar="TOOL",
        help="run the kernel once under compute-sanitizer (CUDA toolkit) instead of grading it: "
        + "; ".join(f"{tool}: {what}" for tool, what in sanitizer.WHAT.items())
        + f" (default memcheck); one small case (at most {SMALL:,} items, or the smallest of "
        f"--sizes), seed 0, bounded to {sanitizer.LIMIT_S:g} s",
    )


def case_size(adapter, given) -> int:
    """The one size the sanitized run uses."""
    if given:
        return min(given)
    sizes = adapter.sizes()
    return max((s for s in sizes if s <= SMALL), default=min(sizes))


def run(args, src, adapter, block, compiles) -> int:
    """``compiles(src, "check")``: NVRTC's messages printed, None (falsy) on errors (``commands._compiles``)."""
    tool = args.sanitize
    if sanitizer.find() is None:
        print(f"kernel-lab check: {sanitizer.MISSING}", file=sys.stderr)
        return EXIT_USAGE
    size = case_size(adapter, args.sizes)
    try:
        inputs = adapter.inputs(size, 0)
    except ValueError as exc:
        raise UsageError(f"--sizes: {exc}") from None
    if not compiles(src, "check"):
        return EXIT_USAGE
    case = f"{size:,} {adapter.item}{'s' if size != 1 else ''}, seed 0, block {cli.block_text(block)}"
    print(
        f"check --sanitize {tool}: {src.name} once under compute-sanitizer on one small case ({case}; up to "
        f"{sanitizer.LIMIT_S:g} s); check without --sanitize grades every size",
        file=sys.stderr,
        flush=True,
    )
    try:
        outcome = sanitizer.run(src, inputs, block, tool)
    except SanitizerError as exc:
        if exc.kind == "no-gpu":
            print(f"kernel-lab check: {src.name} compiles; {exc}", file=sys.stderr)
            return EXIT_NO_GPU
        print(f"kernel-lab check: {exc}", file=sys.stderr)
        return EXIT_USAGE if exc.kind in ("compile", "missing") else EXIT_FAILED
    from sim.cmdline.bench_report import git_commit, publish

    found = outcome.hazards
    lines = [
        f"compute-sanitizer {tool} on {outcome.device or 'the GPU'}: {src.scene} {src.stage.name}, {src.name}, {case}",
        *outcome.lines(src),
    ]
    if outcome.launch_error:
        lines.append(f"the launch: {outcome.launch_error}")
    lines.append(
        f"{len(found)} hazard{'s' if len(found) != 1 else ''} found"
        if found
        else f"none found ({sanitizer.WHAT[tool]})"
    )
    publish(record(outcome, src, size, block, git_commit()), "\n".join(lines), args.json)
    return EXIT_FAILED if found else 0


def record(outcome, src, size: int, block, commit: str) -> dict:
    """The JSON of ``check --sanitize --json``."""
    from sim.userkernel.sanitizer_report import placed

    def one(finding) -> dict:
        return {
            "category": finding.category,
            "severity": finding.severity,
            "headline": finding.headline,
            "at": [
                {"file": d.file, "line": d.line, "severity": d.severity, "message": d.message, "text": d.text}
                for d in placed(finding, src, outcome.buffers)
            ],
            "thread": finding.thread or None,
            "block": finding.block or None,
            "address": finding.address,
        }

    return {
        "device": outcome.device,
        "commit": commit,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "scene": src.scene,
        "stage": src.stage.name,
        "file": src.name,
        "tool": outcome.tool,
        "size": size,
        "seed": 0,
        "block": list(block) if isinstance(block, tuple) else block,
        "clean": not outcome.hazards,
        "findings": [one(f) for f in outcome.report.findings],
        "launch_error": outcome.launch_error or None,
    }
