"""The z-sorted proximity pass on the CPU (numba): the twin of the GPU kernels.

1. keys: z_max = (z + |vz|*T) + r and z_min = (z - |vz|*T) - r, in float32.
2. sort balls by z_max ascending (stable): ``order[idx]`` is the ball at sorted position idx.
3. for each sorted idx9, scan idx1 = idx9-1, idx9-2, ... while z_max[idx1] >= z_min[idx9].
4. each scanned idx1 is one test: |p1 - p9| - T*|v1 - v9| <= margin*(r1 + r9), all in float32,
   each operation rounded on its own (no fused multiply-add), so the GPU twin can match exactly.

Pairs are written as (ball of idx9, ball of idx1). Two passes over the same windows (count,
then fill at prefix-sum offsets) keep the output exact and ordered without locks.
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
def sweep_count(order, z_max_sorted, z_min_sorted, pos, vel, lifetime, margin):
    """Per sorted index: (tests, pairs) found scanning its z window."""
    n = order.shape[0]
    tests = np.zeros(n, np.int64)
    pairs = np.zeros(n, np.int64)
    t = np.float32(lifetime)
    m = np.float32(margin)
    for idx9 in prange(n):
        b9 = order[idx9]
        lo = z_min_sorted[idx9]
        nt = 0
        npairs = 0
        idx1 = idx9 - 1
        while idx1 >= 0 and z_max_sorted[idx1] >= lo:
            nt += 1
            if in_proximity(pos, vel, order[idx1], b9, t, m):
                npairs += 1
            idx1 -= 1
        tests[idx9] = nt
        pairs[idx9] = npairs
    return tests, pairs


@numba.njit(cache=True, parallel=True)
def sweep_fill(order, z_max_sorted, z_min_sorted, pos, vel, lifetime, margin, offsets, out):
    n = order.shape[0]
    t = np.float32(lifetime)
    m = np.float32(margin)
    for idx9 in prange(n):
        b9 = order[idx9]
        lo = z_min_sorted[idx9]
        k = offsets[idx9]
        idx1 = idx9 - 1
        while idx1 >= 0 and z_max_sorted[idx1] >= lo:
            b1 = order[idx1]
            if in_proximity(pos, vel, b1, b9, t, m):
                out[k, 0] = b9
                out[k, 1] = b1
                k += 1
            idx1 -= 1


def sort_by_zmax(z_max: np.ndarray) -> np.ndarray:
    """Stable ascending order of z_max (ties keep ball index order)."""
    return np.argsort(z_max, kind="stable").astype(np.int64)


def proximity_pass(pos, vel, lifetime, margin, timer=None):
    """Keys, sort and sweep. Returns (pairs (m, 2) int64, tests, pairs count)."""
    import contextlib

    def stage(name):
        return timer.stage(name) if timer is not None else contextlib.nullcontext()

    with stage("sort"):
        z_max, z_min = compute_keys(pos, vel, lifetime)
        order = sort_by_zmax(z_max)
        z_max_sorted = z_max[order]
        z_min_sorted = z_min[order]
    with stage("proximity"):
        tests, counts = sweep_count(order, z_max_sorted, z_min_sorted, pos, vel, lifetime, margin)
        offsets = np.zeros(order.shape[0] + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        pairs = np.empty((int(offsets[-1]), 2), np.int64)
        sweep_fill(order, z_max_sorted, z_min_sorted, pos, vel, lifetime, margin, offsets, pairs)
    return pairs, int(tests.sum()), int(offsets[-1])
