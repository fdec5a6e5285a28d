"""A benchmark's report: the JSON other tools read, its table, and where both go.

JSON shape: {"device", "fingerprint", "peaks", "commit", "date", "workload", "results": [record, ...]}
(fingerprint: the GPU's name, driver, clocks and ECC, or the CPU's name and cores; peaks: the roofs of the
records' ``speed_of_light``, ``sim.gpu.peaks``, null on the CPU). The records: ``sim.cmdline.bench`` (timed
frames) and each workload's own bench.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import subprocess
import sys

from sim.gpu import measure, peaks
from sim.gpu.backend import device_name
from sim.gpu.roofline import figure_header, figure_text, has_issue


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
