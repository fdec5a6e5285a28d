"""bench/rank_one.py's table: the lines bench/rank_ab.sh collects, as the A/B files under bench/results keep them."""

from __future__ import annotations

import bench_scripts

rank_one = bench_scripts.load("rank_one")

RUN = (
    "{tree:>12} n={n:>11,}: 0.4072 ms a step (runs 0.4037 0.4056 0.4075 0.4074 0.4072); median ms: forces+move "
    "0.3631 bin 0.0120; renumbered 115 of 1050, slow 2; particles {n}, sum of x 353525313.1"
)


def test_each_run_is_a_row_under_the_header_and_other_lines_are_skipped():
    lines = [RUN.format(tree=".base", n=10_000_000), "Traceback (most recent call last):"]
    lines.append(RUN.format(tree=".", n=12_345))
    rows = rank_one.table(lines)
    assert len(rows) == 3
    assert rows[0].split() == ["tree", "n", "ms", "a", "step", "(runs)", "forces+move", "bin", "renumbered", "slow"]
    first, second = (row.split() for row in rows[1:])
    assert first[:3] == [".base", "10M", "0.4072"] and first[-4:] == ["0.3631", "0.0120", "115", "2"]
    assert second[:2] == [".", "12,345"]
    assert rows[1].index("0.3631") == rows[0].index("forces+move"), "the columns line up"
