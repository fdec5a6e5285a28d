"""The C library's random generators the courses' programs draw from, reimplemented exactly.

glibc ``rand()`` (default TYPE_3 additive feedback) is what the SDH course (after ``srand(1)``)
and the DLI heat exercise (no ``srand``: the same as ``srand(1)``) use for their inputs.
"""

from __future__ import annotations

import numba
import numpy as np

from sim.cmdline import interrupts

RAND_MAX = 2147483647


CHUNK = 1 << 22  # outputs per compiled call: a few milliseconds, so Ctrl-C stops a long draw promptly


@numba.njit(cache=True)
def _seeded(seed: int) -> np.ndarray:
    """glibc's state after srand(seed) and the 310 discarded outputs: the last 34 words r[310..343]."""
    r = np.empty(344, np.int64)
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
    for i in range(34, 344):
        r[i] = (r[i - 31] + r[i - 3]) & 0xFFFFFFFF
    return r[310:].copy()


@numba.njit(cache=True)
def _draw(history: np.ndarray, out: np.ndarray) -> None:
    """The next len(out) outputs after ``history`` (the last 34 state words, updated in place)."""
    m = out.shape[0]
    r = np.empty(34 + m, np.int64)
    r[:34] = history
    for i in range(34, 34 + m):
        r[i] = (r[i - 31] + r[i - 3]) & 0xFFFFFFFF
    for k in range(m):
        out[k] = r[34 + k] >> 1
    history[:] = r[m : m + 34]


def glibc_rand(seed: int, count: int) -> np.ndarray:
    """The first ``count`` outputs of glibc's rand() (TYPE_3 additive feedback) after srand(seed),
    drawn in chunks (interruptible between them)."""
    history = _seeded(int(seed))
    out = np.empty(int(count), np.int64)
    for start in range(0, out.shape[0], CHUNK):
        _draw(history, out[start : start + CHUNK])
        interrupts.check()
    return out
