"""The heat step on the CPU (numba, parallel over rows on every core): the twin every GPU kernel
is checked against.

float32 throughout, in the course's order, without fused multiply-adds (numba without fastmath
does not contract; tests/test_heat_cpu.py checks it bit for bit against C built with
``-ffp-contract=off``). The boundary ring is never written, so both buffers keep it.

A run is cut into chunks of about ``CHUNK_SECONDS`` (whole steps, or bands of rows when one step
is longer than that) so that Python runs between them: Ctrl-C stops any run within a second.
"""

from __future__ import annotations

import time

import numba
import numpy as np
from numba import prange

from sim.cmdline import interrupts

CHUNK_SECONDS = 0.2
FIRST_GUESS = 2e8  # cell updates per second before the first chunk is measured


@numba.njit(cache=True, inline="always")
def _row(tin, tout, tfac, j):
    """Row j of one step from tin into tout (interior cells)."""
    two = np.float32(2)
    for i in range(1, tin.shape[1] - 1):
        c = tin[j, i]
        d2tdx2 = tin[j, i - 1] - two * c + tin[j, i + 1]
        d2tdy2 = tin[j - 1, i] - two * c + tin[j + 1, i]
        tout[j, i] = c + tfac * (d2tdx2 + d2tdy2)


@numba.njit(cache=True, parallel=True)
def _sweep(tin, tout, tfac, j0, j1):
    """Rows j0 <= j < j1 (interior rows only) of one step, rows spread over the cores."""
    for j in prange(j0, j1):
        _row(tin, tout, tfac, j)


@numba.njit(cache=True, parallel=True)
def _steps(a, b, tfac, pairs):
    """``pairs`` times: a -> b, then b -> a (the result stays in a)."""
    nj = a.shape[0]
    for _ in range(pairs):
        for j in prange(1, nj - 1):
            _row(a, b, tfac, j)
        for j in prange(1, nj - 1):
            _row(b, a, tfac, j)


class HeatCpu:
    """The field (nj, ni) float32 and its scratch buffer; ``advance(n)`` runs n steps."""

    def __init__(self, field: np.ndarray, tfac: float):
        field = np.asarray(field)
        if field.ndim != 2 or field.dtype != np.float32:
            raise ValueError(f"the field must be a 2D float32 array, got {field.dtype} {field.shape}")
        self.nj, self.ni = field.shape
        self.tfac = np.float32(tfac)
        self.field = np.array(field, order="C")  # the current state
        self._scratch = self.field.copy()  # same boundary in both buffers
        self.steps_done = 0
        self._rate = FIRST_GUESS

    def load(self, field) -> None:
        """Replace the state with ``field`` ((nj, ni) float32) in both buffers, the boundary ring too (a step
        computed elsewhere, such as a user's kernel)."""
        if np.shape(field) != (self.nj, self.ni):
            raise ValueError(f"field shape {np.shape(field)} is not ({self.nj}, {self.ni})")
        self.field[...] = field
        self._scratch[...] = field

    def _step_banded(self) -> None:
        """One step in bands of rows, each about CHUNK_SECONDS."""
        rows = max(1, int(self._rate * CHUNK_SECONDS / max(self.ni, 1)))
        for j0 in range(1, self.nj - 1, rows):
            _sweep(self.field, self._scratch, self.tfac, j0, min(j0 + rows, self.nj - 1))
        self.field, self._scratch = self._scratch, self.field
        self.steps_done += 1

    def advance(self, steps: int, progress=None) -> None:
        """``steps`` steps (0 is fine); ``progress(done, steps)`` after each chunk."""
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        cells = max(1, (self.ni - 2) * (self.nj - 2))
        done = 0
        while done < steps:
            start = time.perf_counter()
            if cells > self._rate * CHUNK_SECONDS:
                count = 1
                self._step_banded()
            else:
                count = min(steps - done, max(1, int(self._rate * CHUNK_SECONDS / cells)))
                if count > 1:
                    _steps(self.field, self._scratch, self.tfac, count // 2)
                    self.steps_done += count // 2 * 2
                if count % 2:
                    _sweep(self.field, self._scratch, self.tfac, 1, self.nj - 1)
                    self.field, self._scratch = self._scratch, self.field
                    self.steps_done += 1
            seconds = time.perf_counter() - start
            if seconds > 0.02:  # long enough to measure (the first call also compiles)
                self._rate = cells * count / seconds
            done += count
            if progress:
                progress(done, steps)
            interrupts.check()

    def paint(self, x: float, y: float, radius: float, value: float) -> int:
        """Cells with (i - x)^2 + (j - y)^2 <= radius^2 take ``value`` in both buffers; returns how many."""
        box = paint_box(self.ni, self.nj, x, y, radius)
        if box is None:
            return 0
        i0, j0, w, h = box
        mask = paint_mask(i0, j0, w, h, x, y, radius)
        for buffer in (self.field, self._scratch):
            buffer[j0 : j0 + h, i0 : i0 + w][mask] = np.float32(value)
        return int(mask.sum())


def paint_box(ni: int, nj: int, x: float, y: float, radius: float) -> tuple[int, int, int, int] | None:
    """(i0, j0, width, height) of the cells a paint can touch, clipped to the grid; None if none."""
    if not (np.isfinite(x) and np.isfinite(y) and np.isfinite(radius)) or radius < 0:
        raise ValueError(f"paint needs a finite centre and radius >= 0, got ({x}, {y}) r={radius}")
    i0, i1 = max(0, int(np.floor(x - radius))), min(ni - 1, int(np.ceil(x + radius)))
    j0, j1 = max(0, int(np.floor(y - radius))), min(nj - 1, int(np.ceil(y + radius)))
    if i0 > i1 or j0 > j1:
        return None
    return i0, j0, i1 - i0 + 1, j1 - j0 + 1


def paint_mask(i0: int, j0: int, w: int, h: int, x: float, y: float, radius: float) -> np.ndarray:
    """(h, w) bool: which cells of the box are painted (float64, the GPU's paint kernel rounds alike)."""
    dx = np.arange(i0, i0 + w, dtype=np.float64) - np.float64(x)
    dy = np.arange(j0, j0 + h, dtype=np.float64) - np.float64(y)
    return (dx * dx)[None, :] + (dy * dy)[:, None] <= np.float64(radius) * np.float64(radius)
