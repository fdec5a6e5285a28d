"""The course's atoms: glibc rand() after srand(seed), x, y, z = rand() / RAND_MAX * 23000 in turn."""

from __future__ import annotations

import numpy as np

from sim.cmdline import interrupts
from sim.cmdline.cli import UsageError

BOX_SIZE = 23000.0
MAX_BUCKETS = 1_000_000  # more would print megabytes of zeros and thrash the per-thread histograms
MIN_WIDTH = BOX_SIZE * 1.732 / MAX_BUCKETS  # the smallest bucket width within MAX_BUCKETS (about 0.0398)
ATOM_BYTES = 48  # peak host bytes per atom: glibc_rand's state and its int64 draws (then float64 in place)
CONVERT_CHUNK = 1 << 22  # draws converted to coordinates at a time


class WidthError(UsageError, ValueError):
    """A bucket width that is not a positive number or makes more than MAX_BUCKETS buckets (exit 2)."""


def atoms(n: int, seed: int = 1) -> np.ndarray:
    """(n, 3) float64 coordinates in the course's order of draws (x, then y, then z, per atom).

    The draws are converted to coordinates in place (the int64 buffer reused as float64), a chunk at
    a time: no second buffer to fault in, and Ctrl-C is seen between chunks.
    """
    from sim.crand import RAND_MAX, glibc_rand  # numba: imported where the atoms are drawn, not at start-up

    draws = glibc_rand(seed, 3 * n)
    coords = draws.view(np.float64)
    for start in range(0, draws.shape[0], CONVERT_CHUNK):
        part = slice(start, start + CONVERT_CHUNK)
        chunk = draws[part].astype(np.float64)
        chunk /= RAND_MAX  # the course's rand() / RAND_MAX * 23000, each step rounded as before
        chunk *= BOX_SIZE
        coords[part] = chunk
        interrupts.check()
    return coords.reshape(n, 3)


def bucket_count(width: float) -> int:
    """The course's number of buckets: (int)(23000 * 1.732 / w) + 1; WidthError beyond MAX_BUCKETS."""
    if not 0 < width < float("inf"):
        raise WidthError(f"bucket width must be positive, got {width}")
    buckets = BOX_SIZE * 1.732 / width + 1  # float: a tiny width gives inf, not an exception
    if buckets > MAX_BUCKETS:
        raise WidthError(
            f"bucket width {width:g} makes {buckets:.4g} buckets; at most {MAX_BUCKETS:,} "
            f"(a width of at least {MIN_WIDTH:.4g})"
        )
    return int(BOX_SIZE * 1.732 / width) + 1


def pair_count(n: int) -> int:
    return n * (n - 1) // 2
