"""One GPU rank (no neighbours) of a tree stepping n particles at the 2020 preset, plain fp64, block 128:
ms a step by the wall clock (median of RUNS runs of STEPS steps, after 50 steps of warm-up), the rank's
stage medians, and how often it renumbered and took the slow way. bench/rank_ab.sh runs it for several
trees in turns.

    python bench/rank_one.py TREE N [STEPS] [RUNS]      (TREE: a folder with sim/ and assets/, e.g. .)
"""

from __future__ import annotations

import sys
import time


def main(argv: list[str]) -> int:
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
