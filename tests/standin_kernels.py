"""particles/binning.cu's rank build (-DRANKS, fp64, plain forces) on the CPU, for GpuRank on numpy
(tests/test_mpi_gpu_standin.py, tests/test_mpi_gpu_one_rank.py): the same kernel names, arguments and
pointer arithmetic. A view's index 0 is where CuPy's pointer would point; negative indices reach the room
before it (``_view``). Each kernel runs its threads in order (tests/standin_numba.py); those that index
through a slot check that the slot and its row exist (a pointer past an array on the GPU), so a slot or
row the rank forgot to set is an error here, not a wrap.
"""

from __future__ import annotations

import contextlib

import numpy as np
import standin_numba

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
        sums, blocks, length, tile = args
        blocks = int(blocks)
        if (view := _pointer(length)) is not None:  # only the tiles holding the first *length counts
            blocks = min(blocks, -(-max(int(view[0][view[1]]), 0) // int(tile)))
        totals = np.cumsum(sums[:blocks])
        sums[:blocks] = totals - sums[:blocks]

    def add_sums(self, grid, block, args, **_):
        start, m, sums, _length = args
        (s, so), width = _view(start), 2 * block[0]
        for b in range(grid[0]):
            s[so + b * width + 1 : so + min(int(m), (b + 1) * width) + 1] += sums[b]

    def scan_reduce(self, grid, block, args, **_):
        """scan.cuh: each tile's total (tiles of 4096 counts, the grid's blocks taking them in turns). The int4
        loads need 16-byte aligned counts."""
        count, m, length, tile_sums = args
        (c, co), m = _view(count), int(m)
        assert (c.ctypes.data + 4 * co) % 16 == 0, "scan.cuh reads the counts as int4: 16-byte aligned"
        for t in range(-(-m // 4096)):
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
        standin_numba.count_bins(*_view(pos), int(n), float(inv), int(nb), *_view(bins), *_view(offsets), *_view(count))

    def place(self, grid, block, args, **_):
        bins, offsets, start, n, perm, first, go = args
        if _pointer(go) is not None and not go[0]:
            return
        standin_numba.place(*_view(bins), *_view(offsets), *_view(start), int(n), *_view(perm), int(first))

    def step(self, grid, block, args, through=True, **_):
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
            row_lo,
            row_hi,
            s0,
            s1,
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
        dmin, dsum, pairs, moved = standin_numba.step(
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
            int(row_lo),
            int(row_hi),
            int(s0),
            int(s1),
            *_view(stray),
            through,
        )
        most = stray[1:2].view(np.float32)  # the largest move, a float's bits (atomicMax on the GPU)
        most[0] = max(most[0], moved)
        if isinstance(stats, np.ndarray) and pairs:
            f = stats[:2].view(np.float64)
            f[0] = min(f[0], dmin)
            f[1] += dsum
            stats[2] += np.uint64(pairs)

    def step_rows(self, grid, block, args, **_):
        """step reading by row (each slot read must be its own row: perm says so there)."""
        self.step(grid, block, args, through=False)

    # --- the rank's own ------------------------------------------------------------------------------
    def pack_ghosts(self, grid, block, args, **_):
        pos, perm, first, count, start, bin0, nb, out, seg = args
        standin_numba.pack_ghosts(
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
        standin_numba.take_ghosts(
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
        standin_numba.pack_leavers(
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
        standin_numba.place_arrivals(
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
