"""The course's atoms: glibc rand() after srand(seed), x, y, z = rand() / RAND_MAX * 23000 in turn."""

from __future__ import annotations

import numba
import numpy as np

BOX_SIZE = 23000.0
RAND_MAX = 2147483647


@numba.njit(cache=True)
def glibc_rand(seed: int, count: int) -> np.ndarray:
    """The first ``count`` outputs of glibc's rand() (TYPE_3 additive feedback) after srand(seed)."""
    r = np.empty(count + 344, np.int64)
    r[0] = 1 if seed == 0 else seed & 0xFFFFFFFF
    if r[0] >= 1 << 31:  # srand takes an unsigned int; the state word is a signed 32-bit int
        r[0] -= 1 << 32
    for i in range(1, 31):
        # 16807 * r[i-1] mod (2^31 - 1) with signed 32-bit arithmetic (Schrage's method)
        hi = r[i - 1] // 127773 if r[i - 1] >= 0 else -((-r[i - 1]) // 127773)
        lo = r[i - 1] - hi * 127773
        word = 16807 * lo - 2836 * hi
        if word < 0:
            word += 2147483647
        r[i] = word
    for i in range(31, 34):
        r[i] = r[i - 31]
    for i in range(34, count + 344):
        r[i] = (r[i - 31] + r[i - 3]) & 0xFFFFFFFF
    out = np.empty(count, np.int64)
    for k in range(count):
        out[k] = r[k + 344] >> 1
    return out


def atoms(n: int, seed: int = 1) -> np.ndarray:
    """(n, 3) float64 coordinates in the course's order of draws (x, then y, then z, per atom)."""
    draws = glibc_rand(seed, 3 * n).astype(np.float64)
    return (draws / RAND_MAX * BOX_SIZE).reshape(n, 3)


def bucket_count(width: float) -> int:
    """The course's number of buckets: (int)(23000 * 1.732 / w) + 1."""
    return int(BOX_SIZE * 1.732 / width) + 1


def pair_count(n: int) -> int:
    return n * (n - 1) // 2
