"""A GPU rank's launches of binning.cu's rank kernels on its arrays (sim/particles/ranks_gpu.py): the step on a
range of slots, the prefix sum over the window, the probe and its one read a step, and the place. Each takes
the rank and queues on its current stream.
"""

from __future__ import annotations

import numpy as np

from sim.gpu.cuda import grid_for
from sim.particles.kernels import NULL, report_scan

INNER_AT = 5  # the interior's first and end slots in the probe's ``at``


def step(rank, first: int, end: int, spec=NULL, *, counts: bool) -> None:
    """Slots [first, end); with ``spec``, as many as end - first of the slots spec gives. ``counts``: each
    particle counted into its new bin (a step that renumbers). By row when each slot is its row (mine after
    a step that kept the numbering, the ghosts then taken in at their slots), else through perm."""
    if end <= first:
        return
    pos, vel, ids = rank.mem.set(rank.cur)
    pos2, vel2, ids2 = rank.mem.set(1 - rank.cur)
    stats = rank.stats[rank.t] if rank.stats_on else NULL
    rank.k["step_rows" if rank.slots_are_rows else "step"](
        *grid_for(end - first, rank.block),
        (
            pos,
            vel,
            rank.start,
            np.int32(end),
            rank.real(rank.size),
            rank.inv_width,
            np.int32(rank.nb),
            pos2,
            vel2,
            rank.mem.bin,
            rank.mem.offset,
            rank.count if counts else NULL,
            stats,
            rank.mem.perm,
            ids,
            ids2,
            np.int32(first),
            *rank.window_rows,
            np.int32(rank.s0),
            np.int32(rank.s1),
            rank.stray,
            spec,
        ),
    )


def scan(rank) -> None:
    """Bin starts of the window relative to its first bin (start[w0] = 0)."""
    w0, m = rank.w0, rank.w1 - rank.w0
    if rank.variant == "blockscan":  # the report's three launches, on the window (they clear the counts)
        report_scan(rank.k, rank.count[w0:], m, rank.start[w0:], rank.block_sums)
        rank.start[w0] = 0
    else:  # the counts cleared as they are read, ready for the next renumbering
        rank.count_scan(rank.count[w0:], rank.start[w0:], clear=True)


def queue_probe(rank) -> None:
    """The step's one read from the device, queued: the starts at ``at``, then the stray flag and the step's
    largest move (both cleared); and spec (on the device) for the launches queued before the host has it."""
    rank.cap = rank._cap()
    rank.k["probe"](
        (1,),
        (32,),
        (
            rank.start,
            rank.at,
            np.int32(rank.at.shape[0]),
            rank.stray,
            rank.probed,
            np.int64(rank.cap),
            np.int32(INNER_AT),
            rank.spec,
        ),
    )
    rank.streams.read_async(rank.probed, rank.probed_host)


def probed(rank) -> list[int]:
    """The queued read, once it has landed."""
    return [int(v) for v in rank.streams.wait_read(rank.probed_host)]


def probe(rank) -> list[int]:
    """The read queued and waited for (binning from scratch: nothing to overlap it with)."""
    queue_probe(rank)
    return probed(rank)


def place(rank, first: int, end: int, go=NULL) -> None:
    """Each of the window's slots (mine and the leavers') the row the step wrote its particle at; with
    ``go`` (spec's flag on the device), only if the window fitted the rows the probe checked."""
    rank.k["place"](
        *grid_for(end - first, 256),
        (
            rank.mem.bin,
            rank.mem.offset,
            rank.start,
            np.int32(end),
            rank.mem.perm,
            np.int32(first),
            go,
        ),
    )


def slots_as_rows(rank) -> None:
    """perm the identity on my slots: after a step that kept the slots, each holds the row it was written at."""
    rank.k["slots_as_rows"](*grid_for(rank.n, 256), (rank.mem.perm, np.int32(rank.lo), np.int32(rank.hi)))
