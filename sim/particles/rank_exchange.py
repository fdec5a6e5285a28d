"""A GPU rank's messages (sim/particles/ranks_gpu.py): its boundary rows to its neighbours as ghosts, the counts
it made in their rows, the particles leaving for them, and the all-gather of each step's few numbers. Each
function packs what it sends on the rank's current stream, exchanges it over the rank's link and takes in
what arrived; ``ghosts`` and ``migrate`` run on the rank's side stream, ``counts`` and ``agree`` on main.
"""

from __future__ import annotations

import numpy as np

from sim.gpu.cuda import grid_for
from sim.particles.kernels import NULL
from sim.particles.rank_memory import SIDES


def ghosts(rank) -> None:
    """(on side) The rank's boundary rows to its neighbours; theirs taken in, their slots and bin starts
    set. Their rows: after my state, or, when the step reads by row, their slots (just before and just after
    mine: those rows hold nothing then)."""
    nb, lo, hi = rank.nb, rank.lo, rank.hi
    pos = rank.mem.pos[rank.cur]
    g = rank.ghosts_in
    sends, recvs = [], []
    bins = rank.ghost_bins
    rows = {"below": (lo, rank.bottom, rank.row0 * nb), "above": (hi - rank.top, rank.top, rank.row1 * nb - bins)}
    if rank.slots_are_rows:
        at = {"below": lo - g["below"], "above": hi}
    else:
        at = {"below": rank.end, "above": rank.end + g["below"]}
    for side in SIDES:
        if rank.peers[side] is None:
            continue
        first, count, bin0 = rows[side]
        out = rank.mem.ghosts[side][:count]
        rank.k["pack_ghosts"](
            *grid_for(max(count, bins + 1), 256),
            (
                pos,
                rank.mem.perm,
                np.int32(first),
                np.int32(count),
                rank.start,
                np.int32(bin0),
                np.int32(bins),
                out,
                rank.seg_out[side],
            ),
        )
        sends += [(rank.peers[side], out), (rank.peers[side], rank.seg_out[side])]
        ghost_rows = rank.mem.pos_rows(rank.cur, at[side], at[side] + g[side])
        recvs += [(rank.peers[side], ghost_rows), (rank.peers[side], rank.seg_in[side])]
    rank.link.exchange(sends, recvs)
    rank.bytes_sent += sum(a.nbytes for _, a in sends)
    # below: slots [lo - g, lo), the ghost rows' bins but their last start (my first slot);
    # above: slots [hi, hi + g), the ghost rows' bins after their first start (my end)
    slots = {
        "below": (lo - g["below"], rank.ghost_start["below"], 0, bins - 1),
        "above": (hi, rank.ghost_start["above"], 1, bins),
    }
    for side in SIDES:
        if rank.peers[side] is not None:
            slot0, bin0, b_lo, b_hi = slots[side]
            rank.k["take_ghosts"](
                *grid_for(max(g[side], bins + 1), 256),
                (
                    rank.mem.perm,
                    np.int32(slot0),
                    np.int32(g[side]),
                    np.int32(at[side]),
                    rank.start,
                    np.int32(bin0),
                    np.int32(b_lo),
                    np.int32(b_hi),
                    rank.seg_in[side],
                ),
            )


def counts(rank) -> None:
    """The counts the rank made in its neighbours' rows to them; theirs in its rows added to its counts."""
    sends, recvs = [], []
    for side in SIDES:
        if rank.peers[side] is not None:
            sends.append((rank.peers[side], rank.count[rank.leaving_rows[side]]))
            recvs.append((rank.peers[side], rank.imm[side]))
    rank.link.exchange(sends, recvs)
    rank.bytes_sent += sum(a.nbytes for _, a in sends)
    for side in SIDES:
        if rank.peers[side] is not None:
            rank.k["count_arrivals"](
                *grid_for(rank.nb, 256),
                (
                    rank.count[rank.rows[side]],
                    rank.imm[side],
                    rank.own_below if side == "below" else NULL,
                    np.int32(rank.nb),
                ),
            )


def migrate(rank, at: int, total: int, first: int, end: int) -> None:
    """(on side) The window's leavers (slots before ``first`` and from ``end`` to ``total``) packed through
    perm and sent; arrivals received at rows from ``at`` on (after those the step wrote) and placed."""
    pos, vel, ids = state = rank.mem.set(rank.cur)
    k = rank.arriving
    leaving = {"below": (0, first), "above": (end, total - end)}
    arriving = {"below": at, "above": at + k["below"]}
    sends, recvs = [], []
    for side in SIDES:
        if rank.peers[side] is None:
            continue
        slot0, count = leaving[side]
        out = tuple(a[:count] for a in rank.mem.leavers[side])
        if count:
            rank.k["pack_leavers"](
                *grid_for(count, 256), (pos, vel, ids, rank.mem.perm, np.int32(slot0), np.int32(count), *out)
            )
        sends += [(rank.peers[side], a) for a in out]
        recvs += [(rank.peers[side], a[arriving[side] : arriving[side] + k[side]]) for a in state]
    rank.link.exchange(sends, recvs)
    rank.bytes_sent += sum(a.nbytes for _, a in sends)
    for side, bin0, own in (
        ("below", rank.row0 * rank.nb, rank.own_below),
        ("above", (rank.row1 - 1) * rank.nb, NULL),
    ):
        if k[side]:
            rank.k["place_arrivals"](
                *grid_for(k[side], 256),
                (
                    pos[arriving[side] :],
                    np.int32(k[side]),
                    np.int32(arriving[side]),
                    rank.inv_width,
                    np.int32(rank.nb),
                    rank.start,
                    np.int32(bin0),
                    own,
                    rank.imm[side],
                    rank.mem.perm,
                ),
            )
    rank.end = at + k["below"] + k["above"]


def agree(
    rank,
    stray: bool,
    mine: int | None = None,
    bottom: int = 0,
    top: int = 0,
    leave_below: int = 0,
    leave_above: int = 0,
    move: int = 0,
) -> bool:
    """All-gather (stray flag, particles, bottom row, top row, leaving below, leaving above, the step's largest
    move) of every rank; True if any rank had a stray. Sets ``moved`` (every rank's largest move: ``move`` is a
    float's bits), the next ghosts' and this step's arrivals' counts."""
    if mine is None:
        mine, bottom, top = rank.n, rank.bottom, rank.top
    table = rank.comm.allgather(np.array([int(stray), mine, bottom, top, leave_below, leave_above, move], np.int64))
    rank.moved = float(table[:, 6].astype(np.int32).view(np.float32).max())
    if table[:, 0].any():
        return True
    rank.bottom, rank.top = bottom, top
    b, a = rank.below, rank.above
    rank.ghosts_in = {
        "below": int(table[b, 3]) if b is not None else 0,
        "above": int(table[a, 2]) if a is not None else 0,
    }
    rank.arriving = {
        "below": int(table[b, 5]) if b is not None else 0,
        "above": int(table[a, 4]) if a is not None else 0,
    }
    return False
