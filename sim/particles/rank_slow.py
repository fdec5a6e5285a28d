"""The GPU rank's slow way (sim/particles/ranks_gpu.py), for a step in which some particle moved more than a
bin row (past a neighbour's row): every rank bins its moved particles over the whole box and sends each
run of rows to the rank that owns it, whatever the distance. It reads from the device, allocates and
waits for its messages (the usual step does none of that), and runs only on such steps; its fresh
binning (``bin_afresh``) also numbers a rank's first particles.
"""

from __future__ import annotations

import numpy as np

from sim.gpu.cuda import grid_for
from sim.particles import rank_exchange, rank_launch
from sim.particles.kernels import NULL


def everywhere(rank) -> None:
    """Some particle moved more than a bin row: every rank's particles to their owners, re-binned."""
    rank.everywhere_steps += 1
    bin_afresh(rank, to_owners(rank))
    rank.drift.renumbered()
    rank.renumbering = rank.drift.renumbers(True)
    rank.queued = False
    rank_exchange.agree(rank, stray=False)
    rank.make_room(rank.hi, rank.lo, 0, 0)
    rank.streams.mark()


def bin_afresh(rank, m: int) -> None:
    """The current set's rows [0, m), all in the rank's strip, binned afresh: its slots [0, m)."""
    mem = rank.mem
    rank.k["count_bins"](
        *grid_for(m, 256),
        (mem.pos[rank.cur], np.int32(m), rank.inv_width, np.int32(rank.nb), mem.bin, mem.offset, rank.count),
    )
    rank_launch.scan(rank)
    total, first, end, bottom_end, top_begin, inner0, inner1, *_ = rank_launch.probe(rank)
    if (first, end, total) != (0, m, m):
        raise RuntimeError(f"rank {rank.comm.rank}: {m - (end - first)} of its {m} particles are outside its rows")
    rank_launch.place(rank, 0, m)
    rank.slots_are_rows = False
    rank.lo, rank.hi, rank.end, rank.inner, rank.pending = 0, m, m, (inner0, inner1), None
    rank.bottom, rank.top = bottom_end, m - top_begin


def to_owners(rank) -> int:
    """The particles ``rank``'s last step wrote (slots [lo, hi) of its current set) sent to their owners, and
    what it owns (its own and those received) put in the current set's first rows; their count. Both of
    the rank's streams are idle (the step's read is done)."""
    xp, nb, lo, hi, mem, k = rank.xp, rank.nb, rank.lo, rank.hi, rank.mem, rank.k
    n = hi - lo
    pos, vel, ids = mem.set(rank.cur)
    rank.count[...] = 0
    k["count_bins"](
        *grid_for(n, 256),
        (pos[lo:], np.int32(n), rank.inv_width, np.int32(nb), mem.bin[lo:], mem.offset[lo:], rank.count),
    )
    rank.start[0] = 0
    xp.cumsum(rank.count, dtype=xp.int32, out=rank.start[1:])
    rank.count[...] = 0  # (for bin_afresh's count)
    k["place"](  # (no go flag: place all)
        *grid_for(n, 256), (mem.bin, mem.offset, rank.start, np.int32(hi), mem.perm, np.int32(lo), NULL)
    )
    spare = mem.set(1 - rank.cur)  # my particles in bin order there
    k["pack_leavers"](*grid_for(n, 256), (pos, vel, ids, mem.perm, np.int32(0), np.int32(n), *spare))
    bounds = rank.host(rank.start[xp.asarray(rank.strips.cuts() * nb)]).astype(np.int64)
    comm, me = rank.comm, rank.comm.rank
    out = np.diff(bounds)
    out[me] = 0
    incoming = comm.alltoall(out)
    sends = [(q, a[bounds[q] : bounds[q + 1]]) for q in range(comm.size) if out[q] for a in spare]
    arriving = [
        (
            q,
            (
                xp.empty((int(incoming[q]), 2), rank.real),
                xp.empty((int(incoming[q]), 2), rank.real),
                xp.empty(int(incoming[q]), xp.int32),
            ),
        )
        for q in range(comm.size)
        if incoming[q]
    ]
    rank.link.exchange(sends, [(q, a) for q, arrays in arriving for a in arrays])
    rank.bytes_sent += sum(a.nbytes for _, a in sends) + 8 * comm.size
    parts = [tuple(a[bounds[me] : bounds[me + 1]] for a in spare)] + [arrays for _, arrays in arriving]
    total = sum(p[2].shape[0] for p in parts)
    mem.fit(total + 4 * nb, 4 * nb)  # (parts still hold the arrays they are views of)
    for column, a in enumerate(mem.set(rank.cur)):
        a[:total] = xp.concatenate([p[column] for p in parts])
    return total
