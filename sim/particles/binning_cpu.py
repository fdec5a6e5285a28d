"""One CS 267 step on the CPU with O(n) binning (numba), bit-identical to the O(n^2) starter.

The starter adds, for each particle i, the force of every j in increasing j, in float64 without
fused multiply-add. Here each particle gathers the particles of its 9 neighbour bins (each at
least a cutoff wide), puts them in increasing index order, and adds the same forces in the same
order: the same sums, so the same bits. Its own pair, which adds coef * 0 (no bit of a sum that starts at
+0 changes), is left out: it was the one pair within the cutoff that most particles have, and each costs a
square root and three divisions. Bins are a counting sort (members in index order).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from sim.particles.world import CUTOFF, DT, MASS, MIN_R


def bin_count(size: float) -> int:
    """Bins per side: as many as fit with each at least a cutoff wide."""
    return max(1, int(size / CUTOFF))


@numba.njit(cache=True)
def sort_into_bins(x, y, size, nbins):
    """(bin of each particle, bin start offsets (nbins^2 + 1), members by bin in index order)."""
    n = x.shape[0]
    width = size / nbins
    bins = np.empty(n, np.int64)
    start = np.zeros(nbins * nbins + 1, np.int64)
    for i in range(n):
        bx = min(int(x[i] / width), nbins - 1)
        by = min(int(y[i] / width), nbins - 1)
        b = by * nbins + bx
        bins[i] = b
        start[b + 1] += 1
    for b in range(nbins * nbins):
        start[b + 1] += start[b]
    # Each bin filled from its end, the particles in decreasing index: members in index order. start[b + 1] is
    # the cursor (no second array of nbins^2: bins a cutoff wide are about 5 a particle), left at bin b's start.
    members = np.empty(n, np.int64)
    for i in range(n - 1, -1, -1):
        b = bins[i]
        start[b + 1] -= 1
        members[start[b + 1]] = i
    for b in range(nbins * nbins):
        start[b] = start[b + 1]
    start[nbins * nbins] = n
    return bins, start, members


@numba.njit(inline="always")
def apply_force(xi, yi, xj, yj, ax, ay):
    """The starter's apply_force: returns the new (ax, ay) and r2 (unclamped; > cutoff^2: no force)."""
    dx = xj - xi
    dy = yj - yi
    r2 = dx * dx + dy * dy
    if r2 > CUTOFF * CUTOFF:
        return ax, ay, r2
    r2c = max(r2, MIN_R * MIN_R)
    r = np.sqrt(r2c)
    coef = (1 - CUTOFF / r) / r2c / MASS
    return ax + coef * dx, ay + coef * dy, r2


@numba.njit(cache=True, parallel=True)
def _forces(x, y, ax, ay, nbins, bins, start, members, dmin_out, dsum_out, dcount_out, chunks):
    n = x.shape[0]
    # positions in bin order, so that a bin's neighbours are read from nearby memory
    xs = np.empty(n)
    ys = np.empty(n)
    for m in prange(n):
        xs[m] = x[members[m]]
        ys[m] = y[members[m]]
    widest = 0  # the fullest bin: nine of them bound a particle's neighbour list
    for b in range(nbins * nbins):
        widest = max(widest, start[b + 1] - start[b])
    near_j = np.empty((chunks, 9 * widest), np.int64)  # each chunk of particles has its own lists
    near_x = np.empty((chunks, 9 * widest))
    near_y = np.empty((chunks, 9 * widest))
    for chunk in prange(chunks):
        nj = near_j[chunk]
        nx = near_x[chunk]
        ny = near_y[chunk]
        for m9 in range(chunk * n // chunks, (chunk + 1) * n // chunks):  # particles in bin order
            i = members[m9]
            bx = bins[i] % nbins
            by = bins[i] // nbins
            total = 0
            for cy in range(max(by - 1, 0), min(by + 2, nbins)):
                for cx in range(max(bx - 1, 0), min(bx + 2, nbins)):
                    b = cy * nbins + cx
                    for m in range(start[b], start[b + 1]):
                        j = members[m]
                        if j == i:  # its own pair adds coef * 0: no bit of a sum that starts at +0 changes
                            continue
                        k = total  # insertion: keep increasing j, the order the starter adds them in
                        while k > 0 and nj[k - 1] > j:
                            nj[k] = nj[k - 1]
                            nx[k] = nx[k - 1]
                            ny[k] = ny[k - 1]
                            k -= 1
                        nj[k] = j
                        nx[k] = xs[m]
                        ny[k] = ys[m]
                        total += 1
            fx = 0.0
            fy = 0.0
            dmin = 1.0
            dsum = 0.0
            dcount = 0
            xi = x[i]
            yi = y[i]
            for m in range(total):
                fx, fy, r2 = apply_force(xi, yi, nx[m], ny[m], fx, fy)
                if r2 <= CUTOFF * CUTOFF and r2 != 0.0:
                    if r2 / (CUTOFF * CUTOFF) < dmin * dmin:
                        dmin = np.sqrt(r2) / CUTOFF
                    dsum += np.sqrt(r2) / CUTOFF
                    dcount += 1
            ax[i] = fx
            ay[i] = fy
            dmin_out[i] = dmin
            dsum_out[i] = dsum
            dcount_out[i] = dcount


def forces(x, y, ax, ay, nbins, bins, start, members, dmin_out, dsum_out, dcount_out):
    """Accelerations, plus per-particle distance statistics (the starters' absmin / absavg)."""
    chunks = 8 * numba.get_num_threads()  # each chunk of particles has its own scratch list
    _forces(x, y, ax, ay, nbins, bins, start, members, dmin_out, dsum_out, dcount_out, chunks)


@numba.njit(cache=True, parallel=True)
def move(x, y, vx, vy, ax, ay, size):
    """Semi-implicit Euler, then reflect off the walls as often as needed."""
    for i in prange(x.shape[0]):
        vx[i] += ax[i] * DT
        vy[i] += ay[i] * DT
        x[i] += vx[i] * DT
        y[i] += vy[i] * DT
        while x[i] < 0 or x[i] > size:
            x[i] = -x[i] if x[i] < 0 else 2 * size - x[i]
            vx[i] = -vx[i]
        while y[i] < 0 or y[i] > size:
            y[i] = -y[i] if y[i] < 0 else 2 * size - y[i]
            vy[i] = -vy[i]
