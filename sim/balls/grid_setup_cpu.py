"""The grid's setup on the CPU: the twin of grid_setup.cuh, bit for bit (the same float32 operations in the same
order, the same sample of the balls, the same histograms and cuts).

Cells are at the predicate's reach, 2*margin*r_max + 2*T*v_max with 1% to spare. Where the speed alone could
make them ``SPLIT_GAIN`` of their side or less, the balls faster than all but ``live >> FAST_SHIFT`` of a sample
are split off: fine cells at the slow balls' reach and coarse ones at the full reach for the fast balls (where
that makes the fine cells that much smaller). Where the box needs more than ``max_cells`` cells it is trimmed of
a few outlying balls, which count in its boundary cells; only where even that does not fit do the cells grow.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sim.balls.kernels import FAST_SHIFT, SETUP_BINS, SETUP_SAMPLES, SPLIT_GAIN, TRIM_SHIFTS

f = np.float32


class GridShape(NamedTuple):
    origin: np.ndarray  # (3,) float32
    cell: np.float32  # the fine cells' side (every ball's where the grid is not split)
    dims: np.ndarray  # (3,) int64
    fast2: np.float32  # a ball whose speed squared is above it is fast (inf: no split)
    coarse: np.float32  # the fast balls' cells' side (0: no split)
    coarse_dims: np.ndarray  # (3,) int64 (zeros: no split)

    @property
    def split(self) -> bool:
        return bool(self.coarse > 0)


def _cell_side(reach):
    return f(reach * f(1.01) + f(1e-6))


def box_dims(lo: np.ndarray, hi: np.ndarray, cell) -> np.ndarray:
    return ((hi - lo) / cell).astype(np.int64) + 1


def _fits(lo, hi, cell, max_cells: int) -> bool:
    return int(np.prod(box_dims(lo, hi, cell))) <= max_cells


def _bins(values: np.ndarray, lo, scale) -> np.ndarray:
    x = (values - lo) * scale
    return np.where(x >= f(1), np.minimum(x, f(SETUP_BINS - 1)), f(0)).astype(np.int64)


def speed_squared(vel: np.ndarray) -> np.ndarray:
    return vel[:, 0] * vel[:, 0] + vel[:, 1] * vel[:, 1] + vel[:, 2] * vel[:, 2]


def grid_shape(
    pos: np.ndarray, vel: np.ndarray, lifetime: float, margin: float, max_cells: int, fast_shift: int = FAST_SHIFT
) -> GridShape:
    """The grid grid_setup.cuh chooses for these balls (all live: the twin drops no fallen ones); another
    ``fast_shift`` than the build's is the grid a build with that cut would choose."""
    lo = pos[:, :3].min(axis=0).astype(f)
    hi = pos[:, :3].max(axis=0).astype(f)
    max_radius, fastest2 = f(pos[:, 3].max()), f(speed_squared(vel).max())
    t = f(lifetime)
    rest = f(2) * f(margin) * max_radius
    full = _cell_side(rest + f(2) * t * np.sqrt(fastest2))
    cell, fast2, coarse = full, f(np.inf), f(0)
    may_split = _cell_side(rest) < f(SPLIT_GAIN) * full
    if may_split or not _fits(lo, hi, full, max_cells):
        n = pos.shape[0]
        at = (np.arange(min(n, SETUP_SAMPLES), dtype=np.int64) * n) // min(n, SETUP_SAMPLES)
        live = pos[at, 1] >= f(-np.inf)  # only NaN is not
        sample, speeds = pos[at][live], speed_squared(vel[at])[live]
        hists = []
        for a in range(3):
            scale = f(SETUP_BINS) / (hi[a] - lo[a]) if hi[a] > lo[a] else f(0)
            hists.append(np.bincount(_bins(sample[:, a], lo[a], scale), minlength=SETUP_BINS))
        if may_split:
            scale = f(SETUP_BINS) / fastest2 if fastest2 > 0 else f(0)
            speed_hist = np.bincount(_bins(speeds, f(0), scale), minlength=SETUP_BINS)
            last, cut, allowed = SETUP_BINS - 1, 0, len(sample) >> fast_shift
            while last > 0 and cut + speed_hist[last] <= allowed:
                cut += speed_hist[last]
                last -= 1
            split2 = fastest2 / f(SETUP_BINS) * f(last + 1)
            fine = _cell_side(rest + f(2) * t * np.sqrt(split2))
            if last < SETUP_BINS - 1 and fine < f(SPLIT_GAIN) * full:
                cell, fast2, coarse = fine, split2, full
        if not _fits(lo, hi, cell, max_cells):
            lo, hi = _trimmed_box(hists, len(sample), lo, hi, cell, max_cells)
    while not _fits(lo, hi, cell, max_cells):
        cell = f(cell * f(1.25))
    coarse_dims = np.zeros(3, np.int64)
    if coarse > 0:  # no finer than the fine cells
        coarse = max(coarse, cell)
        coarse_dims = box_dims(lo, hi, coarse)
    return GridShape(lo, cell, box_dims(lo, hi, cell), fast2, coarse, coarse_dims)


def _trimmed_box(hists, live: int, lo: np.ndarray, hi: np.ndarray, cell, max_cells: int):
    """The box with the end bins of the sample's histograms cut, per axis: the least trim of ``TRIM_SHIFTS``
    whose box fits ``max_cells`` cells, else the most."""
    for shift in TRIM_SHIFTS:
        allowed = live >> shift
        box_lo, box_hi = lo.copy(), hi.copy()
        for a, hist in enumerate(hists):
            first, last, cut = 0, SETUP_BINS - 1, 0
            while first < last and cut + hist[first] <= allowed:
                cut += hist[first]
                first += 1
            cut = 0
            while last > first and cut + hist[last] <= allowed:
                cut += hist[last]
                last -= 1
            width = (hi[a] - lo[a]) / f(SETUP_BINS)
            if first:
                box_lo[a] = lo[a] + width * f(first)
            if last != SETUP_BINS - 1:
                box_hi[a] = min(lo[a] + width * f(last + 1), hi[a])
        if _fits(box_lo, box_hi, cell, max_cells):
            break
    return box_lo, box_hi
