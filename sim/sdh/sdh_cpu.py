"""The exact distance histogram on the CPU (numba, parallel), as the course computes it.

A pair's bucket is (int)(sqrt(dx*dx + dy*dy + dz*dz) / w) in float64, summed left to right,
without fused multiply-adds. A far-corner pair can land one bucket past the course's last bucket
(its 1.732 is below sqrt 3): such pairs are counted in the last bucket, so the total stays
N(N-1)/2 and nothing is written out of bounds.

The pairs are counted in tiles (a band of rows against a window of columns) sized to take about
CHUNK_SECONDS each at the measured pace, so Python runs between tiles: Ctrl-C stops a run of any
size within a second, and progress moves evenly.
"""

from __future__ import annotations

import time

import numba
import numpy as np
from numba import prange

from sim.cmdline import interrupts
from sim.sdh import SPEC

PAIRS_PER_SECOND_PER_THREAD = SPEC.pace[0]  # the scene's pace (run and bench estimate with it too)
CHUNK_SECONDS = 0.15  # target time of one tile


@numba.njit(cache=True, parallel=True)
def _tile(p, first, last, lo, hi, width, hist):
    """Adds pairs (i, j) with first <= i < last and max(lo, i + 1) <= j < hi into hist (parts, buckets)."""
    parts, buckets = hist.shape
    for part in prange(parts):
        for i in range(first + part, last, parts):  # interleaved rows: equal work per part
            xi = p[i, 0]
            yi = p[i, 1]
            zi = p[i, 2]
            for j in range(max(lo, i + 1), hi):
                dx = xi - p[j, 0]
                dy = yi - p[j, 1]
                dz = zi - p[j, 2]
                b = int(np.sqrt(dx * dx + dy * dy + dz * dz) / width)
                hist[part, min(b, buckets - 1)] += 1


def tiles(n: int, parts: int, budget):
    """(first, last, lo, hi) tiles covering every pair i < j once, each about ``budget()`` pairs:
    bands of whole rows while rows are short, else ``parts`` rows against windows of columns."""
    i = 0
    while i < n - 1:
        pairs = budget()
        row = n - 1 - i  # pairs of row i
        rows = min(n - 1 - i, max(1, pairs // row))
        if rows >= parts or rows == n - 1 - i:
            yield i, i + rows, 0, n
        else:
            rows = min(parts, n - 1 - i)
            lo = i + 1
            while lo < n:
                hi = min(n, lo + max(1024, budget() // rows))
                yield i, i + rows, lo, hi
                lo = hi
        i += rows


def tile_pairs(n: int, first: int, last: int, lo: int, hi: int) -> int:
    """Pairs in a tile: the sum over its rows i of max(0, hi - max(lo, i + 1))."""
    flat_end = min(last, max(first, lo))  # rows i < lo see the whole window [lo, hi)
    total = (flat_end - first) * max(0, hi - lo)
    a, b = flat_end, min(last, hi - 1)  # rows i >= lo see [i + 1, hi)
    if b > a:
        total += (b - a) * (hi - 1) - (a + b - 1) * (b - a) // 2
    return total


def histogram(points: np.ndarray, width: float, buckets: int, progress=None) -> np.ndarray:
    """Counts (int64, ``buckets``) of all pair distances.

    ``progress``: None, or an object with ``advance(pairs)`` (``sim.cmdline.resources.Progress``), told after
    each tile; True makes one that shows progress on stderr.
    """
    p = np.ascontiguousarray(points, np.float64)
    n = p.shape[0]
    parts = 4 * numba.get_num_threads()
    hist = np.zeros((parts, buckets), np.int64)
    own = progress is True
    if own:
        from sim.cmdline.resources import Progress

        progress = Progress("CPU histogram", n * (n - 1) // 2, "pairs")
    progress = progress or None
    pace = [PAIRS_PER_SECOND_PER_THREAD * numba.get_num_threads() / 8]  # cautious until measured

    def budget() -> int:
        return max(4096, int(pace[0] * CHUNK_SECONDS))

    for first, last, lo, hi in tiles(n, parts, budget):
        start = time.perf_counter()
        _tile(p, first, last, lo, hi, width, hist)
        pairs = tile_pairs(n, first, last, lo, hi)
        seconds = time.perf_counter() - start
        if seconds > 1e-3:  # the first call may include loading the compiled kernel: grow by at most 4x
            pace[0] = min(pairs / seconds, 4 * pace[0])
        if progress is not None:
            progress.advance(pairs)
        interrupts.check()
    if own:
        progress.close()
    return hist.sum(axis=0)
