"""The regression gate: each workload's headline figure beside the last committed one of the same GPU model.

    python3 bench/regress.py OUT_DIR [--results bench/results] [--limit 1.07]
    python3 bench/regress.py --commands       the steps bench/regress.sh runs, "label<TAB>command" a line

The headlines are the scenes' own (``SceneSpec.gate``: each scene's ``bench_cases``). Reads the JSON that
bench/regress.sh wrote to OUT_DIR (the product's benches and the peers', one
GPU call), prints one table (figure, now, baseline and where it came from, ratio, verdict, the peer
and how many times faster the product is), writes OUT_DIR/regress.json (the figures, device,
commit, date: commit it as bench/results/<model>-regress.json) and exits 1 when any figure is more
than 7% (--limit 1.07) slower than its baseline beyond the error: when now - baseline exceeds 7% of the
baseline plus the combined error (the sum of the two 95% half-widths that sim.gpu.measure reports as
``<figure>_err``; a record without one, from before the harness, counts as exact: error 0). Exit 2 when a
figure could not be measured. A bench run again in another process (``<workload>-runN.json``: the frame, which
is mostly host work) counts by its best run.

A baseline is the newest committed record of the same figure on the same device name: of the regress
files under --results and any other committed benchmark JSON there that holds a record of the
headline's configuration, the one with the latest date field (so a workload's bench JSON committed
after the last gate run moves that one figure's baseline, and the others stay). A figure with no
baseline on this GPU model is reported, not gated. The benches report medians of repeated timings
after warm-up (sim.gpu.measure); the 7% stands for the drift between calls (clocks, another card of the same
model) that the error of one call does not see.
"""

from __future__ import annotations

import argparse
import datetime
import glob
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gate_headlines import HEADLINES, commands, is_record  # noqa: E402  what the gate compares, how it runs

from sim.cmdline import baseline  # noqa: E402  the rule of bench --baseline
from sim.cmdline.bench_report import git_commit  # noqa: E402  the commit every bench JSON records
from sim.cmdline.cli import UsageError  # noqa: E402
from sim.cmdline.reader import read_json  # noqa: E402  regular files only, bounded, nesting checked
from sim.cmdline.writer import OutputError, check_target, write_text  # noqa: E402  atomic, never through a link


def _load(path: str) -> dict | None:
    """A benchmark report (a dict with a "results" list); None when there is none at ``path``, or (said on
    stderr) when the file cannot be read or is not one."""
    if not os.path.lexists(path):
        return None
    try:
        rep = read_json(path, "report", baseline.SIZE_LIMIT)
    except (UsageError, OSError) as exc:
        print(f"regress: skipped: {exc}", file=sys.stderr)
        return None
    if not isinstance(rep, dict) or not isinstance(rep.get("results"), list):
        print(f'regress: skipped: {path!r} is not a benchmark report (no "results" list)', file=sys.stderr)
        return None
    return rep


def _text(rep: dict, *names: str) -> str | None:
    """The text at ``rep[names[0]][names[1]]...``, None where a level is missing or not what it should be."""
    value = rep
    for name in names:
        value = value.get(name) if isinstance(value, dict) else None
    return value if isinstance(value, str) else None


def _figure(value) -> bool:
    """A time the gate can divide by: finite and above 0."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def _best(records, pick, ms, err=lambda r: None) -> tuple[float, float] | None:
    """(figure, error) in a list of records: the fastest matching record that ran (skipped ones have no
    time); an error the record does not give counts as 0."""
    values = []
    for r in records:
        if not isinstance(r, dict) or "skipped" in r:
            continue
        try:
            if not pick(r):
                continue
            value, error = ms(r), err(r) or 0.0
        except (AttributeError, KeyError, TypeError, ValueError):
            continue
        if _figure(value) and (error == 0 or _figure(error)):  # a NaN, zero or negative time is no figure
            values.append((float(value), float(error)))
    return min(values) if values else None


def verdict(now: float, now_err: float, old: float, old_err: float, limit: float) -> str:
    """SLOWER when now - old exceeds (limit - 1) of old plus the combined error; faster the other way
    (``sim.cmdline.baseline.verdict``, the rule of ``bench --baseline``, with the gate's slack)."""
    found = baseline.verdict(now, now_err, old, old_err, slack=limit - 1)
    return {"slower": "SLOWER", "faster": "faster"}.get(found, "same")


def reports(out: str, workload: str) -> list[dict]:
    """The product's reports of ``workload`` in OUT_DIR: ``<workload>.json``, and ``<workload>-runN.json``
    where the gate ran a host-bound bench again in a new process (the frame): the best run counts, as the
    host's drift between processes only ever slows a run."""
    paths = [os.path.join(out, f"{workload}.json"), *sorted(glob.glob(os.path.join(out, f"{workload}-run*.json")))]
    return [rep for rep in map(_load, paths) if rep is not None]


def measured(out: str) -> tuple[str, dict[str, tuple[float, float] | None], dict[str, float | None], str | None]:
    """This call's device name, its (figure, error) and the peers' figures by headline name, and the host's
    processor (from the benches' fingerprints)."""
    device, now, peers, host = None, {}, {}, None
    for h in HEADLINES:
        reps = reports(out, h.file or h.workload)
        now[h.name] = _best([r for rep in reps for r in rep["results"]], h.pick, h.ms, h.err) if reps else None
        for rep in reps:
            device = device or _text(rep, "device")
            host = host or _text(rep, "fingerprint", "host_cpu")
        if h.peer_file:
            peer = _load(os.path.join(out, h.peer_file))
            best = _best(peer["results"], h.peer_pick, h.peer_ms) if peer else None
            peers[h.name] = best[0] if best else None
    return device or "unknown", now, peers, host


def baselines(results: str, device: str) -> dict[str, tuple[tuple[float, float], str, str | None]]:
    """The newest committed (figure, error) of each headline on this device name, with the file it came from
    and its host's processor (None where the record does not say)."""
    files = []
    for path in glob.glob(os.path.join(results, "*.json")):
        rep = _load(path)
        if rep is not None and rep.get("device") == device:
            files.append((str(rep.get("date", "")), path, rep))
    files.sort(key=lambda f: f[0], reverse=True)
    found: dict[str, tuple[tuple[float, float], str]] = {}
    for h in HEADLINES:
        for _, path, rep in files:
            if rep.get("workload") not in ("regress", h.workload):
                continue
            if rep.get("workload") == "regress":
                value = _best(rep["results"], is_record(figure=h.name), lambda r: r["value"], lambda r: r.get("error"))
            else:
                value = _best(rep["results"], h.pick, h.ms, h.err)
            if value is not None:
                host = _text(rep, "host_cpu") or _text(rep, "fingerprint", "host_cpu")
                found[h.name] = (value, f"{os.path.basename(path)} @ {rep.get('commit', '?')}", host)
                break
    return found


def model_slug(device: str) -> str:
    found = re.search(r"\b([a-z]\d{2,4})\b", device.lower())
    return found.group(1) if found else re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-")


def _limit(text: str) -> float:
    try:
        limit = float(text)
    except ValueError:
        limit = math.nan
    if not (math.isfinite(limit) and limit >= 1):  # below 1 even an equal figure fails; NaN lets all pass
        raise argparse.ArgumentTypeError(f"must be a ratio of 1 or more (1.07: 7% slower allowed), got {text}")
    return limit


def _folder(text: str) -> str:
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a folder" if os.path.lexists(text) else f"{text!r} does not exist"
        )
    return text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=_folder, nargs="?", help="the folder bench/regress.sh wrote")
    p.add_argument(
        "--commands",
        action="store_true",
        help="print the steps bench/regress.sh runs (label, a tab, the command for bash) and exit",
    )
    p.add_argument(
        "--results",
        type=_folder,
        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"),
        help="committed results to compare with (default bench/results)",
    )
    p.add_argument(
        "--limit",
        type=_limit,
        default=1.07,
        help="slowest allowed ratio to the baseline, beyond the combined error (default 1.07)",
    )
    args = p.parse_args(argv)
    if args.commands:
        print("\n".join(f"{label}\t{command}" for label, command in commands()))
        return 0
    if args.out is None:
        p.error("the folder bench/regress.sh wrote (OUT_DIR) is required")
    target = os.path.join(args.out, "regress.json")
    try:  # before the table: a link, a folder or an unwritable place is refused, nothing written
        check_target(target, "figures file")
    except UsageError as exc:
        print(f"regress: error: {exc}", file=sys.stderr)
        return 2

    device, now, peers, host = measured(args.out)
    base = baselines(args.results, device)
    print(
        f"regression gate on {device} (slower than the newest committed figure of this GPU model by more than "
        f"{100 * (args.limit - 1):.0f}% plus the combined error fails)"
    )
    print(
        f"{'figure':<42}{'now ± error':>20}{'baseline ± error':>20}{'ratio':>7}  {'verdict':<9}{'peer':>10}"
        f"{'x peer':>8}  baseline from"
    )
    slower, missing, other_hosts = [], [], set()
    for h in HEADLINES:
        value, peer = now[h.name], peers.get(h.name)
        old, source, old_host = base.get(h.name, (None, "none on this GPU model", None))
        if old is not None and old_host != host:
            other_hosts.add(old_host or "not recorded")
        if value is None:
            result, ratio = "MISSING", "-"
            missing.append(h.name)
        elif old is None:
            result, ratio = "new", "-"
        else:
            ratio = f"{value[0] / old[0]:.3f}"
            result = verdict(*value, *old, args.limit)
            if result == "SLOWER":
                slower.append(h.name)
        fmt = lambda x: f"{x[0]:.4g} ± {x[1]:.2g}" if x is not None else "-"  # noqa: E731
        times = f"{peer / value[0]:.2f}" if peer and value else "-"
        print(
            f"{h.name:<42}{fmt(value):>20}{fmt(old):>20}{ratio:>7}  {result:<9}"
            f"{f'{peer:.4g}' if peer else '-':>10}{times:>8}  {source}"
        )

    if other_hosts:  # the GPU figures do not move with the host; the frame's host-side work does
        print(f"host CPU: {host or 'not recorded'}; some baselines' host CPU: {', '.join(sorted(other_hosts))}")

    def pair(found, i):
        return found[i] if found is not None else None

    report = {
        "device": device,
        "host_cpu": host,
        "commit": git_commit(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "workload": "regress",
        "limit": args.limit,
        "results": [
            {
                "figure": h.name,
                "value": pair(now[h.name], 0),
                "error": pair(now[h.name], 1),
                "peer": peers.get(h.name),
                "baseline": pair(base.get(h.name, (None,))[0], 0),
                "baseline_error": pair(base.get(h.name, (None,))[0], 1),
                "baseline_from": base.get(h.name, (None, None))[1],
            }
            for h in HEADLINES
        ],
    }
    try:
        write_text(target, json.dumps(report, indent=1, allow_nan=False) + "\n", "figures file")
    except OutputError as exc:
        print(f"regress: {exc}", file=sys.stderr)
        return 1
    print(f"figures: {target} (commit as bench/results/{model_slug(device)}-regress.json)")
    if missing:
        print(f"not measured: {', '.join(missing)} (see the logs)")
        return 2
    if slower:
        print(f"SLOWER than the baseline: {', '.join(slower)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
