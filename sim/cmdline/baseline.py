"""A/B against a baseline: an earlier benchmark JSON (``sim.cmdline.bench_report``'s report) beside this run's.

``load(path)`` reads and checks a report (UsageError naming the file: not JSON, not a report, too large);
``comparison(new, old)`` is the text ``bench ... --baseline OLD.json`` prints: per configuration and
figure the old and new times, the ratio and whether the difference is beyond the combined error (the
sum of the two 95% half-widths of ``sim.gpu.measure``; a figure without an error, from before the harness,
counts as exact). ``closest(records, want)`` finds the record nearest a live configuration (the viewer's
ghost bars).

A configuration is a record's identity fields (``KEYS``: scene, preset, n, variant, block, kernel...);
its figures are the stage times and the timed figures of ``TIMES``, whichever the record has.
"""

from __future__ import annotations

import json
import math
from typing import TypeGuard

from sim.cmdline.cli import UsageError
from sim.cmdline.reader import read_json

SIZE_LIMIT = 64 << 20  # a report of many thousands of records is a few MiB
KEYS = (
    "kind",
    "scene",
    "stage",
    "preset",
    "n",
    "systems",
    "order",
    "w",
    "backend",
    "variant",
    "kernel",
    "method",
    "block",
    "blocks",
    "k",
    "fma",
    "precision",
    "options",
    "width",
    "height",
)
TIMES = ("step_ms", "kernel_ms", "ms_per_step", "s", "frame_ms", "pick_frame_ms", "record_frame_ms", "median_ms")


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _time_or_none(value) -> bool:
    return value is None or (_number(value) and value >= 0)


def _times(value, none=False) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and (_time_or_none(v) if none else _number(v) and v >= 0) for k, v in value.items()
    )


_COUNT = (_whole, "a positive whole number")
_TEXT = (lambda v: v is None or isinstance(v, str), "text")
_TIME = (_time_or_none, "a time: a number 0 or more")
# What a bench writes in each field a comparison reads (other fields are not read): checked once, at load
SCHEMA = {
    **dict.fromkeys(("n", "systems", "order", "width", "height"), _COUNT),
    **dict.fromkeys(("blocks", "k"), (lambda v: v is None or _whole(v), "a positive whole number")),
    **dict.fromkeys(("kind", "scene", "stage", "preset", "backend", "variant", "kernel", "method", "precision"), _TEXT),
    "block": (
        lambda v: v is None or _whole(v) or isinstance(v, str) or (isinstance(v, list) and v and all(map(_whole, v))),
        'a CUDA block: threads, a shape such as "32x8" or a list of whole numbers',
    ),
    "w": (lambda v: v is None or _number(v), "a number"),
    "fma": (lambda v: v is None or isinstance(v, bool), "true or false"),
    "options": (lambda v: v is None or isinstance(v, dict), "a table of options"),
    **{name: _TIME for name in TIMES},
    **{f"{name}_err": _TIME for name in TIMES},
    "stage_ms": (_times, "stage names with their times (numbers 0 or more)"),
    "stage_ms_err": (lambda v: _times(v, none=True), "stage names with their errors (numbers 0 or more)"),
}


def record_problem(record) -> str:
    """What is wrong with a report's record, in words naming the field ("" when nothing)."""
    if not isinstance(record, dict):
        return f"is {_shown(record)}, not a record (an object of fields)"
    for name, (valid, expected) in SCHEMA.items():
        if name in record and not valid(record[name]):
            return f'field "{name}" is {_shown(record[name])}, not {expected}'
    return ""


def _shown(value) -> str:
    text = json.dumps(value)  # as the file has it (NaN included)
    return text if len(text) <= 40 else text[:37] + "..."


def load(path: str) -> dict:
    """The report in ``path``; UsageError (exit 2) naming the file when it is not one, or naming the record
    and field that does not hold what a bench writes there."""
    report = read_json(path, "baseline", SIZE_LIMIT)
    if not isinstance(report, dict) or not isinstance(report.get("results"), list):
        raise UsageError(f'baseline {path!r} is not a benchmark report (no "results" list)')
    for i, record in enumerate(report["results"]):
        problem = record_problem(record)
        if problem:
            raise UsageError(f"baseline {path!r}: results[{i}] {problem}")
    records = [r for r in report["results"] if figures(r)]
    if not records:
        raise UsageError(f"baseline {path!r} has no timed records")
    return {**report, "results": records, "path": path}


BENCH_HELP = (
    "also print each figure beside the same configuration's in this earlier JSON: faster, slower or "
    "the same within the error"
)


def add_option(parser, help: str = BENCH_HELP) -> None:
    """``--baseline OLD.json``, loaded as the command line is read (``argument``)."""
    parser.add_argument("--baseline", metavar="OLD.json", type=argument, help=help)


def argument(path: str) -> dict:
    """``--baseline``'s type: the loaded report (argparse says the option's name and exits 2)."""
    import argparse

    try:
        return load(path)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def key(record: dict) -> tuple:
    return tuple((name, json.dumps(record[name], sort_keys=True)) for name in KEYS if name in record)


def describe(record: dict) -> str:
    parts = []
    for name in KEYS:
        value = record.get(name)
        if value is None or value == {}:
            continue
        if isinstance(value, dict):
            parts += [f"{k} {v}" for k, v in value.items()]
        elif isinstance(value, list):
            parts.append(f"{name} {'x'.join(str(v) for v in value)}")
        else:
            parts.append(f"{name} {value}")
    return "  ".join(parts)


def _number(value) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def figures(record: dict) -> dict[str, tuple[float, float | None]]:
    """The record's times by figure name: (median, error or None)."""
    found = {}
    stages, errors = record.get("stage_ms"), record.get("stage_ms_err") or {}
    if isinstance(stages, dict):
        for name, ms in stages.items():
            if _number(ms):
                found[f"{name} ms/step"] = (float(ms), errors.get(name) if _number(errors.get(name)) else None)
    for name in TIMES:
        if _number(record.get(name)) and "skipped" not in record:
            error = record.get(f"{name}_err")
            found[name] = (float(record[name]), float(error) if _number(error) else None)
    return found


def verdict(new: float, new_err: float | None, old: float, old_err: float | None, slack: float = 0.0) -> str:
    """faster / slower when the difference exceeds ``slack`` of the old figure plus the combined error (an
    unknown error counts as 0)."""
    allowance = slack * old + (new_err or 0.0) + (old_err or 0.0)
    if new - old > allowance:
        return "slower"
    if old - new > allowance:
        return "faster"
    return "same within error"


def _time(value: float, error: float | None) -> str:
    return f"{value:.4g} ± {'?' if error is None else f'{error:.2g}'}"


def comparison(new: dict, old: dict) -> str:
    """The A/B text: every configuration of ``new`` beside the same one in ``old``."""
    lines = [
        f"against the baseline {old.get('path', '')} ({old.get('device', '?')}, commit {old.get('commit', '?')}, "
        f"{old.get('date', '?')})"
    ]
    if old.get("device") != new.get("device"):
        lines.append(f"  note: the baseline ran on {old.get('device', '?')}, this run on {new.get('device', '?')}")
    olds = {key(r): r for r in old["results"]}
    seen = set()
    for record in new["results"]:
        now = figures(record)
        if not now:
            continue
        k = key(record)
        before = olds.get(k)
        if before is None:
            lines.append(f"{describe(record)}: not in the baseline")
            continue
        seen.add(k)
        lines.append(describe(record))
        lines.append(f"  {'figure':<26}{'baseline':>20}{'now':>20}{'now/base':>10}  verdict")
        then = figures(before)
        for name, (value, error) in now.items():
            if name not in then:
                lines.append(f"  {name:<26}{'-':>20}{_time(value, error):>20}{'-':>10}  not in the baseline")
                continue
            old_value, old_error = then[name]
            ratio = f"{value / old_value:.3f}" if old_value else "-"
            lines.append(
                f"  {name:<26}{_time(old_value, old_error):>20}{_time(value, error):>20}{ratio:>10}  "
                f"{verdict(value, error, old_value, old_error)}"
            )
    for k, record in olds.items():
        if k not in seen:
            lines.append(f"{describe(record)}: in the baseline only (not run now)")
    return "\n".join(lines)


def closest(records: list[dict], want: dict) -> tuple[dict | None, list[str]]:
    """The record nearest the configuration ``want`` (scene, variant, block, n, preset...) and the fields in
    which it differs (empty when exact). The scene and backend must match; then the most equal fields win,
    and among those the nearest item count."""
    candidates = [
        r
        for r in records
        if r.get("scene") == want.get("scene")
        and figures(r).keys()
        and ("backend" not in want or r.get("backend") == want["backend"])
    ]
    if not candidates:
        return None, []
    fields = [name for name in ("variant", "block", "preset", "options") if name in want]

    def distance(r: dict) -> tuple:
        unequal = sum(r.get(name) != want[name] for name in fields)
        n, target = r.get("n") or 0, want.get("n") or 0
        return unequal, abs(math.log((n + 1) / (target + 1)))

    best = min(candidates, key=distance)
    differs = [name for name in (*fields, "n") if name in want and best.get(name) != want[name]]
    return best, differs
