"""The exact distance histogram on the CPU (numba, parallel), as the course computes it.

A pair's bucket is (int)(sqrt(dx*dx + dy*dy + dz*dz) / w) in float64, summed left to right,
without fused multiply-adds. A far-corner pair can land one bucket past the course's last bucket
(its 1.732 is below sqrt 3): such pairs are counted in the last bucket, so the total stays
N(N-1)/2 and nothing is written out of bounds.
"""

from __future__ import annotations

import sys

import numba
import numpy as np
from numba import prange


@numba.njit(cache=True, parallel=True)
def _rows(p, first, last, width, buckets, parts):
    """Pairs (i, j > i) for i in [first, last), split over parts; returns (parts, buckets) counts."""
    n = p.shape[0]
    hist = np.zeros((parts, buckets), np.int64)
    for part in prange(parts):
        for i in range(first + part, last, parts):  # interleaved rows: equal work per part
            xi = p[i, 0]
            yi = p[i, 1]
            zi = p[i, 2]
            for j in range(i + 1, n):
                dx = xi - p[j, 0]
                dy = yi - p[j, 1]
                dz = zi - p[j, 2]
                b = int(np.sqrt(dx * dx + dy * dy + dz * dz) / width)
                hist[part, min(b, buckets - 1)] += 1
    return hist


def histogram(points: np.ndarray, width: float, buckets: int, progress: bool = False) -> np.ndarray:
    """Counts (int64, ``buckets``) of all pair distances; progress on stderr for long runs."""
    p = np.ascontiguousarray(points, np.float64)
    n = p.shape[0]
    parts = 4 * numba.get_num_threads()
    total = np.zeros(buckets, np.int64)
    # rows in batches of about equal pair counts, so progress moves evenly
    pairs = n * (n - 1) // 2
    batch_pairs = max(pairs // 100, 1)
    first = 0
    done = 0
    while first < n:
        last = first
        take = 0
        while last < n and take < batch_pairs:
            take += n - 1 - last
            last += 1
        total += _rows(p, first, last, width, buckets, parts).sum(axis=0)
        done += take
        first = last
        if progress:
            print(f"\r  CPU histogram: {100 * done / max(pairs, 1):5.1f}% of {pairs:,} pairs", end="",
                  file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return total
