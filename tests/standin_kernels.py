"""particles/binning.cu's rank build (-DRANKS, fp64, plain forces) on the CPU, for GpuRank on numpy
(tests/test_mpi_gpu_standin.py): the same kernel names, arguments and pointer arithmetic. A view's index 0
is where CuPy's pointer would point; negative indices reach the room before it (``_view``). Each kernel
runs its threads in order; those that index through a slot check that the slot and its row exist (a
pointer past an array on the GPU), so a slot or row the rank forgot to set is an error here, not a wrap.
"""

from __future__ import annotations

import contextlib

import numba
import numpy as np

from sim.particles import kernels
from sim.particles.rank_memory import Streams


def _view(a):
    """(the array a view belongs to, the view's first row in it): CuPy would pass that row's address."""
    base = a
    while isinstance(base.base, np.ndarray):
        base = base.base
    offset = a.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return base, offset // base.strides[0]


def _pointer(a):
    """A view, or a null pointer (np.uint64(0)) as None."""
    return _view(a) if isinstance(a, np.ndarray) else None


@numba.njit(cache=True)
def _bin_of(x, y, inv, nb):
    bx = min(max(int(x * inv), 0), nb - 1)
    by = min(max(int(y * inv), 0), nb - 1)
    return by * nb + bx


@numba.njit(cache=True)
def _row(perm, pmo, j, rows):
    """perm's entry for slot j: a row in [0, rows) (the rows after the state pointer)."""
    if pmo + j < 0 or pmo + j >= perm.shape[0]:
        raise IndexError("a slot outside perm")
    k = perm[pmo + j]
    if k < 0 or k >= rows:
        raise IndexError("a slot whose row is outside the state")
    return k


@numba.njit(cache=True)
def _count_bins(p, po, n, inv, nb, b, bo, o, oo, c, co):
    for i in range(n):
        k = _bin_of(p[po + i, 0], p[po + i, 1], inv, nb)
        b[bo + i] = k
        o[oo + i] = c[co + k]
        c[co + k] += 1


@numba.njit(cache=True)
def _place(b, bo, o, oo, s, so, n, pm, pmo, c, co, first):
    for i in range(first, n):
        k = b[bo + i]
        pm[pmo + s[so + k] + o[oo + i]] = i
        c[co + k] = 0


@numba.njit(cache=True)
def _step(
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
    w0,
    w1,
    stray,
    sto,
):
    cutoff, min_r, mass, dt = 0.01, 0.01 / 100, 0.01, 0.0005
    dmin, dsum, pairs = 1.0, 0.0, 0
    rows = p.shape[0] - po
    moved = np.float32(0.0)
    for i in range(first, n):
        me = _row(pm, pmo, i, rows)
        xi, yi = p[po + me, 0], p[po + me, 1]
        k = _bin_of(xi, yi, inv, nb)
        bx, by = k % nb, k // nb
        x0, x1 = max(bx - 1, 0), min(bx + 1, nb - 1)
        ax = ay = 0.0
        for cy in range(max(by - 1, w0 // nb), min(by + 1, w1 // nb - 1) + 1):
            for j in range(s[so + cy * nb + x0], s[so + cy * nb + x1 + 1]):
                q = _row(pm, pmo, j, rows)
                dx, dy = p[po + q, 0] - xi, p[po + q, 1] - yi
                r2 = dx * dx + dy * dy
                if r2 > cutoff * cutoff:
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
        k = _bin_of(px, py, inv, nb)
        if counts:
            b[bo + i] = k
            o[oo + i] = c[co + k]
            c[co + k] += 1
        if not w0 <= k < w1:
            stray[sto] = 1
        moved = max(moved, _rounded_up(max(abs(px - xi), abs(py - yi))))
    return dmin, dsum, pairs, moved


@numba.njit(cache=True)
def _rounded_up(d):
    """d as a float32 no smaller than d (the kernel's __double2float_ru)."""
    f = np.float32(d)
    return f if f >= d else np.nextafter(f, np.float32(np.inf))


@numba.njit(cache=True)
def _pack_ghosts(p, po, pm, pmo, first, count, s, so, bin0, nb, out, oo, seg, sgo):
    for t in range(max(count, nb + 1)):
        if t < count:
            k = _row(pm, pmo, first + t, p.shape[0] - po)
            out[oo + t, 0], out[oo + t, 1] = p[po + k, 0], p[po + k, 1]
        if t <= nb:
            seg[sgo + t] = s[so + bin0 + t] - first


@numba.njit(cache=True)
def _take_ghosts(pm, pmo, slot0, count, index0, s, so, bin0, b_lo, b_hi, seg, sgo):
    if pmo + slot0 < 0:
        raise IndexError("ghost slots before perm's room")
    for t in range(count):
        pm[pmo + slot0 + t] = index0 + t
    for t in range(b_lo, b_hi + 1):
        s[so + bin0 + t] = seg[sgo + t] + slot0


@numba.njit(cache=True)
def _pack_leavers(p, po, v, vo, d, do, pm, pmo, first, count, p2, p2o, v2, v2o, d2, d2o):
    for t in range(count):
        k = _row(pm, pmo, first + t, p.shape[0] - po)
        p2[p2o + t, 0], p2[p2o + t, 1] = p[po + k, 0], p[po + k, 1]
        v2[v2o + t, 0], v2[v2o + t, 1] = v[vo + k, 0], v[vo + k, 1]
        d2[d2o + t] = d[do + k]


@numba.njit(cache=True)
def _place_arrivals(p, po, k, index0, inv, nb, s, so, bin0, own, ow, from_start, left, lo, pm, pmo):
    for i in range(k):
        b = _bin_of(p[po + i, 0], p[po + i, 1], inv, nb)
        x = b - bin0
        if not 0 <= x < nb:
            raise IndexError("an arrival outside the row it was counted in")
        r = left[lo + x]
        left[lo + x] -= 1
        if r <= 0:
            raise IndexError("more arrivals in a bin than were counted")
        slot = s[so + b] + own[ow + x] + r - 1 if from_start else s[so + b + 1] - r
        pm[pmo + slot] = index0 + i


class StandIn(dict):
    """The rank build's kernels as callables ``k[name](grid, block, args)``; ``launches`` counts them."""

    def __init__(self):
        names = (*kernels.NAMES, *kernels.RANK_NAMES)  # the ranks' build's kernels, each stood in for below
        super().__init__({name: getattr(self, name) for name in names})
        self.launches = dict.fromkeys(self, 0)
        self.held = None  # main's launches held back (SideFirst), or None: each runs when launched
        self.on_side = False

    def __getitem__(self, name):
        self.launches[name] += 1
        kernel = super().__getitem__(name)
        if self.held is None or self.on_side:
            return kernel
        return lambda *args, **kwargs: self.held.append((kernel, args, kwargs))

    # --- scans --------------------------------------------------------------------------------------
    def scan_blocks(self, grid, block, args, **_):
        """Each block's 2 * blockDim counts scanned (inclusive, from start + 1), zeroed; its total in sums."""
        count, m, start, sums, _length = args  # (a rank's: null)
        (c, co), (s, so), width = _view(count), _view(start), 2 * block[0]
        for b in range(grid[0]):
            lo, hi = b * width, min(int(m), (b + 1) * width)
            part = np.cumsum(c[co + lo : co + hi])
            s[so + lo + 1 : so + hi + 1] = part
            c[co + lo : co + hi] = 0
            sums[b] = part[-1] if part.size else 0

    def scan_totals(self, grid, block, args, **_):
        sums, blocks = args
        totals = np.cumsum(sums[: int(blocks)])
        sums[: int(blocks)] = totals - sums[: int(blocks)]

    def add_sums(self, grid, block, args, **_):
        start, m, sums, _length = args
        (s, so), width = _view(start), 2 * block[0]
        for b in range(grid[0]):
            s[so + b * width + 1 : so + min(int(m), (b + 1) * width) + 1] += sums[b]

    def scan_reduce(self, grid, block, args, **_):
        """scan.cuh: each tile's total (tiles of 4096 counts). The int4 loads need 16-byte aligned counts."""
        count, m, length, tile_sums = args
        (c, co), m = _view(count), int(m)
        assert (c.ctypes.data + 4 * co) % 16 == 0, "scan.cuh reads the counts as int4: 16-byte aligned"
        for t in range(grid[0]):
            tile_sums[t] = c[co + t * 4096 : co + min(m, (t + 1) * 4096)].sum()

    def scan_tiles(self, grid, block, args, **_):
        """scan.cuh: start[k] = count[0] + ... + count[k - 1] for k = 0 .. m (zeroing the counts with clear)."""
        count, m, length, offsets, start, clear = args
        (c, co), (s, so), m = _view(count), _view(start), int(m)
        assert (s.ctypes.data + 4 * so) % 16 == 0, "scan.cuh writes the starts as int4: 16-byte aligned"
        s[so] = 0
        s[so + 1 : so + m + 1] = np.cumsum(c[co : co + m])
        if clear:
            c[co : co + m] = 0

    # --- binning ------------------------------------------------------------------------------------
    def count_bins(self, grid, block, args, **_):
        pos, n, inv, nb, bins, offsets, count = args
        _count_bins(*_view(pos), int(n), float(inv), int(nb), *_view(bins), *_view(offsets), *_view(count))

    def place(self, grid, block, args, **_):
        bins, offsets, start, n, perm, count, first, go = args
        if _pointer(go) is not None and not go[0]:
            return
        _place(*_view(bins), *_view(offsets), *_view(start), int(n), *_view(perm), *_view(count), int(first))

    def step(self, grid, block, args, **_):
        (
            pos,
            vel,
            start,
            n,
            size,
            inv,
            nb,
            pos2,
            vel2,
            bins,
            offsets,
            count,
            stats,
            perm,
            ids,
            ids2,
            first,
            w0,
            w1,
            stray,
            spec,
        ) = args
        if _pointer(spec) is not None:  # slots from the device: as many as the launch covers
            if not spec[2]:
                return
            first, n = int(spec[0]), min(int(spec[1]), int(spec[0]) + grid[0] * block[0])
        assert grid[0] * block[0] >= int(n) - int(first), "a launch covers its slots"
        counts = _pointer(count) is not None
        if not counts:
            count = bins = offsets = np.zeros(1, np.int32)  # (not written)
        dmin, dsum, pairs, moved = _step(
            *_view(pos),
            *_view(vel),
            *_view(start),
            int(n),
            float(size),
            float(inv),
            int(nb),
            *_view(pos2),
            *_view(vel2),
            *_view(bins),
            *_view(offsets),
            *_view(count),
            *_view(perm),
            *_view(ids),
            *_view(ids2),
            counts,
            int(first),
            int(w0),
            int(w1),
            *_view(stray),
        )
        most = stray[1:2].view(np.float32)  # the largest move, a float's bits (atomicMax on the GPU)
        most[0] = max(most[0], moved)
        if isinstance(stats, np.ndarray) and pairs:
            f = stats[:2].view(np.float64)
            f[0] = min(f[0], dmin)
            f[1] += dsum
            stats[2] += np.uint64(pairs)

    # --- the rank's own ------------------------------------------------------------------------------
    def pack_ghosts(self, grid, block, args, **_):
        pos, perm, first, count, start, bin0, nb, out, seg = args
        _pack_ghosts(
            *_view(pos),
            *_view(perm),
            int(first),
            int(count),
            *_view(start),
            int(bin0),
            int(nb),
            *_view(out),
            *_view(seg),
        )

    def take_ghosts(self, grid, block, args, **_):
        perm, slot0, count, index0, start, bin0, b_lo, b_hi, seg = args
        _take_ghosts(
            *_view(perm),
            int(slot0),
            int(count),
            int(index0),
            *_view(start),
            int(bin0),
            int(b_lo),
            int(b_hi),
            *_view(seg),
        )

    def pack_leavers(self, grid, block, args, **_):
        pos, vel, ids, perm, first, count, pos2, vel2, ids2 = args
        _pack_leavers(
            *_view(pos),
            *_view(vel),
            *_view(ids),
            *_view(perm),
            int(first),
            int(count),
            *_view(pos2),
            *_view(vel2),
            *_view(ids2),
        )

    def count_arrivals(self, grid, block, args, **_):
        count, imm, own, nb = args
        (c, co), nb = _view(count), int(nb)
        if _pointer(own) is not None:
            own[:nb] = c[co : co + nb]
        c[co : co + nb] += imm[:nb]

    def place_arrivals(self, grid, block, args, **_):
        pos, k, index0, inv, nb, start, bin0, own, left, perm = args
        own_at = _pointer(own)
        _place_arrivals(
            *_view(pos),
            int(k),
            int(index0),
            float(inv),
            int(nb),
            *_view(start),
            int(bin0),
            *(own_at or (np.zeros(1, np.int32), 0)),
            own_at is not None,
            *_view(left),
            *_view(perm),
        )

    def slots_as_rows(self, grid, block, args, **_):
        perm, lo, hi = args
        (pm, pmo) = _view(perm)
        pm[pmo + int(lo) : pmo + int(hi)] = np.arange(int(lo), int(hi), dtype=np.int32)

    def probe(self, grid, block, args, **_):
        start, at, m, stray, out, cap, inner, spec = args
        (s, so) = _view(start)
        out[: int(m)] = s[so + at[: int(m)]]
        out[int(m)], out[int(m) + 1] = stray[0], stray[1]
        stray[:2] = 0
        spec[:] = s[so + at[int(inner)]], s[so + at[int(inner) + 1]], int(s[so + at[0]] <= int(cap))


class SideFirst(Streams):
    """The rank's streams for numpy ranks, in the other order: main's launches after a mark (the interior
    step) run at the join, after side's work. Numpy ranks otherwise run them first: a rank that gives the
    same steps both ways reads nothing on one stream that the other writes meanwhile."""

    def __init__(self, kernels: StandIn):
        super().__init__(np)
        self.k = kernels

    def mark(self) -> None:
        assert not self.k.held, "main's held launches ran before the next mark"
        self.k.held = []

    @contextlib.contextmanager
    def side(self):
        self.k.on_side = True
        try:
            yield
        finally:
            self.k.on_side = False

    def join(self) -> None:
        held, self.k.held = self.k.held or [], None
        for kernel, args, kwargs in held:
            kernel(*args, **kwargs)
