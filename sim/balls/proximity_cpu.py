"""The z-sorted proximity pass on the CPU (numba): the twin of the GPU kernels.

1. keys: z_max = (z + |vz|*T) + r and z_min = (z - |vz|*T) - r, in float32.
2. sort balls by z_max ascending (stable): ``order[idx]`` is the ball at sorted position idx.
3. for each sorted idx9, scan idx1 = idx9-1, idx9-2, ... while z_max[idx1] >= z_min[idx9].
4. each scanned idx1 is one test: |p1 - p9| - T*|v1 - v9| <= margin*(r1 + r9), all in float32,
   each operation rounded on its own (no fused multiply-add), so the GPU twin can match exactly.

Pairs are written as (ball of idx9, ball of idx1).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange


@numba.njit(cache=True, parallel=True)
def compute_keys(pos, vel, lifetime):
    n = pos.shape[0]
    z_max = np.empty(n, np.float32)
    z_min = np.empty(n, np.float32)
    t = np.float32(lifetime)
    for i in prange(n):
        reach = abs(vel[i, 2]) * t
        z_max[i] = (pos[i, 2] + reach) + pos[i, 3]
        z_min[i] = (pos[i, 2] - reach) - pos[i, 3]
    return z_max, z_min


@numba.njit(inline="always")
def in_proximity(pos, vel, a, b, t, margin):
    dx = pos[a, 0] - pos[b, 0]
    dy = pos[a, 1] - pos[b, 1]
    dz = pos[a, 2] - pos[b, 2]
    ux = vel[a, 0] - vel[b, 0]
    uy = vel[a, 1] - vel[b, 1]
    uz = vel[a, 2] - vel[b, 2]
    dist = np.sqrt(dx * dx + dy * dy + dz * dz)
    speed = np.sqrt(ux * ux + uy * uy + uz * uz)
    return dist - t * speed <= margin * (pos[a, 3] + pos[b, 3])


@numba.njit(cache=True, parallel=True)
def sweep_flags(order, first, offsets, pos, vel, lifetime, margin, flags):
    """Test every (idx9, idx1) of every window; flags[offsets[idx9] + k] is the k-th test of idx9
    (idx1 = idx9 - 1 - k, scanning downward as the seed's kernel does)."""
    t = np.float32(lifetime)
    m = np.float32(margin)
    for idx9 in prange(order.shape[0]):
        b9 = order[idx9]
        base = offsets[idx9]
        for k in range(idx9 - first[idx9]):
            flags[base + k] = in_proximity(pos, vel, order[idx9 - 1 - k], b9, t, m)


def sort_by_zmax(z_max: np.ndarray) -> np.ndarray:
    """Stable ascending order of z_max (ties keep ball index order)."""
    return np.argsort(z_max, kind="stable").astype(np.int64)


def proximity_pass(pos, vel, lifetime, margin, timer=None):
    """Keys, sort and sweep. Returns (pairs (m, 2) int64, tests, pairs count).

    The z_max are sorted, so the balls a sweep from idx9 scans (down to the first z_max below
    z_min[idx9]) are exactly idx1 in [first, idx9), first = the first z_max >= z_min[idx9]: the
    windows are found by binary search, then every test runs once, in parallel.
    """
    import contextlib

    def stage(name):
        return timer.stage(name) if timer is not None else contextlib.nullcontext()

    with stage("sort"):
        z_max, z_min = compute_keys(pos, vel, lifetime)
        order = sort_by_zmax(z_max)
        z_max_sorted = z_max[order]
        z_min_sorted = z_min[order]
    with stage("proximity"):
        n = order.shape[0]
        first = np.minimum(np.searchsorted(z_max_sorted, z_min_sorted, side="left"), np.arange(n))
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(np.arange(n) - first, out=offsets[1:])
        flags = np.empty(int(offsets[-1]), np.bool_)
        sweep_flags(order, first, offsets, pos, vel, lifetime, margin, flags)
        hits = np.flatnonzero(flags)
        idx9 = np.searchsorted(offsets, hits, side="right") - 1
        idx1 = idx9 - 1 - (hits - offsets[idx9])
        pairs = np.column_stack([order[idx9], order[idx1]])
    return pairs, int(offsets[-1]), int(hits.shape[0])
