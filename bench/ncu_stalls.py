"""A summary of Nsight Compute's full set over one stage window (bench/ncu_stalls.sh): for each kernel, the
issue slots, the warps eligible to issue, occupancy, active lanes, what the warps stalled on (warp cycles per
issued instruction, by reason) and the busiest pipes; then the instructions with the most stall samples.

    python3 bench/ncu_stalls.py RAW_CSV [SASS_CSV]

RAW_CSV is ncu's raw page (``--csv --page raw --print-units base``), SASS_CSV its source page
(``--csv --page source --print-source sass``).
"""

from __future__ import annotations

import csv
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ncu_models import raw_rows  # noqa: E402  ncu's raw page, a row a kernel

FIGURES = (  # (label, metric, format)
    ("time, µs", "gpu__time_duration.sum", lambda v: f"{v / 1e3:.1f}"),
    ("SM clock, GHz", "smsp__cycles_elapsed.avg.per_second", lambda v: f"{v / 1e9:.2f}"),
    ("registers a thread", "launch__registers_per_thread", lambda v: f"{v:.0f}"),
    ("occupancy, % of warps", "sm__warps_active.avg.pct_of_peak_sustained_active", lambda v: f"{v:.0f}"),
    ("issue slots busy, %", "smsp__issue_active.avg.pct_of_peak_sustained_active", lambda v: f"{v:.0f}"),
    ("eligible warps a cycle", "smsp__warps_eligible.avg.per_cycle_active", lambda v: f"{v:.2f}"),
    ("active lanes a warp instruction", "smsp__thread_inst_executed_per_inst_executed.ratio", lambda v: f"{v:.1f}"),
    ("L1 hit rate, %", "l1tex__t_sector_hit_rate.pct", lambda v: f"{v:.0f}"),
    ("L2 hit rate, %", "lts__t_sector_hit_rate.pct", lambda v: f"{v:.0f}"),
    ("DRAM busy, %", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", lambda v: f"{v:.0f}"),
    ("L1 data pipe busy, %", "l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed", lambda v: f"{v:.0f}"),
)
STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")
PIPE = re.compile(r"^sm__(?:inst_executed_pipe_(\w+?)|pipe_(\w+?)_cycles_active)\.avg\.pct_of_peak_sustained_active$")


def number(row: dict[str, str], name: str) -> float | None:
    try:
        return float(row.get(name, "").replace(",", ""))
    except ValueError:
        return None


def kernel_summary(row: dict[str, str]) -> list[str]:
    lines = [f"kernel {row.get('Kernel Name', '?')[:100]}"]
    for label, name, form in FIGURES:
        value = number(row, name)
        if value is not None:
            lines.append(f"  {label:<34}{form(value)}")
    stalls = {m.group(1): number(row, k) for k in row if (m := STALL.match(k))}
    stalls = {r: v for r, v in stalls.items() if v}
    if stalls:
        total = sum(stalls.values())
        lines.append(f"  warp cycles an issued instruction  {total:.2f}, of which:")
        for reason, value in sorted(stalls.items(), key=lambda kv: -kv[1])[:8]:
            lines.append(f"    {reason:<32}{value:6.2f}  {100 * value / total:4.0f}%")
    pipes = {}
    for key in row:
        if m := PIPE.match(key):
            value = number(row, key)
            if value:
                pipes[(m.group(1) or m.group(2)) + (" inst" if m.group(1) else " cycles")] = value
    if pipes:
        lines.append("  busiest pipes, % of peak:")
        for pipe, value in sorted(pipes.items(), key=lambda kv: -kv[1])[:8]:
            lines.append(f"    {pipe:<32}{value:6.1f}")
    return lines


def hot_instructions(path: Path, count: int = 20) -> list[str]:
    rows = rows_of_source(path)
    if not rows:
        return [f"(no SASS rows in {path.name})"]
    samples = next((k for k in rows[0] if k.startswith("Warp Stall Sampling (All")), None)
    source = next((k for k in rows[0] if k == "Source"), None)
    if samples is None or source is None:
        return [f"(SASS page columns: {', '.join(rows[0])[:400]})"]
    total = sum(number(r, samples) or 0.0 for r in rows) or 1.0
    hot = sorted(rows, key=lambda r: -(number(r, samples) or 0.0))[:count]
    lines = [f"instructions with the most stall samples (of {total:.0f}):"]
    for r in hot:
        share = 100 * (number(r, samples) or 0.0) / total
        lines.append(f"  {share:5.1f}%  {r.get('Address', ''):>6}  {r[source][:90]}")
    return lines


def rows_of_source(path: Path) -> list[dict[str, str]]:
    """The source page's instruction rows (it may repeat its header once a kernel)."""
    table = list(csv.reader(line for line in path.read_text(errors="replace").splitlines() if line.startswith('"')))
    rows, header = [], None
    for row in table:
        if "Source" in row:
            header = row
        elif header:
            rows.append(dict(zip(header, row, strict=False)))
    return rows


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    lines = [f"== {Path(argv[0]).name.removesuffix('.raw.csv')}"]
    for row in raw_rows(Path(argv[0])):
        lines += kernel_summary(row)
    if len(argv) > 1:
        lines += hot_instructions(Path(argv[1]))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
