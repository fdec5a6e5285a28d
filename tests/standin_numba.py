"""The stand-in's kernel bodies (tests/standin_kernels.py), compiled by numba: binning.cu's rank kernels
thread by thread in order, on (array, offset) pairs, the offset being where CuPy's pointer would point.
Those that index through a slot check that the slot and its row exist, so a slot or row the rank forgot to
set is an error here, not a wrap.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def bin_of(x, y, inv, nb):
    bx = min(max(int(x * inv), 0), nb - 1)
    by = min(max(int(y * inv), 0), nb - 1)
    return by * nb + bx


@numba.njit(cache=True)
def row(perm, pmo, j, first, rows):
    """perm's entry for slot j: a row in [first, rows) (0 or the positions' room before their pointer, and
    the rows after it)."""
    if pmo + j < 0 or pmo + j >= perm.shape[0]:
        raise IndexError("a slot outside perm")
    k = perm[pmo + j]
    if k < first or k >= rows:
        raise IndexError("a slot whose row is outside the state")
    return k


@numba.njit(cache=True)
def row_read(perm, pmo, j, first, rows, through):
    """Slot j's row as the step reads it: through perm, or by row, which perm must agree with (the rank
    made each slot its own row: its particles by slots_as_rows, its ghosts taken in at their slots)."""
    k = row(perm, pmo, j, first, rows)
    if not through and k != j:
        raise IndexError("a slot read by row that is not its row")
    return k


@numba.njit(cache=True)
def count_bins(p, po, n, inv, nb, b, bo, o, oo, c, co):
    for i in range(n):
        k = bin_of(p[po + i, 0], p[po + i, 1], inv, nb)
        b[bo + i] = k
        o[oo + i] = c[co + k]
        c[co + k] += 1


@numba.njit(cache=True)
def place(b, bo, o, oo, s, so, n, pm, pmo, first):
    for i in range(first, n):
        pm[pmo + s[so + b[bo + i]] + o[oo + i]] = i


@numba.njit(cache=True)
def step(
    p,
    po,
    v,
    vo,
    s,
    so,
    n,
    size,
    inv,
    nb,
    p2,
    p2o,
    v2,
    v2o,
    b,
    bo,
    o,
    oo,
    c,
    co,
    pm,
    pmo,
    d,
    do,
    d2,
    d2o,
    counts,
    first,
    row_lo,
    row_hi,
    s0,
    s1,
    stray,
    sto,
    through,
):
    cutoff, min_r, mass, dt = 0.01, 0.01 / 100, 0.01, 0.0005
    dmin, dsum, pairs = 1.0, 0.0, 0
    rows = p.shape[0] - po
    moved = np.float32(0.0)
    for i in range(first, n):
        me = row_read(pm, pmo, i, 0, rows, through)
        xi, yi = p[po + me, 0], p[po + me, 1]
        k = bin_of(xi, yi, inv, nb)
        bx, by = k % nb, k // nb
        x0, x1 = max(bx - 1, 0), min(bx + 1, nb - 1)
        ax = ay = 0.0
        for cy in range(max(by - 1, row_lo), min(by + 1, row_hi) + 1):
            for j in range(s[so + cy * nb + x0], s[so + cy * nb + x1 + 1]):
                q = row_read(pm, pmo, j, -po, rows, through)
                dx, dy = p[po + q, 0] - xi, p[po + q, 1] - yi
                r2 = dx * dx + dy * dy
                if r2 > cutoff * cutoff or j == i:  # the particle's own slot, skipped as the kernel does
                    continue
                if r2 != 0:
                    dist = np.sqrt(r2) / 0.01
                    dmin = min(dmin, dist)
                    dsum += dist
                    pairs += 1
                r2 = max(r2, min_r * min_r)
                r = np.sqrt(r2)
                coef = (1 - cutoff / r) / r2 / mass
                ax += coef * dx
                ay += coef * dy
        u, w = v[vo + me, 0] + ax * dt, v[vo + me, 1] + ay * dt
        if through:
            d2[d2o + i] = d[do + me]
        px, py = xi + u * dt, yi + w * dt
        while px < 0 or px > size:
            px = -px if px < 0 else 2 * size - px
            u = -u
        while py < 0 or py > size:
            py = -py if py < 0 else 2 * size - py
            w = -w
        p2[p2o + i, 0], p2[p2o + i, 1] = px, py
        v2[v2o + i, 0], v2[v2o + i, 1] = u, w
        if counts:  # (a step that keeps the numbering makes no stray test: the drift margin covers it)
            k = bin_of(px, py, inv, nb)
            b[bo + i] = k
            o[oo + i] = c[co + k]
            c[co + k] += 1
            if not s0 <= k < s1:
                stray[sto] = 1
        moved = max(moved, rounded_up(max(abs(px - xi), abs(py - yi))))
    return dmin, dsum, pairs, moved


@numba.njit(cache=True)
def rounded_up(d):
    """d as a float32 no smaller than d (the kernel's __double2float_ru)."""
    f = np.float32(d)
    return f if f >= d else np.nextafter(f, np.float32(np.inf))


@numba.njit(cache=True)
def pack_ghosts(p, po, pm, pmo, first, count, s, so, bin0, nb, out, oo, seg, sgo):
    for t in range(max(count, nb + 1)):
        if t < count:
            k = row(pm, pmo, first + t, 0, p.shape[0] - po)
            out[oo + t, 0], out[oo + t, 1] = p[po + k, 0], p[po + k, 1]
        if t <= nb:
            seg[sgo + t] = s[so + bin0 + t] - first


@numba.njit(cache=True)
def take_ghosts(pm, pmo, slot0, count, index0, s, so, bin0, b_lo, b_hi, seg, sgo):
    if pmo + slot0 < 0:
        raise IndexError("ghost slots before perm's room")
    for t in range(count):
        pm[pmo + slot0 + t] = index0 + t
    for t in range(b_lo, b_hi + 1):
        s[so + bin0 + t] = seg[sgo + t] + slot0


@numba.njit(cache=True)
def pack_leavers(p, po, v, vo, d, do, pm, pmo, first, count, p2, p2o, v2, v2o, d2, d2o):
    for t in range(count):
        k = row(pm, pmo, first + t, 0, p.shape[0] - po)
        p2[p2o + t, 0], p2[p2o + t, 1] = p[po + k, 0], p[po + k, 1]
        v2[v2o + t, 0], v2[v2o + t, 1] = v[vo + k, 0], v[vo + k, 1]
        d2[d2o + t] = d[do + k]


@numba.njit(cache=True)
def place_arrivals(p, po, k, index0, inv, nb, s, so, bin0, own, ow, from_start, left, lo, pm, pmo):
    for i in range(k):
        b = bin_of(p[po + i, 0], p[po + i, 1], inv, nb)
        x = b - bin0
        if not 0 <= x < nb:
            raise IndexError("an arrival outside the row it was counted in")
        r = left[lo + x]
        left[lo + x] -= 1
        if r <= 0:
            raise IndexError("more arrivals in a bin than were counted")
        slot = s[so + b] + own[ow + x] + r - 1 if from_start else s[so + b + 1] - r
        pm[pmo + slot] = index0 + i
