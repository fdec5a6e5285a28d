"""Timing a scene headless into a benchmark record (the report around records, its table and JSON:
``sim.cmdline.bench_report``).

A timed-frames record (every scene without a benchmark of its own) has scene, preset, n (the mean item count
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

import time
from typing import Any

import numpy as np

from sim.cmdline import interrupts
from sim.cmdline.progress import Progress, frames_callback
from sim.cmdline.requests import BenchRequest
from sim.gpu import measure, peaks
from sim.gpu.cuda import ceil_div
from sim.gpu.roofline import Setup, figures


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
