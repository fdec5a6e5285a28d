"""The scaling benchmarks' table: strong and weak scaling per configuration, each rank's own figures
below each row (the JSON holds the same figures). A scene's scaling runs describe their columns
(``Columns``); the layout around them is the same for every scene."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

SAME = {True: "yes", False: "NO", None: "-"}


@dataclass(frozen=True)
class Columns:
    time_key: str  # the record's time, which speedup and efficiency compare: "step_ms"
    time_heading: str  # "ms/step"
    items: str  # what n counts: "particles"
    setting: Callable[[dict], str]  # the group's heading after its configuration: ", 20 steps"
    tail_heading: str  # the columns after efficiency: " halo KB/step same bits"
    tail: Callable[[dict], str]  # a record's cells under tail_heading
    rank_line: Callable[[dict], str]  # one rank's own figures (a record's per_rank entry)


def table(report: dict, columns: Columns) -> str:
    """Strong and weak scaling, one block per configuration, the ranks' own figures below each row."""
    lines = [
        f"{report['workload']} on {report['device']} (commit {report['commit']}, {report['date']}); "
        f"{report['ranks']} ranks on {report['hosts']} host(s); messages: {report['transport']}"
    ]
    groups: dict = {}
    for r in report["results"]:
        groups.setdefault((r["scaling"], r["config"], r["n"] if r["scaling"] == "strong" else 0), []).append(r)
    for (scaling, config, _), rows in groups.items():
        first = rows[0]
        what = (
            f"n = {first['n']:,}"
            if scaling == "strong"
            else f"{first['n']:,} {columns.items} on one rank, grown with the ranks"
        )
        lines.append(f"\n{scaling} scaling, {what}; {config.strip()}{columns.setting(first)}")
        lines.append(
            f"  {'ranks':>5} {'n':>13} {columns.time_heading:>12} {'speedup':>8} {'efficiency':>10}"
            + columns.tail_heading
        )
        for r in rows:
            speedup = f"{r['speedup']:.2f}x" if r.get("speedup") else "-"
            lines.append(
                f"  {r['ranks']:>5} {r['n']:>13,} {r[columns.time_key]:>12.3f} {speedup:>8} "
                f"{r['efficiency']:>9.1%}{columns.tail(r)}"
            )
            lines.extend(f"        rank {p['rank']}: {columns.rank_line(p)}" for p in r["per_rank"])
    return "\n".join(lines)
