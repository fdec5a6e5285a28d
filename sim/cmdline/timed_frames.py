"""The benchmark every scene has unless it declares its own (``sim.contract.TIMED_FRAMES``): ``bench SCENE`` builds
every combination of the comma-separated presets, counts, variants, blocks and the scene's options, and times each
one's frames headless (``sim.cmdline.bench.run``); the table adds the scene's own figures (``Scene.bench_type``)."""

from __future__ import annotations

import argparse
import sys

from sim.cmdline import bench, bench_report, cli
from sim.cmdline.arguments import add_scene_args
from sim.cmdline.requests import BenchRequest, SceneRequest, frozen_mapping
from sim.cmdline.scenes import make_scene
from sim.contract import Bench, load
from sim.registry import spec


def add_arguments(p: argparse.ArgumentParser, scene: str, positional: bool = True) -> None:
    """The scene's arguments of view and run, each a comma-separated list, and the steps to time."""
    add_scene_args(p, scene, many=True, positional=positional)
    p.add_argument(
        "--steps",
        type=cli.positive_int,
        default=600,
        help="timed physics steps, at least (default 600; more frames until the median is known "
        "to 1%% or the time budget ends)",
    )
    p.add_argument(
        "--warmup", type=cli.non_negative_int, default=12, help="untimed steps first (compilation; default 12)"
    )


def run(request: BenchRequest) -> int:
    """Every configuration's timed frames, the table (and JSON); refused (exit 2) before any runs where one cannot
    fit or the steps could not finish."""
    s = spec(request.scene)
    configs = bench.configurations(request, s)
    bench.check_resources(request, s, configs)
    records = []
    for i, config in enumerate(configs, 1):
        scene = make_scene(configured(request, s, config))
        knob = f" {scene.knobs.variant} block {cli.block_text(scene.knobs.block)}" if scene.gpu_kernels_run() else ""
        label = f"[{i}/{len(configs)}] {scene.preset} n={scene.n:,} {scene.backend}{knob}"
        print(f"{label} ...", file=sys.stderr, flush=True)
        records.append(bench.run(scene, steps=request.steps, warmup=request.warmup))
        print(
            f"{label}: {records[-1]['step_ms']:.4f} ms/step (median stages), {records[-1]['item_steps_per_s']:.3g} "
            f"{s.words.one}-steps/s (over the wall time)",
            file=sys.stderr,
            flush=True,
        )
        del scene
        bench.release_memory()
    report = bench_report.report(s.name, records)
    bench_report.publish(
        report, bench_report.table(report, load(s.scene).bench_type.lines), request.json, request.baseline
    )
    return 0


def configured(request: BenchRequest, s, config: dict) -> SceneRequest:
    """The scene of one of ``bench``'s configurations (``sim.cmdline.bench.configurations``)."""
    return SceneRequest(
        request.scene,
        request.backend,
        config["preset"],
        config["count"],
        config["variant"],
        config["block"],
        request.seed,
        frozen_mapping({o.name: config[o.name] for o in s.options}),
    )


BENCH = Bench(add_arguments, BenchRequest, run)
