"""The C library's random generators the courses' programs draw from, reimplemented exactly.

glibc ``rand()`` (default TYPE_3 additive feedback) is what the SDH course (after ``srand(1)``)
and the DLI heat exercise (no ``srand``: the same as ``srand(1)``) use for their inputs.
"""

from __future__ import annotations

import numba
import numpy as np

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
