"""The balls' block as it falls, splashes and settles: one tree's physics a frame, with the device synchronised,
and its proximity pass's tests a ball, over the frames where the grid's box and cells are put to the test.
bench/results/h200-ab-324d7a9-grid-trim.txt and h200x2-ab-4d467e2-grid-split.txt hold its lines (EVERY 25,
every fourth line kept) for two trees in turns.

    python bench/balls_splash.py TREE [FRAMES] [N] [EVERY] [BACKEND]
        TREE: a folder with sim/ and assets/ (. for this one; another made by git archive, as bench/tree_ab.sh
        says); FRAMES 2000, N 1000000 balls of the block preset, the grid variant, a line every EVERY (100)
        frames: the median of the frames since the last line and their slowest, in ms, the median of their
        proximity stage (the scene's stage timer: CUDA events on the GPU, ms a frame), then the last pass's
        tests a ball; BACKEND gpu (cpu: the same lines, slowly)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator


def lines(frames: int, n: int, every: int, backend: str) -> Iterator[str]:
    """One line every ``every`` frames (and the last), from the ``sim`` on the path."""
    import numpy as np

    from sim.registry import create_scene

    scene = create_scene("balls", preset="block", n=n, backend=backend, variant="grid")
    times: list[float] = []
    for frame in range(frames):
        started = time.perf_counter()
        scene.advance_frame()
        scene.finish()
        times.append((time.perf_counter() - started) * 1e3)
        if frame % every == 0 or frame == frames - 1:
            stats = scene.stats()
            recent = times[-every:] if frame else times
            scene.timer.flush()  # the GPU's stage times are read a frame late
            proximity = scene.timer.history("proximity")[-len(recent) :]
            yield (
                f"frame {frame:5d} step {stats['steps']:6d} n {stats['n']:8d} ms {np.median(recent):7.3f} "
                f"max {max(recent):7.3f} proximity {np.median(proximity):7.3f} "
                f"tests/ball {stats['tests_per_ball']:7.2f}"
            )
            times.clear()


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 5:
        print(__doc__, file=sys.stderr)
        return 2
    tree, frames, n, every, backend = (*argv, *("2000", "1000000", "100", "gpu")[len(argv) - 1 :])
    sys.path.insert(0, tree)
    for line in lines(int(frames), int(n), int(every), backend):
        print(f"{tree} {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
