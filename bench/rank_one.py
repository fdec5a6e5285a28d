"""One GPU rank (no neighbours) of a tree stepping n particles at the 2020 preset, plain fp64, block 128:
ms a step by the wall clock (median of RUNS runs of STEPS steps, after 50 steps of warm-up), the rank's
stage medians, and how often it renumbered and took the slow way. bench/rank_ab.sh runs it for several
trees in turns.

    python bench/rank_one.py TREE N [STEPS] [RUNS]      (TREE: a folder with sim/ and assets/, e.g. .)
    python bench/rank_one.py --table LOG                 the lines of a log as bench/results/h200-ab-*.txt's tables
"""

from __future__ import annotations

import re
import sys
import time

LINE = re.compile(
    r"\s*(?P<tree>\S+) n=\s*(?P<n>[\d,]+): (?P<ms>[\d.]+) ms a step \(runs (?P<runs>[^)]*)\); "
    r"median ms: forces\+move (?P<forces>[\d.]+) bin (?P<bin>[\d.]+); renumbered (?P<renumbered>\d+) of \d+, "
    r"slow (?P<slow>\d+)"
)
HEADER = f"{'tree':<5} {'n':<6} {'ms a step (runs)':<59} {'forces+move':<12} {'bin':<7} {'renumbered':<11} slow"


def table(lines) -> list[str]:
    """The runs' lines (others skipped) as rows under HEADER, in their order: what the A/B files keep."""
    rows = [HEADER]
    for line in lines:
        found = LINE.match(line)
        if found is None:
            continue
        run = found.groupdict()
        n = int(run["n"].replace(",", ""))
        size = f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n:,}"
        timing = f"{run['ms']} ({run['runs']})"
        rows.append(
            f"{run['tree']:<5} {size:<6} {timing:<59} {run['forces']:<12} {run['bin']:<7} "
            f"{run['renumbered']:<11} {run['slow']}"
        )
    return rows


def main(argv: list[str]) -> int:
    if argv[:1] == ["--table"]:
        with open(argv[1]) as log:
            print("\n".join(table(log)))
        return 0
    tree, n = argv[0], int(float(argv[1]))
    steps, runs = (int(argv[2]) if len(argv) > 2 else 200), (int(argv[3]) if len(argv) > 3 else 5)
    sys.path.insert(0, tree)
    import cupy
    import numpy as np

    from sim.mpi.comm import Comm
    from sim.mpi.links import gpu_link
    from sim.particles.ranks import start_rank

    comm = Comm()
    rank = start_rank(
        comm, gpu_link(comm, 0), "2020", n, 1, True, 50 + steps * runs, "plain", "fp64", 128, 0, stats=False
    )
    for _ in range(50):
        rank.step()
    cupy.cuda.Device(0).synchronize()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(steps):
            rank.step()
        cupy.cuda.Device(0).synchronize()
        times.append((time.perf_counter() - start) / steps * 1e3)
    rank.timer.flush()
    stages = " ".join(f"{k} {rank.timer.median(k):.4f}" for k in ("forces+move", "bin"))
    ids, x, _ = rank.positions()
    print(
        f"{tree:>12} n={n:>11,}: {np.median(times):.4f} ms a step (runs {' '.join(f'{t:.4f}' for t in times)}); "
        f"median ms: {stages}; renumbered {rank.renumbered_steps} of {50 + steps * runs}, "
        f"slow {rank.everywhere_steps}; "
        f"particles {len(ids)}, sum of x {float(np.sum(x)):.10g}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
