"""Every proximity pass of the balls' headline bench under Nsight Compute (bench/ncu_passes.sh): the warp
instructions a ball each pass executed beside its tests a ball, their timed passes' average, and the line
through them that the balls' model takes (``GRID_INSTRUCTIONS_A_BALL`` + ``GRID_INSTRUCTIONS_A_TEST`` x tests
a ball, in ``sim.balls.kernels``; a least-squares line goes through the average).

    python3 bench/ncu_passes.py DIR      DIR/sweeps.csv (ncu's --csv log, one row a metric a launch) and
                                         DIR/bench.json (the same run's record: its timed passes' tests)

The record's passes are the last ones run, after the warm-up's; a pass that searched again (lists that
overflowed) has two launches, and then the launches are not matched to passes (said, exit 1).
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sim.balls.world import STEPS_PER_PASS  # noqa: E402

INSTRUCTIONS = "smsp__inst_executed.sum"
GRID = "launch__grid_size"
TIME = "gpu__time_duration.sum"
CLOCK = "smsp__cycles_elapsed.avg.per_second"


def launches(path: Path) -> list[dict[str, float]]:
    """ncu's --csv log: the launches in order, each a metric name -> value."""
    lines = path.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ValueError(f'{path}: no Nsight Compute table (a line starting with "ID")')
    found: dict[int, dict[str, float]] = {}
    for row in csv.DictReader(lines[start:]):
        value = row["Metric Value"].replace(",", "")
        found.setdefault(int(row["ID"]), {})[row["Metric Name"]] = float(value) if value else float("nan")
    return [found[i] for i in sorted(found)]


def passes(folder: Path) -> tuple[list[dict], dict]:
    """The timed passes, each with tests, instructions a ball, tests a ball, µs and GHz; and the record."""
    (record,) = json.loads((folder / "bench.json").read_text())["results"]
    counted = launches(folder / "sweeps.csv")
    timed = record["passes"]
    if len(counted) != record["pass_count"] + record.get("warmup_steps", 0) // STEPS_PER_PASS:
        raise ValueError(
            f"{len(counted)} launches for {record['pass_count']} timed passes and the warm-up's: a pass searched "
            "again (its lists overflowed), so launches and passes do not pair"
        )
    rows = []
    for launch, p in zip(counted[len(counted) - len(timed) :], timed, strict=True):
        balls = launch[GRID] * record["block"]  # to within a block
        rows.append(
            {
                "tests": p["tests"],
                "tests_a_ball": p["tests"] / record["n"],
                "instructions_a_ball": launch[INSTRUCTIONS] / balls,
                "us": launch[TIME] / 1e3,
                "ghz": launch[CLOCK] / 1e9,
            }
        )
    return rows, record


def average(rows: list[dict], key: str) -> float:
    return sum(r[key] for r in rows) / len(rows)


def fit(rows: list[dict]) -> tuple[float, float, float]:
    """Instructions a ball = a + b x tests a ball, by least squares over the passes: (a, b, the largest miss of
    a pass as a fraction of its count)."""
    t0, y0 = average(rows, "tests_a_ball"), average(rows, "instructions_a_ball")
    spread = sum((r["tests_a_ball"] - t0) ** 2 for r in rows)
    b = sum((r["tests_a_ball"] - t0) * (r["instructions_a_ball"] - y0) for r in rows) / spread if spread else 0.0
    a = y0 - b * t0
    worst = max(abs(a + b * r["tests_a_ball"] - r["instructions_a_ball"]) / r["instructions_a_ball"] for r in rows)
    return a, b, worst


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python3 bench/ncu_passes.py DIR   (DIR/sweeps.csv and DIR/bench.json)", file=sys.stderr)
        return 2
    try:
        rows, record = passes(Path(argv[0]))
    except (OSError, ValueError, KeyError) as e:
        print(f"ncu_passes: {e}", file=sys.stderr)
        return 1
    print(f"{'pass':>4}  {'tests a ball':>12}  {'instructions a ball':>19}  {'µs':>7}  {'GHz':>5}")
    for i, r in enumerate(rows):
        figures = f"{r['tests_a_ball']:>12.2f}  {r['instructions_a_ball']:>19.2f}  {r['us']:>7.1f}  {r['ghz']:>5.2f}"
        print(f"{i:>4}  {figures}")
    print(
        f"timed passes' average: {average(rows, 'tests_a_ball'):.2f} tests a ball, "
        f"{average(rows, 'instructions_a_ball'):.2f} warp instructions a ball, {average(rows, 'us'):.1f} µs "
        f"({len(rows)} passes, {record['n']:,} balls)"
    )
    a, b, worst = fit(rows)
    print(f"fit: {a:.4g} + {b:.5g} x tests a ball warp instructions a ball (each pass within {100 * worst:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
