"""How many threads a scene's CPU backend steps on, sized to the problem: one core up to the scene's
``serial_items``, beyond it all the caller allows (numba's all, or an MPI rank's share), set around
each frame's steps (``numba_threads``).

Small problems step on one core: a step there takes a millisecond or less, the viewer's software
renderer needs the other cores, and on a busy machine numba's workers wait for the slowest (balls,
1715 of them on a loaded 2-core machine: 0.4-0.9 ms a step on one thread, 40-80 ms on two; heat, 10
steps at 1000x1000: 1.4 ms on one thread, median 32 ms on two)."""

from __future__ import annotations

from contextlib import contextmanager

import numba


def sized_threads(items: int, serial_items: int) -> int:
    """Threads for a problem of ``items``: one up to ``serial_items``, else as many as this thread has."""
    return 1 if items <= serial_items else numba.get_num_threads()


@contextmanager
def numba_threads(count: int):
    """numba's parallel loops on ``count`` threads while the block runs (this thread's setting)."""
    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(count, numba.config.NUMBA_NUM_THREADS)))  # type: ignore[attr-defined]  # set at import
    try:
        yield
    finally:
        numba.set_num_threads(before)
