"""The course's atoms: glibc rand() after srand(seed), x, y, z = rand() / RAND_MAX * 23000 in turn."""

from __future__ import annotations

import numpy as np

from sim.cli import UsageError
from sim.crand import RAND_MAX, glibc_rand

BOX_SIZE = 23000.0
MAX_BUCKETS = 1_000_000  # more would print megabytes of zeros and thrash the per-thread histograms
MIN_WIDTH = BOX_SIZE * 1.732 / MAX_BUCKETS  # the smallest bucket width within MAX_BUCKETS (about 0.0398)
ATOM_BYTES = 48  # peak host bytes per atom while the atoms are drawn (int64 draws, then float64 in place)


class WidthError(UsageError, ValueError):
    """A bucket width that is not a positive number or makes more than MAX_BUCKETS buckets (exit 2)."""


def atoms(n: int, seed: int = 1) -> np.ndarray:
    """(n, 3) float64 coordinates in the course's order of draws (x, then y, then z, per atom)."""
    draws = glibc_rand(seed, 3 * n).astype(np.float64)
    draws /= RAND_MAX  # in place: the same arithmetic as draws / RAND_MAX * BOX_SIZE, half the memory
    draws *= BOX_SIZE
    return draws.reshape(n, 3)


def bucket_count(width: float) -> int:
    """The course's number of buckets: (int)(23000 * 1.732 / w) + 1; WidthError beyond MAX_BUCKETS."""
    if not 0 < width < float("inf"):
        raise WidthError(f"bucket width must be positive, got {width}")
    buckets = BOX_SIZE * 1.732 / width + 1  # float: a tiny width gives inf, not an exception
    if buckets > MAX_BUCKETS:
        raise WidthError(f"bucket width {width:g} makes {buckets:.4g} buckets; at most {MAX_BUCKETS:,} "
                         f"(a width of at least {MIN_WIDTH:.4g})")
    return int(BOX_SIZE * 1.732 / width) + 1


def pair_count(n: int) -> int:
    return n * (n - 1) // 2
