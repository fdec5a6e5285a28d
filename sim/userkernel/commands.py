"""The commands of your own kernel (``main.py`` parses their ``arguments``, these run):

    template SCENE [STAGE] [-o FILE [--force]]        a working, commented starting point
    check SCENE --kernel-file FILE [...] [--json OUT]  the grader: exit 0 correct, 1 wrong, 2 bad input or a
          [--baseline OLD.json]                        compile error, 3 compiled but no GPU here; beside an
                                                       earlier check --json, case by case; --ptx FILE and
                                                       --sass FILE write what the compiler made
    check SCENE --kernel-file FILE --sanitize [TOOL]   once under compute-sanitizer: hazards at file:line
    bench SCENE --kernel-file FILE [...]               the kernel timed beside the built-in variants

The file is compile-checked with NVRTC first, always (a machine without a GPU still reports compile
errors with file:line); then it runs in the sandbox (``sim.userkernel.sandbox``).
"""

from __future__ import annotations

import os
import shlex
import sys

from sim.cmdline import cli
from sim.cmdline.cli import EXIT_FAILED, EXIT_NO_GPU, EXIT_USAGE, UsageError
from sim.userkernel import check_baseline, codegen, grader, sanitize_check, speed
from sim.userkernel.hints import hints
from sim.userkernel.requests import CheckRequest, KernelBenchRequest, TemplateRequest
from sim.userkernel.sandbox import Sandbox, SandboxError


def _spec(scene: str):
    from sim.registry import SCENES, spec

    s = spec(scene)
    if not s.user_stages:
        having = ", ".join(name for name, other in SCENES.items() if other.user_stages) or "none yet"
        raise UsageError(f"the {scene} scene has no stage your own kernel can replace (scenes with one: {having})")
    return s


def _stage(s, name: str | None):
    try:
        return s.user_stage(name)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# --- template -----------------------------------------------------------------------------------------------
def run_template(args: TemplateRequest) -> int:
    from sim.cmdline.writer import check_target, write_text
    from sim.gpu.cuda import source_path

    s = _spec(args.scene)
    stage = _stage(s, args.stage)
    text = source_path(stage.template).read_text()
    if args.output is None:
        if args.force:
            raise UsageError("--force replaces the file of -o: add -o FILE, or leave it out")
        sys.stdout.write(text)
        return 0
    check_target(args.output, "template file")  # a folder, FIFO, device or link: why, at once (--force or not)
    if os.path.lexists(args.output) and not args.force:
        raise UsageError(f"{args.output!r} exists: not replaced (add --force to replace it)")
    quoted = shlex.quote(args.output)
    if "\n" not in quoted and "\r" not in quoted:  # the header's commands name the file written, to paste
        text = text.replace(f"--kernel-file {os.path.basename(stage.template)}", f"--kernel-file {quoted}")
    write_text(args.output, text, "template file")
    print(
        f"wrote the {s.name} {stage.name} template to {args.output}; next:\n"
        f"  python main.py check {s.name} --kernel-file {quoted}\n"
        f"  python main.py view {s.name} --kernel-file {quoted}",
        file=sys.stderr,
    )
    return 0


# --- check and bench: shared --------------------------------------------------------------------------------
def _block(adapter, given, stage):
    """The block to launch with: the stage's default, or ``given`` if it has the same shape (threads or 2D)."""
    default = adapter.default_block()
    if given is None:
        return default
    if isinstance(given, tuple) != isinstance(default, tuple):
        kind = "a 2D block such as 32x8" if isinstance(default, tuple) else "a thread count such as 256"
        raise UsageError(f"--block: the {stage.name} stage takes {kind}, got {cli.block_text(given)}")
    threads = given[0] * given[1] if isinstance(given, tuple) else given
    if threads > 1024:
        raise UsageError(f"--block {cli.block_text(given)} is {threads:,} threads; a CUDA block holds at most 1,024")
    return given


def _load(args: CheckRequest | KernelBenchRequest):
    """The source, its adapter and the block, checked before any work (UsageError)."""
    from sim.cmdline.writer import check_target
    from sim.userkernel import source as user_source

    s = _spec(args.scene)
    src = user_source.load(args.kernel_file, s, args.stage)
    if args.json not in (None, "-"):
        check_target(args.json, "JSON file", inputs=[args.kernel_file])
    for option, what in (("ptx", "PTX file"), ("sass", "SASS file")):  # check's --ptx and --sass
        if getattr(args, option, None):
            check_target(getattr(args, option), what, inputs=[args.kernel_file])
    adapter = user_source.adapter(src)
    return src, adapter, _block(adapter, args.block, src.stage)


def _compiles(src, command: str, arch: str | None = None):
    """NVRTC's errors and warnings on stderr (file:line and the line); the build's ``source.Checked`` (what
    ptxas made of it too), None when there are errors."""
    from sim.userkernel.source import ARCH, CompileFailed, compiled_build

    try:
        checked = compiled_build(src, arch or ARCH)
        warnings = checked.diagnostics
    except CompileFailed as exc:
        errors = sum(d.severity == "error" for d in exc.diagnostics)
        print(*exc.diagnostics, sep="\n", file=sys.stderr)
        print(
            f"kernel-lab {command}: {src.name} does not compile ({errors} error{'s' if errors != 1 else ''}); "
            "nothing was run",
            file=sys.stderr,
        )
        return None
    print(*warnings, sep="\n", file=sys.stderr, end="\n" if warnings else "")
    return checked


def _sandbox_stop(exc: SandboxError, src, command: str) -> int:
    """The exit code (and message) for what ends the whole run: no GPU (3), a compile error there (2)."""
    if exc.kind == "no-gpu":
        print(f"kernel-lab {command}: {src.name} compiles; {exc}", file=sys.stderr)
        return EXIT_NO_GPU
    print(f"kernel-lab {command}: {exc}", file=sys.stderr)
    return EXIT_USAGE


# --- check ------------------------------------------------------------------------------------------------
def run_check(args: CheckRequest) -> int:
    from sim.cmdline import progress, resources
    from sim.cmdline.bench_report import git_commit, publish
    from sim.userkernel.estimate import check_estimate

    src, adapter, block = _load(args)
    if args.baseline is not None:
        check_baseline.same_stage(args.baseline, src.scene, src.stage.name)
    if args.sanitize:
        return sanitize_check.run(args, src, adapter, block, _compiles)
    sizes = list(dict.fromkeys(args.sizes or adapter.sizes()))
    seeds = range(args.seeds)  # never a list: K is bounded by the estimate, not by building it
    estimate = check_estimate(_spec(src.scene), src.stage, adapter, sizes, args.seeds)
    resources.check(estimate)  # past this machine's memory or a week: refused (exit 2); long: announced
    first = {}
    for size in sizes:  # every size checked (and its first inputs made) before anything runs
        try:
            first[size] = adapter.inputs(size, seeds[0])
        except ValueError as exc:
            raise UsageError(f"--sizes: {exc}") from None
    tgt = codegen.target()
    checked = _compiles(src, "check", tgt.arch)
    if checked is None:
        return EXIT_USAGE
    built = codegen.report(src, checked, adapter, first[sizes[-1]], block, tgt)
    for line in codegen.write_listings(src, args.ptx, args.sass, tgt.arch):
        print(f"kernel-lab check: {line}", file=sys.stderr)
    figure = speed.grader_figures(_spec(src.scene), src, adapter, block)
    with (
        Sandbox(args.time_limit) as box,
        progress.Progress(f"check {src.variant}", len(sizes) * len(seeds), "cases", show=estimate.long) as bar,
    ):
        try:
            cases = grader.grade(
                src, adapter, sizes, seeds, block, box, args.repeats, lambda done: bar.advance(1), first, figure
            )
        except SandboxError as exc:
            if exc.kind == "no-gpu":  # what the compiler made is known without one
                print(*built.lines, sep="\n", file=sys.stderr if args.json == "-" else sys.stdout)
            return _sandbox_stop(exc, src, "check")
    device = next((c.result.device for c in cases if c.result), "")
    wrong = sum(not c.correct for c in cases)
    advice = hints(cases, adapter.item, grader.builds_without_fma(adapter))
    lines = [
        f"check {src.scene} {src.stage.name}: {src.name} on {device or 'the GPU'}, block "
        f"{cli.block_text(block)}, median of {args.repeats} launches after a warm-up (ms)",
        grader.table(cases, src.variant, adapter.builtin),
        *grader.details(cases, adapter.item),
        *speed.lines(
            cases[-1].speed,
            src.variant,
            f"speed of light at {sizes[-1]:,} {adapter.item}s, seed {cases[-1].seed} (* yours):",
        ),
        *built.lines,
        *(f"hint: {line}" for line in advice),
        f"{len(cases) - wrong} of {len(cases)} cases correct" + ("" if not wrong else f"; {wrong} wrong"),
    ]
    record = grader.record(cases, src, block, device, git_commit(), advice)
    if args.baseline is not None:
        lines.append(check_baseline.comparison(record, args.baseline))
    record["compiled"] = built.json
    publish(record, "\n".join(lines), args.json)
    return EXIT_FAILED if wrong else 0


# --- bench --kernel-file ------------------------------------------------------------------------------------
def run_bench(args: KernelBenchRequest) -> int:
    import datetime

    import numpy as np

    from sim.cmdline.bench_report import git_commit, publish

    src, adapter, block = _load(args)
    tgt = codegen.target()
    checked = _compiles(src, "bench", tgt.arch)
    if checked is None:
        return EXIT_USAGE
    size = adapter.sizes()[-1]
    inputs = adapter.inputs(size, 0)
    built = codegen.report(src, checked, adapter, inputs, block, tgt)
    with Sandbox(args.time_limit) as box:
        try:
            result = box.run(src, inputs, block, args.repeats, adapter.builtin)
        except SandboxError as exc:
            if exc.kind in ("fault", "timeout"):
                print(f"kernel-lab bench: {exc}", file=sys.stderr)
                return EXIT_FAILED
            if exc.kind == "no-gpu":  # what the compiler made is known without one
                print(*built.lines, sep="\n", file=sys.stderr if args.json == "-" else sys.stdout)
            return _sandbox_stop(exc, src, "bench")
    expected = adapter.expected(inputs)
    comparison = adapter.compare(inputs, expected, result.outputs)
    correct = comparison.correct and not result.overflow
    times = {src.variant: result.ms, **result.builtin_ms}
    medians = {name: float(np.median(ms)) if ms else None for name, ms in times.items()}
    mine = medians[src.variant]
    found = speed.perfs(_spec(src.scene), src.stage, adapter, inputs, block, medians, speed.device_peaks(), expected)
    lines = [
        f"bench {src.scene} {src.stage.name} on {result.device}: {size:,} {adapter.item}s, block "
        f"{cli.block_text(block)}, median of {args.repeats} launches after a warm-up",
        f"  {'variant':<24}{'ms':>12}{'time vs yours':>15}",
    ]
    for name, ms in medians.items():
        ratio = f"{ms / mine:.2f}x" if ms and mine else "-"
        lines.append(f"  {name:<24}{'-' if ms is None else format(ms, '.4f'):>12}{ratio:>15}")
    lines += speed.lines(found, src.variant, "  speed of light (* yours):", "  ")
    lines += [f"  {line}" for line in built.lines]
    if not correct:
        lines.append(
            f"  your kernel's result is wrong ({comparison.mismatches:,} {adapter.item}s differ"
            + "".join(f"; {m}" for m in result.overflow)
            + f"): check {src.scene} --kernel-file "
            f"{src.name} shows where"
        )
    block_field = list(block) if isinstance(block, tuple) else block
    workload = f"{src.scene} {src.stage.name}"
    report = {
        "device": result.device,
        "commit": git_commit(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "workload": workload,
        "file": src.name,
        "size": size,
        "block": block_field,
        "correct": correct,
        # each record names its configuration (sim.cmdline.baseline.KEYS): --baseline compares record by record
        "results": [
            {"stage": workload, "n": size, "variant": name, "block": block_field, "median_ms": medians[name], "ms": ms}
            for name, ms in times.items()
        ],
        "compiled": built.json,
    }
    for r in report["results"]:
        if r["variant"] in found:
            r["speed_of_light"] = speed.as_json(found[r["variant"]])
    publish(report, "\n".join(lines), args.json, args.baseline)
    return 0 if correct else EXIT_FAILED
