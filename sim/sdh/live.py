"""Live 2-body statistics of a scene: the distance histogram and g(r) of its current points.

On the GPU backend the scene's positions stay on the device and go through the fast kernel; on
the CPU through the numba histogram. g(r) divides each bucket by the count an ideal gas of the
same size would put there in the points' bounding box (a box for balls, a rectangle for the 2D
particles), its walls included (``ideal``): uniform points give g(r) = 1 out to where too few pairs
remain to tell.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from sim.sdh import ideal, sdh_cpu


@dataclass
class Histogram:
    counts: np.ndarray  # int64, one per bucket
    width: float
    g: np.ndarray  # g(r) of the leading buckets, as far as an ideal gas puts enough pairs to measure it
    ms: float  # time to compute
    backend: str

    @property
    def centres(self) -> np.ndarray:
        return (np.arange(self.counts.shape[0]) + 0.5) * self.width


def distance_histogram(points, dims: int, width: float, max_buckets: int = 400) -> Histogram:
    """The histogram of all pair distances of ``points`` ((n, 3), numpy or CuPy: counted where they
    are), buckets of ``width`` up to the longest pair; g(r) over a region of ``dims`` dimensions."""
    if not width > 0 or not math.isfinite(width):
        raise ValueError(f"bucket width must be positive, got {width}")
    n = points.shape[0]
    on_gpu = not isinstance(points, np.ndarray)
    if on_gpu:
        import cupy as xp
    else:
        xp = np
    lo, hi = xp.min(points, axis=0) if n else xp.zeros(3), xp.max(points, axis=0) if n else xp.zeros(3)
    extent = [float(v) for v in (hi - lo)]
    diagonal = math.sqrt(sum(e * e for e in extent))
    buckets = max(1, min(max_buckets, int(diagonal / width) + 1))
    start = time.perf_counter()
    if n < 2:
        counts = np.zeros(buckets, np.int64)
    elif on_gpu:
        from sim.sdh import gpu

        counts, _ = gpu.histogram(points.astype(xp.float64), width, buckets, "fast", 128)
    else:
        counts = sdh_cpu.histogram(np.asarray(points, np.float64), width, buckets)
    ms = (time.perf_counter() - start) * 1e3
    sides = extent[:dims]
    g = ideal.pair_correlation(counts, ideal.ideal_pairs(n, sides, width, buckets)) if min(sides) > 0 else np.zeros(0)
    return Histogram(counts, width, g, ms, "gpu" if on_gpu else "cpu")
