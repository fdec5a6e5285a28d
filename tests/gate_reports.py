"""The gate's test reports (every workload's bench JSON as bench/regress.py reads it) and the folders they are
written to, shared by the tests of bench/regress.py."""

from __future__ import annotations

import json
import os

import bench_scripts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
regress = bench_scripts.load("regress", register=True)

DEVICE = "NVIDIA H200"
M = 1_000_000


def product_reports(scale: float) -> dict[str, dict]:
    """Every workload's report as its bench writes it, each figure times ``scale``."""

    def rep(workload, results):
        return {
            "device": DEVICE,
            "commit": "abc",
            "date": "2026-11-25T10:00:00+00:00",
            "workload": workload,
            "results": results,
        }

    return {
        "balls": rep(
            "balls",
            [
                {
                    "scene": "balls",
                    "preset": "block",
                    "n": 10 * M,
                    "backend": "gpu",
                    "variant": "grid",
                    "block": 128,
                    "step_ms": 0.47 * scale,
                },
                {
                    "scene": "balls",
                    "preset": "block",
                    "n": M,
                    "backend": "gpu",
                    "variant": "grid",
                    "block": 128,
                    "step_ms": 0.065,
                },
            ],
        ),
        "particles": rep(
            "particles",
            [
                {
                    "scene": "particles",
                    "n": 10 * M,
                    "backend": "gpu",
                    "variant": "plain",
                    "block": 128,
                    "options": {"precision": "fp64"},
                    "step_ms": 0.52 * scale,
                },
                {
                    "scene": "particles",
                    "n": 10 * M,
                    "backend": "gpu",
                    "variant": "plain",
                    "block": 128,
                    "options": {"precision": "fp32"},
                    "step_ms": 0.3,
                },
            ],
        ),
        "sdh": rep("sdh", [{"n": 512000, "backend": "gpu", "kernel": "tensor", "block": 256, "kernel_ms": 73 * scale}]),
        "heat": rep(
            "heat",
            [
                {
                    "n": 10000,
                    "backend": "gpu",
                    "kernel": "temporal",
                    "block": "32x4",
                    "k": 8,
                    "fma": False,
                    "ms_per_step": 0.06 * scale,
                }
            ],
        ),
        "durbin": rep(
            "durbin",
            [
                {
                    "kind": "single",
                    "backend": "gpu",
                    "n": 200000,
                    "method": "persistent-grid",
                    "block": 256,
                    "us_per_step": 2.5 * scale,
                },
                {
                    "kind": "batch",
                    "backend": "gpu",
                    "systems": 100000,
                    "order": 32,
                    "method": "batched-register",
                    "block": 128,
                    "s": 0.0002 * scale,
                },
                {
                    "kind": "batch",
                    "backend": "gpu",
                    "systems": 100000,
                    "order": 32,
                    "method": "batched-register",
                    "block": 64,
                    "skipped": "no",
                },
            ],
        ),
        "frame": rep(
            "frame",
            [
                {
                    "scene": "balls",
                    "n": M,
                    "backend": "gpu",
                    "width": 1920,
                    "height": 1080,
                    "panel": "all",
                    "frame_ms": 4.6 * scale,
                    "pick_frame_ms": 5.0 * scale,
                }
            ],
        ),
        "frame-heat": rep(
            "frame",
            [
                {
                    "scene": "heat",
                    "preset": "large",
                    "n": 100 * M,
                    "backend": "gpu",
                    "width": 1920,
                    "height": 1080,
                    "panel": "all",
                    "frame_ms": 13.2 * scale,
                }
            ],
        ),
    }


def write(folder, name, rep):
    with open(os.path.join(folder, name), "w") as f:
        json.dump(rep, f)


def make_folders(tmp_path):
    """out/ and results/ under tmp_path: every workload's report at scale 1 committed, an older faster file and
    another GPU model's (neither the baseline), and the balls' peer figure in out/."""
    out, results = tmp_path / "out", tmp_path / "results"
    out.mkdir()
    results.mkdir()
    for workload, rep in product_reports(1.0).items():
        write(results, f"h200-{workload}.json", rep)
    # an older file with faster figures, and another GPU model's: neither is the baseline
    old = product_reports(0.5)["balls"] | {"date": "2026-11-01T00:00:00+00:00"}
    write(results, "h200-balls-old.json", old)
    write(results, "h100-balls.json", product_reports(0.1)["balls"] | {"device": "NVIDIA H100 80GB HBM3"})
    write(out, "peer-balls.json", {"device": DEVICE, "results": [{"n": 10 * M, "ms_per_step": 1.9}]})
    return str(out), str(results)


def run(out, results, scale):
    for workload, rep in product_reports(scale).items():
        write(out, f"{workload}.json", rep)
    return regress.main([out, "--results", results])
