"""The grid proximity search on the CPU (numba): the twin of proximity.cu's VARIANT_GRID.

Unlike the z-sweep, it finds every pair the predicate accepts (the brute-force answer): cells
are cubes at least as wide as the predicate's largest reach, 2*margin*r_max + 2*T*v_max, so any
accepted pair lies in neighbouring cells. The grid is the one the GPU's setup chooses
(``grid_setup_cpu``), numbered x fastest: a box trimmed of far-splashed balls, which count in its boundary
cells. Where the GPU splits off the fast balls (fine cells for the slow ones, coarse cells of the full reach
for the fast ones, grid_fast.cuh), the twin searches every ball over the coarse cells: the same pairs, more
tests. A counting sort groups balls by cell and each ball tests the balls of its 27 neighbour cells: nine
runs of three adjacent cells.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from sim.balls.grid_setup_cpu import grid_shape
from sim.balls.kernels import grid_max_cells
from sim.balls.proximity_cpu import in_proximity


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
    shape = grid_shape(pos, vel, lifetime, margin, grid_max_cells(n))
    origin, cell, dims = (shape.origin, shape.coarse, shape.coarse_dims) if shape.split else shape[:3]
    cells, cell_end, cell_count, members = _sort_by_cell(pos, origin, cell, dims)
    args = (pos, vel, lifetime, margin, cells, dims, cell_end, cell_count, members)
    counts, tests = _search(*args, True, np.zeros(1, np.int64), np.empty((0, 2), np.int64))
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    pairs = np.empty((int(offsets[-1]), 2), np.int64)
    _search(*args, False, offsets, pairs)
    return pairs, int(tests.sum()), int(offsets[-1])
