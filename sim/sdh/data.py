"""The course's atoms: glibc rand() after srand(seed), x, y, z = rand() / RAND_MAX * 23000 in turn."""

from __future__ import annotations

import numpy as np

from sim.crand import RAND_MAX, glibc_rand

BOX_SIZE = 23000.0


def atoms(n: int, seed: int = 1) -> np.ndarray:
    """(n, 3) float64 coordinates in the course's order of draws (x, then y, then z, per atom)."""
    draws = glibc_rand(seed, 3 * n).astype(np.float64)
    return (draws / RAND_MAX * BOX_SIZE).reshape(n, 3)


def bucket_count(width: float) -> int:
    """The course's number of buckets: (int)(23000 * 1.732 / w) + 1."""
    return int(BOX_SIZE * 1.732 / width) + 1


def pair_count(n: int) -> int:
    return n * (n - 1) // 2
