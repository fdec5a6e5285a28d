"""``check --baseline OLD.json``: each case of this check beside the same case (size and seed) of an earlier
``check --json`` (``grader.record``'s JSON): the kernel's ms then and now, their ratio, correct then and now.

``load`` reads and checks the file as ``sim.cmdline.baseline`` does a bench report
(``sim.cmdline.reader.read_json``, each field a comparison reads checked once, a UsageError naming the file,
case and field); ``same_stage`` refuses a baseline of another scene or stage before anything runs;
``comparison`` is the text.
"""

from __future__ import annotations

import math

from sim.cmdline.baseline import SIZE_LIMIT
from sim.cmdline.cli import UsageError
from sim.cmdline.reader import read_json


def _whole(value, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _time(value) -> bool:
    return value is None or (
        isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    )


# What check --json writes in each field the comparison reads: checked once, at load
CASE_SCHEMA = {
    "size": (lambda v: _whole(v, 1), "a positive whole number"),
    "seed": (lambda v: _whole(v, 0), "a whole number 0 or more"),
    "correct": (lambda v: isinstance(v, bool), "true or false"),
    "ms": (_time, "a time: a number 0 or more, or null"),
    "error": (lambda v: v is None or isinstance(v, str), "text or null"),
}
REQUIRED = ("size", "seed", "correct")
SHOWN = 4  # the baseline's cases not run now, named


def _case_problem(case) -> str:
    if not isinstance(case, dict):
        return "is not a case (an object of fields)"
    missing = [name for name in REQUIRED if name not in case]
    if missing:
        return f'has no "{missing[0]}"'
    for name, (valid, expected) in CASE_SCHEMA.items():
        if name in case and not valid(case[name]):
            return f'field "{name}" is not {expected}'
    return ""


def load(path: str) -> dict:
    """The check report in ``path``; UsageError (exit 2) naming the file when it is not one."""
    report = read_json(path, "baseline", SIZE_LIMIT)
    if not isinstance(report, dict) or not isinstance(report.get("cases"), list):
        hint = (
            " (a bench report: compare it with bench --baseline)"
            if isinstance(report, dict) and "results" in report
            else ""
        )
        raise UsageError(
            f'baseline {path!r} is not a check report (no "cases" list; write one with check --json)' + hint
        )
    for name in ("scene", "stage"):
        if not isinstance(report.get(name), str):
            raise UsageError(f"baseline {path!r} does not say its {name} (a check --json report does)")
    for i, case in enumerate(report["cases"]):
        problem = _case_problem(case)
        if problem:
            raise UsageError(f"baseline {path!r}: cases[{i}] {problem}")
    return {**report, "path": path}


def argument(path: str) -> dict:
    """``--baseline``'s type: the loaded report (argparse says the option's name and exits 2)."""
    import argparse

    try:
        return load(path)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def same_stage(old: dict, scene: str, stage: str) -> None:
    """UsageError unless the baseline checked the same scene and stage."""
    if (old["scene"], old["stage"]) != (scene, stage):
        raise UsageError(
            f"baseline {old['path']!r} is a check of {old['scene']} {old['stage']}, not of {scene} "
            f"{stage}: compare with a check --json of the same stage"
        )


def _correct(case: dict) -> str:
    if case.get("error"):
        return "failed"
    return "yes" if case["correct"] else "no"


def _ms(value) -> str:
    return "-" if value is None else f"{value:.4f}"


def comparison(new: dict, old: dict) -> str:
    """Each case of ``new`` (this check's record) beside the same size and seed in ``old``."""
    lines = [
        f"against the baseline {old['path']} ({old.get('file', '?')}; {old.get('device') or '?'}, commit "
        f"{old.get('commit') or '?'}, {old.get('date') or '?'})"
    ]
    if old.get("device") != new.get("device"):
        then, now = old.get("device") or "?", new.get("device") or "?"
        lines.append(f"  note: the baseline ran on {then}, this check on {now}")
    if old.get("block") != new.get("block"):
        lines.append(f"  note: the baseline ran with block {old.get('block')}, this check with {new.get('block')}")
    olds = {(c["size"], c["seed"]): c for c in old["cases"]}
    lines.append(f"  {'size':>12} {'seed':>5} {'ms then':>10} {'ms now':>10} {'now/then':>9}  correct then -> now")
    for case in new["cases"]:
        key = (case["size"], case["seed"])
        then = olds.pop(key, None)
        head = f"  {case['size']:>12,} {case['seed']:>5}"
        if then is None:
            lines.append(f"{head} {'-':>10} {_ms(case['ms']):>10} {'-':>9}  not in the baseline -> {_correct(case)}")
            continue
        ratio = f"{case['ms'] / then['ms']:.3f}" if case["ms"] is not None and then.get("ms") else "-"
        lines.append(
            f"{head} {_ms(then.get('ms')):>10} {_ms(case['ms']):>10} {ratio:>9}  {_correct(then)} -> {_correct(case)}"
        )
    if olds:
        named = [f"size {size:,} seed {seed}" for size, seed in sorted(olds)[:SHOWN]]
        more = f" and {len(olds) - SHOWN:,} more" if len(olds) > SHOWN else ""
        lines.append(
            f"  {len(olds):,} case{'s' if len(olds) != 1 else ''} of the baseline not run now: "
            + "; ".join(named)
            + more
        )
    return "\n".join(lines)
