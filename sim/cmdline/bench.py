"""Benchmark records: timing a scene headless, the table, and the JSON other tools read.

JSON shape: {"device", "fingerprint", "peaks", "commit", "date", "workload", "results": [record, ...]}
(fingerprint: the GPU's name, driver, clocks and ECC, or the CPU's name and cores; peaks: the roofs of the
records' ``speed_of_light``, ``sim.gpu.peaks``, null on the CPU). A timed-frames
record (every scene without a benchmark of its own) has scene, preset, n (the mean item count
over the timed frames), backend, variant, block, options, steps, wall_s, stage_ms (median per
stage, amortised per step) and stage_ms_err, step_ms, step_ms_err and repeats (the timed frames),
l2_flushed, item_steps_per_s and ``<one>_steps_per_s`` (e.g. ball_steps_per_s), steps_per_s, stats
(the scene's statistics after the run), whatever the scene adds through its ``bench_type`` (the
balls' passes, tests_per_s) and speed_of_light (stage -> gbs, copy_pct, gflops, flop_pct, intensity,
bound, sol_ms, issue_pct: ``sim.gpu.roofline``; the models read stats, with what the scene's figures say of
the timed frames in place of the last one's: the balls' average pass). Every bench times through
``sim.gpu.measure``: a figure's ``<figure>_err`` is the half-width of its median's 95% interval (None below
6 repeats), ``repeats`` how many it took.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

from sim.cmdline import interrupts
from sim.cmdline.progress import Progress, frames_callback
from sim.cmdline.requests import BenchRequest
from sim.gpu import measure, peaks
from sim.gpu.backend import device_name
from sim.gpu.cuda import ceil_div
from sim.gpu.roofline import Setup, figure_header, figure_text, figures, has_issue


def git_commit() -> str:
    """KERNEL_LAB_COMMIT when set (a copied tree, whose git may be missing or describe another commit),
    else HEAD (with -dirty for local changes)."""
    if os.environ.get("KERNEL_LAB_COMMIT"):
        return os.environ["KERNEL_LAB_COMMIT"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return os.environ.get("KERNEL_LAB_COMMIT", "unknown")
    return head + ("-dirty" if dirty else "")


def run(scene, steps: int, warmup: int = 12, progress=None, budget_s: float = measure.BUDGET_S) -> dict:
    """Time at least ``steps`` physics steps (whole frames of the spec's steps per frame; fewer where the
    scene reaches its end) after ``warmup`` untimed ones, through ``sim.gpu.measure``: more frames until the
    median frame is known to 1% or the frames have taken ``budget_s``.

    ``progress(done, total)`` is told after each frame (default: a progress bar on a terminal); the
    warm-up has a bar of its own. On the GPU the L2 cache is flushed before each frame (untimed) when
    the scene's device memory fits in it.
    Each frame's stage times are divided by its step count (a balls proximity pass serves six
    steps, so its cost is amortised); the record keeps the median over frames and its error.
    """
    spec = scene.spec
    per_frame = spec.steps_per_frame
    for name, on in spec.bench_toggles:
        scene.controls.set_toggle(name, on)
    with Progress(f"{spec.name} warm-up", warmup, "steps", show=warmup > 0) as bar:
        for _ in range(warmup):
            scene.run_frame(1)
            bar.advance(1)
            interrupts.check()
    scene.finish()
    scene.timer.flush()
    scene.timer.clear()
    frames = max(1, ceil_div(steps, per_frame))
    progress = progress or frames_callback(f"{spec.name} timed frames")  # a bar on a terminal
    figures = scene.bench_type(scene)
    figures.start()
    counts = []
    done = 0

    def frame() -> None:
        nonlocal done
        done += scene.run_frame(per_frame)
        counts.append(scene.n)

    def between() -> None:
        progress(min(len(counts), frames), frames)
        interrupts.check()

    clock = measure.StageTimerClock(scene.timer)
    flush = measure.l2_flush(_device_bytes(), scene.device) if scene.backend == "gpu" else None
    start = time.perf_counter()
    timing = measure.measure(
        frame,
        clock,
        flush=flush,
        warmup=0,
        min_repeats=frames,
        budget_s=budget_s,
        max_batch=scene.timer.capacity,
        done=lambda: scene.at_end,
        between=between,
    )
    scene.finish()
    wall = time.perf_counter() - start
    stages = {name: measure.summarise(values).scaled(1 / per_frame) for name, values in clock.stages.items()}
    item_steps = float(np.sum(counts)) * per_frame / wall
    step = timing.scaled(1 / per_frame)
    record = {
        **configuration(scene),
        "n": int(np.mean(counts)),
        "steps": done,
        "warmup_steps": warmup,
        "wall_s": wall,
        "stage_ms": {name: t.median for name, t in stages.items()},
        "stage_ms_err": {name: t.error for name, t in stages.items()},
        **step.fields("step_ms"),
        "l2_flushed": flush is not None,
        "steps_per_s": done / wall,
        "item_steps_per_s": item_steps,
        f"{spec.words.one}_steps_per_s": item_steps,
        "gpu_bytes_per_item": (
            gpu_bytes_per_item(scene, flush.buffer.nbytes if flush is not None else 0)
            if scene.backend == "gpu"
            else None
        ),
        "stats": {k: v for k, v in scene.stats().items() if isinstance(v, (int, float, str))},
    }
    record.update(figures.figures(wall))
    gpu = scene.gpu_kernels_run() or scene.backend == "gpu"
    knobs = scene.knobs
    record["speed_of_light"] = speed_of_light(
        spec,
        Setup(
            record["n"],
            1.0,
            knobs.variant,
            knobs.block,
            knobs.options,
            scene.preset,
            {**record["stats"], **figures.model_stats(record)},
        ),
        record["stage_ms"],
        gpu,
        scene.device,
    )
    return record


def speed_of_light(spec, setup, stage_ms: dict, gpu: bool, device: int = 0) -> dict:
    """A record's per-stage roofline figures (``sim.gpu.roofline``): against the device's peaks on the GPU; on
    the CPU the rates alone (no peak applies)."""
    return figures(spec, setup, stage_ms, peaks.current(device) if gpu else None)


def configuration(scene) -> dict:
    """What a timed-frames record says of the scene's configuration (``sim.cmdline.baseline`` matches on it): the
    variant where a kernel variant ran, the block on the GPU."""
    spec = scene.spec
    gpu = scene.gpu_kernels_run() or scene.backend == "gpu"
    return {
        "scene": spec.name,
        "preset": scene.preset,
        "n": scene.n,
        "backend": scene.backend,
        "variant": scene.knobs.variant if (gpu or (spec.gpu and spec.gpu.cpu_variants)) else None,
        "block": _block_json(scene.knobs.block) if gpu else None,
        "options": dict(scene.knobs.options),
    }


def configurations(request: BenchRequest, spec) -> list[dict]:
    """Every combination of the comma-separated lists of ``bench`` (presets, counts, variants, blocks
    and the scene's options), each as the argument values of one configuration."""
    from sim.cmdline import cli
    from sim.cmdline.cli import UsageError

    presets = request.preset or [spec.start_preset]
    for preset in presets:
        try:
            spec.preset(preset)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    knobs = spec.gpu
    axes: dict[str, list[Any]] = {
        "preset": presets,
        "count": request.count or [None],
        "variant": cli.choices(request.variant, knobs.variants, "variant") if knobs and request.variant else [None],
        "block": request.block if knobs and request.block else [None],
    }
    for option in spec.options:
        given = request.options.get(option.name)
        axes[option.name] = cli.choices(given, option.choices, option.name) if given else [None]
    configs: list[dict[str, Any]] = [{}]
    for name, values in axes.items():
        configs = [{**c, name: v} for c in configs for v in values]
    return configs


def check_resources(request: BenchRequest, spec, configs: list[dict]) -> None:
    """Refuse (UsageError, exit 2) before any runs a configuration that cannot fit, or configurations
    whose warm-up and timed steps (whole frames) together could not finish (``sim.cmdline.resources``)."""
    from sim.cmdline import resources
    from sim.cmdline.cli import count_text
    from sim.gpu.backend import gpu_status

    gpu = request.backend == "gpu" or (request.backend == "auto" and gpu_status().available)
    steps = request.warmup + max(1, ceil_div(request.steps, spec.steps_per_frame)) * spec.steps_per_frame
    each = []
    for config in configs:
        preset = config["preset"]
        count = config["count"] or spec.preset(preset).count
        each.append(resources.scene_estimate(spec, count, gpu, steps, preset))
    resources.check_in_turn(
        each,
        f"bench {spec.name}: {len(each)} configurations of {count_text(steps)} steps on the {'GPU' if gpu else 'CPU'}",
    )


def _block_json(block):
    return list(block) if isinstance(block, tuple) else block


def gpu_bytes_per_item(scene, besides: int = 0) -> float:
    """The device memory the scene holds per item (what CuPy's pool holds, less ``besides``: the L2 flush's
    buffer)."""
    return (_device_bytes() - besides) / max(scene.n, 1)


def _device_bytes() -> int:
    """What CuPy's memory pool holds: the scene's working set on the device."""
    import cupy

    return cupy.get_default_memory_pool().used_bytes()


def release_memory() -> None:
    """Between benchmark configurations: give the GPU memory pool back."""
    import gc

    from sim.gpu.backend import gpu_status

    gc.collect()
    if gpu_status().available:
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()


def report(workload: str, results: list[dict]) -> dict:
    used = {r.get("backend") for r in results}
    backend = "gpu" if "gpu" in used else "cpu"
    commit = git_commit()
    found = peaks.current() if backend == "gpu" else None
    return {
        "device": device_name(backend),
        "fingerprint": peaks.fingerprint(backend, commit),  # name, driver, clocks, ECC (cpu: processor, cores)
        "peaks": dataclasses.asdict(found) if found else None,  # the roofs of the records' speed_of_light
        "commit": commit,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "workload": workload,
        "results": results,
    }


def table(rep: dict, lines_of=None) -> str:
    """The timed-frames table: per record its stages, totals and the scene's own lines
    (``lines_of(record)``)."""
    lines = [f"{rep['workload']} on {rep['device']} (commit {rep['commit']}, {rep['date']})", device_line(rep)]
    rates_only = rep.get("peaks") is None
    for r in rep["results"]:
        knobs = "".join(f"  {k} {v}" for k, v in (("variant", r["variant"]), ("block", r["block"])) if v)
        knobs += "".join(f"  {k} {v}" for k, v in r["options"].items())
        lines.append(f"preset {r['preset']}  n {r['n']}  backend {r['backend']}{knobs}")
        sol = r.get("speed_of_light", {})
        issue = has_issue(sol.values())
        heads = f"  {figure_header(rates_only, issue)}" if sol else ""
        lines.append(f"  {'stage':<18}{'median ms/step ± error (frames)':>34}{heads}")
        errors = r.get("stage_ms_err", {})
        for name, ms in r["stage_ms"].items():
            text = measure.Timing(ms, errors[name], r["repeats"]).text() if name in errors else f"{ms:.4g}"
            figure = sol.get(name)
            lines.append(f"  {name:<18}{text:>34}" + (f"  {figure_text(figure, rates_only, issue)}" if figure else ""))
        lines += [f"  {line}" for line in pace_lines(r)]
        lines += [f"  {line}" for line in (lines_of(r) if lines_of else ())]
        lines.append("  stats: " + ", ".join(_stat_text(k, v, r) for k, v in r["stats"].items()))
    return "\n".join(lines)


def pace_lines(r: dict) -> list[str]:
    """The step's time and the run's pace, each saying what it measures: the median frame's stages (the
    kernels and stage work alone) against all the timed steps over the wall time (also the host work around
    the stages and the slow frames), which is why they differ."""
    step_ms = r["step_ms"]
    pace = f" ({1e3 / step_ms:.1f} steps/s)" if step_ms > 0 else ""
    steps, frames = r["steps"], r["repeats"]
    whole = f" of {steps // frames}" if frames and steps % frames == 0 else ""  # why 200 asked can time 204
    return [
        f"{'step (stages)':<18}{measure.figure_text(r, 'step_ms'):>34}  the median frame's stages per step{pace}",
        f"steps/s {r['steps_per_s']:.1f}   item-steps/s {r['item_steps_per_s']:.4g}   wall {r['wall_s']:.3f} s for "
        f"{steps} timed steps ({frames} frames{whole})",
        "(steps/s: the timed steps over the wall time, the host work around the stages and slow frames included)",
    ]


def _stat_text(key: str, value, r: dict) -> str:
    if key == "steps" and r.get("warmup_steps"):  # the scene's count: the untimed warm-up steps came first
        return f"steps {value} ({r['warmup_steps']} warm-up + {r['steps']} timed)"
    return f"{key} {value:.4g}" if isinstance(value, float) else f"{key} {value}"


def device_line(rep: dict) -> str:
    """The fingerprint and the peaks the % columns are of, in one line."""
    f = rep.get("fingerprint") or {}
    if f.get("kind") == "cpu":
        where = f"{f['name']}, {f['cores']} cores: no GPU, so the speed-of-light columns give rates, not % of peaks"
    else:
        where = (
            f"{f.get('name')}, driver {f.get('driver')}, SM {f.get('sm_clock_mhz')} MHz, memory "
            f"{f.get('mem_clock_mhz')} MHz, ECC {f.get('ecc')}"
        )
        found = rep.get("peaks")
        if found:
            where += (
                f"; peaks: copy {found['copy_gbs']:,.0f} GB/s, FP32 {found['fp32_gflops']:,.0f} GFLOP/s, "
                f"FP64 {found['fp64_gflops']:,.0f} GFLOP/s ({found['sources'].get('copy', '')})"
            )
    return f"device: {where}"


def publish(rep: dict, text: str, json_path: str | None, baseline: dict | None = None) -> None:
    """The table on stdout (stderr when the JSON goes to stdout), then the A/B against ``baseline`` (a
    report from ``sim.cmdline.baseline.load``) where given, and the JSON where asked."""
    table_out = sys.stderr if json_path == "-" else sys.stdout
    print(text, file=table_out)
    if baseline is not None:
        from sim.cmdline.baseline import comparison

        print(comparison(rep, baseline), file=table_out)
    if json_path == "-":
        sys.stdout.write(json.dumps(rep, indent=2) + "\n")
    elif json_path:
        from sim.cmdline.writer import write_text

        write_text(json_path, json.dumps(rep, indent=2) + "\n", "JSON file")
