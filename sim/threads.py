"""How many threads the heat scene's CPU backend steps on: one core for fields up to ``SERIAL_CELLS``,
numba's all beyond, set around each frame's steps (``numba_threads``)."""

from __future__ import annotations

from contextlib import contextmanager

import numba

# Fields up to this many cells step on one core (a 10-step frame at 1000x1000: ~1.5 ms): the viewer's
# software renderer needs the other cores, and on a busy machine numba's workers wait for the slowest
# (10 steps at 1000x1000 on a loaded 2-core machine: 1.4 ms on one thread, median 32 ms on two).
SERIAL_CELLS = 1 << 22


@contextmanager
def numba_threads(count: int):
    """numba's parallel loops on ``count`` threads while the block runs (this thread's setting)."""
    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(count, numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(before)
