"""Benchmark records: timing a scene headless, the table, and the JSON other tools read.

JSON shape: {"device", "commit", "date", "workload", "results": [record, ...]}; a balls record has
preset, n, backend, variant, block, steps, stage_ms (median per stage, amortised per physics
step), step_ms, ball_steps_per_s, tests_per_s and passes ([{"tests", "pairs"}, ...], first first).
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from sim.backend import device_name


def git_commit() -> str:
    """HEAD (with -dirty for local changes); KERNEL_LAB_COMMIT names it where git cannot (a copied tree)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return os.environ.get("KERNEL_LAB_COMMIT", "unknown")
    return head + ("-dirty" if dirty else "")


def run_balls(scene, steps: int, warmup: int = 12, progress=None) -> dict:
    """Time ``steps`` physics steps (whole frames of six) after ``warmup`` untimed ones.

    Each frame's stage times are divided by its step count (a proximity pass serves six steps,
    so its cost is amortised); the record keeps the median over frames.
    """
    for _ in range(warmup):
        scene.single_step()
    scene.timer.flush()
    per_frame = scene.steps_per_frame
    frames = max(1, -(-steps // per_frame))
    scene.timer.clear()
    first_pass = len(scene.pass_log)
    counts = []
    start = time.perf_counter()
    for f in range(frames):
        scene.advance_frame()
        counts.append(scene.n)
        if progress:
            progress(f + 1, frames)
    scene.timer.flush()  # GPU: wait for the last frame's events
    wall = time.perf_counter() - start
    done = frames * per_frame
    stage_ms = {name: scene.timer.median(name) / per_frame for name in scene.timer.names}
    frame_total = sum(scene.timer.history(name) for name in scene.timer.names)
    passes = [{"tests": t, "pairs": p} for t, p in list(scene.pass_log)[first_pass:]]
    gpu_pass = scene.backend == "gpu" or getattr(scene, "gpu_proximity", False)
    variant = scene.variant if gpu_pass else ("grid" if scene.variant == "grid" else "zsweep")
    return {
        "preset": scene.preset,
        "n": int(np.mean(counts)),
        "backend": scene.backend,
        "variant": variant,
        "block": scene.block if gpu_pass else None,
        "gpu_bytes_per_ball": gpu_bytes_per_ball(scene) if scene.backend == "gpu" else None,
        "steps": done,
        "wall_s": wall,
        "stage_ms": stage_ms,
        "step_ms": float(np.median(frame_total)) / per_frame,
        "ball_steps_per_s": float(np.sum(counts)) * per_frame / wall,
        "steps_per_s": done / wall,
        "tests_per_s": sum(p["tests"] for p in passes) / wall,
        "passes": passes,
    }


FERMI_SECONDS = {5000: 0.168, 1_280_000: 23.05, 5_120_000: 93.10}  # the report's GPU, whole run, 1000 steps


def run_particles(scene, steps: int = 1000, warmup: int = 10) -> dict:
    """Time ``steps`` steps (whole frames of ten) after ``warmup`` (initialisation excluded): wall clock,
    and per stage the median per frame over its ten steps (CUDA events on the GPU)."""
    per_frame = scene.steps_per_frame
    for _ in range(max(1, -(-warmup // per_frame))):
        scene.advance_frame()
    scene.finish()
    scene.timer.flush()
    scene.timer.clear()
    frames = max(1, -(-steps // per_frame))
    start = time.perf_counter()
    for _ in range(frames):
        scene.advance_frame()
    scene.finish()
    total = time.perf_counter() - start
    scene.timer.flush()
    gpu = scene.backend == "gpu"
    return {
        "n": scene.n,
        "steps": frames * per_frame,
        "backend": scene.backend,
        "variant": scene.variant if gpu else "binned",
        "block": scene.block if gpu else None,
        "precision": scene.precision if gpu else "fp64",
        "total_s": total,
        "particle_steps_per_s": scene.n * frames * per_frame / total,
        "stage_ms": {name: scene.timer.median(name) / per_frame for name in scene.timer.names},
        "fermi_s": FERMI_SECONDS.get(scene.n),
        "gpu_bytes_per_particle": gpu_bytes_per_ball(scene) if gpu else None,
    }


def particles_table(rep: dict) -> str:
    lines = [f"particles on {rep['device']} (commit {rep['commit']}, {rep['date']})",
             f"{'n':>10} {'backend':>7} {'variant':>9} {'block':>5} {'prec':>4} {'steps':>5} {'total s':>9} "
             f"{'particle-steps/s':>16} {'Fermi s':>8}  stage ms/step"]
    for r in rep["results"]:
        fermi = f"{r['fermi_s']:.2f}" if r["fermi_s"] else "-"
        stages = ", ".join(f"{k} {v:.4f}" for k, v in r["stage_ms"].items())
        lines.append(f"{r['n']:>10} {r['backend']:>7} {r['variant']:>9} {str(r['block'] or '-'):>5} "
                     f"{r['precision']:>4} {r['steps']:>5} {r['total_s']:>9.3f} {r['particle_steps_per_s']:>16.4g} "
                     f"{fermi:>8}  {stages}")
    return "\n".join(lines)


def sdh_table(rep: dict) -> str:
    lines = [f"sdh on {rep['device']} (commit {rep['commit']}, {rep['date']}); CUDA-event kernel times, median of 3",
             f"{'n':>10} {'w':>7} {'kernel':>11} {'block':>5} {'kernel ms':>12} {'pairs/s':>12}"]
    for r in rep["results"]:
        lines.append(f"{r['n']:>10} {r['w']:>7g} {r['kernel']:>11} {r['block']:>5} {r['kernel_ms']:>12.3f} "
                     f"{r['pairs_per_s']:>12.4g}")
    return "\n".join(lines)


def gpu_bytes_per_ball(scene) -> float:
    import cupy

    return cupy.get_default_memory_pool().used_bytes() / max(scene.n, 1)


def release_memory() -> None:
    """Between benchmark configurations: give the GPU memory pool back."""
    import gc

    from sim.backend import gpu_status

    gc.collect()
    if gpu_status().available:
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()


def report(workload: str, results: list[dict], backend: str = "cpu") -> dict:
    used = {r["backend"] for r in results}
    return {
        "device": device_name("gpu" if "gpu" in used else "cpu"),
        "commit": git_commit(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "workload": workload,
        "results": results,
    }


def table(rep: dict) -> str:
    lines = [f"{rep['workload']} on {rep['device']} (commit {rep['commit']}, {rep['date']})"]
    for r in rep["results"]:
        passes = r["passes"]
        tests = np.mean([p["tests"] for p in passes]) if passes else 0
        pairs = np.mean([p["pairs"] for p in passes]) if passes else 0
        lines.append(f"preset {r['preset']}  n {r['n']}  backend {r['backend']}  variant {r['variant']}"
                     + (f"  block {r['block']}" if r["block"] else ""))
        lines.append(f"  {'stage':<12}{'median ms/step':>16}")
        for name, ms in r["stage_ms"].items():
            lines.append(f"  {name:<12}{ms:>16.4f}")
        lines.append(f"  {'step':<12}{r['step_ms']:>16.4f}")
        lines.append(f"  steps/s {r['steps_per_s']:.1f}   ball-steps/s {r['ball_steps_per_s']:.4g}   "
                     f"tests/s {r['tests_per_s']:.4g}")
        first = passes[0] if passes else {"tests": 0, "pairs": 0}
        lines.append(f"  per pass: {tests:.0f} tests, {pairs:.0f} pairs on average "
                     f"({tests / max(r['n'], 1):.1f} tests per ball); first timed pass "
                     f"{first['tests']} tests, {first['pairs']} pairs; {len(passes)} passes")
    return "\n".join(lines)


def write_json(rep: dict, path: str) -> None:
    """Write atomically (a temporary file renamed into place), or to stdout for "-"."""
    text = json.dumps(rep, indent=2) + "\n"
    if path == "-":
        sys.stdout.write(text)
        return
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".bench-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
