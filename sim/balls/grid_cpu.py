"""The grid proximity search on the CPU (numba): the twin of proximity.cu's VARIANT_GRID.

Unlike the z-sweep, it finds every pair the predicate accepts (the brute-force answer): cells
are cubes at least as wide as the predicate's largest reach, 2*margin*r_max + 2*T*v_max, so any
accepted pair lies in neighbouring cells. The grid covers the balls' bounding box, numbered x
fastest; where that box would need more than ``max_cells`` cells (balls splashed far from the heap) it
covers a box trimmed of a few outlying balls, which count in its boundary cells, and only where even that
does not fit do the cells grow. A counting sort
groups balls by cell and each ball tests the balls of its 27 neighbour cells: nine runs of three
adjacent cells.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from sim.balls.kernels import SETUP_BINS, SETUP_SAMPLES, TRIM_SHIFTS
from sim.balls.proximity_cpu import in_proximity


def max_cells_for(n: int) -> int:
    return max(2 * n, 64)


def grid_shape(pos: np.ndarray, vel: np.ndarray, lifetime: float, margin: float, max_cells: int):
    """(origin (3,), cell side, dims (3,)) as the GPU's grid_setup chooses them: the box trimmed where it needs
    more than ``max_cells`` cells, then cells grown where even the trimmed box does."""
    lo = pos[:, :3].min(axis=0).astype(np.float32)
    hi = pos[:, :3].max(axis=0).astype(np.float32)
    speed = np.sqrt(np.float32((vel[:, :3] * vel[:, :3]).sum(axis=1).max()))
    f = np.float32
    reach = f(2) * f(margin) * pos[:, 3].max() + f(2) * f(lifetime) * speed
    cell = f(reach * f(1.01) + f(1e-6))
    if int(np.prod(_box_dims(lo, hi, cell))) > max_cells:
        lo, hi = _trimmed_box(pos, lo, hi, cell, max_cells)
    while True:
        dims = _box_dims(lo, hi, cell)
        if int(np.prod(dims)) <= max_cells:
            return lo, cell, dims
        cell = f(cell * f(1.25))


def _box_dims(lo: np.ndarray, hi: np.ndarray, cell) -> np.ndarray:
    return ((hi - lo) / cell).astype(np.int64) + 1


def _trimmed_box(pos: np.ndarray, lo: np.ndarray, hi: np.ndarray, cell, max_cells: int):
    """The box with the end bins of a sample's histogram cut, per axis: the least trim of ``TRIM_SHIFTS`` whose
    box fits ``max_cells`` cells, else the most (grid.cuh, grid_setup)."""
    f = np.float32
    n = pos.shape[0]
    samples = min(n, SETUP_SAMPLES)
    sample = pos[(np.arange(samples, dtype=np.int64) * n) // samples, :3]
    sample = sample[sample[:, 1] >= -np.inf]  # live: the twin drops no fallen balls, only NaN
    hists = []
    for a in range(3):
        scale = f(SETUP_BINS) / (hi[a] - lo[a]) if hi[a] > lo[a] else f(0)
        x = (sample[:, a] - lo[a]) * scale
        bins = np.where(x >= f(1), np.minimum(x, f(SETUP_BINS - 1)), f(0)).astype(np.int64)
        hists.append(np.bincount(bins, minlength=SETUP_BINS))
    for shift in TRIM_SHIFTS:
        allowed = sample.shape[0] >> shift
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
        if int(np.prod(_box_dims(box_lo, box_hi, cell))) <= max_cells:
            break
    return box_lo, box_hi


@numba.njit(cache=True)
def _sort_by_cell(pos, origin, cell, dims):
    n = pos.shape[0]
    cells = np.empty((n, 3), np.int64)
    cell_count = np.zeros(dims[0] * dims[1] * dims[2], np.int64)
    ids = np.empty(n, np.int64)
    for i in range(n):
        for a in range(3):
            c = np.int64(np.floor((pos[i, a] - origin[a]) / cell))
            cells[i, a] = min(max(c, 0), dims[a] - 1)
        ids[i] = (cells[i, 2] * dims[1] + cells[i, 1]) * dims[0] + cells[i, 0]
        cell_count[ids[i]] += 1
    cell_end = np.cumsum(cell_count)
    fill = cell_end - cell_count
    members = np.empty(n, np.int64)
    for i in range(n):
        members[fill[ids[i]]] = i
        fill[ids[i]] += 1
    return cells, cell_end, cell_count, members


@numba.njit(cache=True, parallel=True)
def _search(pos, vel, lifetime, margin, cells, dims, cell_end, cell_count, members, counts_only, offsets, out):
    n = pos.shape[0]
    t = np.float32(lifetime)
    m = np.float32(margin)
    found = np.zeros(n, np.int64)
    tests = np.zeros(n, np.int64)
    for i in prange(n):
        k = 0 if counts_only else offsets[i]
        x0 = max(cells[i, 0] - 1, 0)
        x1 = min(cells[i, 0] + 1, dims[0] - 1)
        for z in range(max(cells[i, 2] - 1, 0), min(cells[i, 2] + 1, dims[2] - 1) + 1):
            for y in range(max(cells[i, 1] - 1, 0), min(cells[i, 1] + 1, dims[1] - 1) + 1):
                first = (z * dims[1] + y) * dims[0] + x0
                last = (z * dims[1] + y) * dims[0] + x1
                for idx in range(cell_end[first] - cell_count[first], cell_end[last]):
                    j = members[idx]
                    if j == i:
                        continue
                    tests[i] += 1
                    if j < i and in_proximity(pos, vel, j, i, t, m):
                        found[i] += 1
                        if not counts_only:
                            out[k, 0] = i
                            out[k, 1] = j
                            k += 1
    return found, tests


def grid_pass(pos, vel, lifetime, margin):
    """Every accepted pair once, as (larger index, smaller index); plus tests and pair count."""
    n = pos.shape[0]
    if n == 0:
        return np.empty((0, 2), np.int64), 0, 0
    origin, cell, dims = grid_shape(pos, vel, lifetime, margin, max_cells_for(n))
    cells, cell_end, cell_count, members = _sort_by_cell(pos, origin, cell, dims)
    args = (pos, vel, lifetime, margin, cells, dims, cell_end, cell_count, members)
    counts, tests = _search(*args, True, np.zeros(1, np.int64), np.empty((0, 2), np.int64))
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    pairs = np.empty((int(offsets[-1]), 2), np.int64)
    _search(*args, False, offsets, pairs)
    return pairs, int(tests.sum()), int(offsets[-1])
