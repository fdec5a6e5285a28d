"""One rank's particles on its GPU: the one-GPU gather step (particles/binning.cu, built with -DRANKS) on
the rank's strip of bin rows.

Bins are numbered over the whole box; the rank's window is its rows and two rows each side (GHOST_ROWS: a
particle may drift most of a bin between renumberings, as on one GPU, and still find its neighbours in the
window). A renumbering scans the window's particles in bin order (slots): those now in the row below my
strip first, then mine, those now in the row above last (a particle that went further is a stray).
``perm`` maps a slot to the row of the state arrays that holds its particle: the step right after a
renumbering reads its particle and its neighbours through it and writes the moved state at its own slot;
the ghosts' slots (the neighbours' boundary rows, just before and just after mine) point at the ghost
positions, so the step reads a ghost like one of mine. A step renumbers only when the particles may have
drifted too far from the bins of the last numbering (sim/particles/rank_drift.py); the others keep the
slots, read each slot at its own row (step_rows; the ghosts are then received at their slots) and hand no
particle over.
One step (``main``: the caller's stream; ``side``: the rank's second stream, for messages), with the
timer's stages:

1. forces+move (main): ``step`` on my interior slots (those whose 9 bins hold neither ghosts nor
   arrivals, even after a row's drift: all but the three rows at each end that has a neighbour), queued
   first;
2. migrate (side, while the interior steps; after a renumbering): the leavers (the slots now in a
   neighbour's row) packed through perm and sent; arrivals received after my state and given the slots
   kept for them;
3. ghosts (side): my bottom and top rows' positions in bin order (packed through perm) and their bin
   starts to the neighbours; theirs received after the arrivals, their slots and bin starts set;
4. forces+move (main, once side is done): ``step`` on the rows at the ends. A particle that a renumbering
   step puts past a neighbour's row sets a flag (after the other steps the drift tells); the step keeps
   its largest move;
5. counts (main, renumbering): each rank sends its neighbours the counts it made in their boundary rows
   (the particles it is about to hand them, per bin) and adds theirs to its own: the scan then keeps a
   slot for every arriving particle inside its bin;
6. bin (main): when renumbering, the prefix sum over the window (common/scan.cuh's three launches, or the
   blockscan variant's; either clears the counts as it reads them) and ``place`` (each window slot's
   source row); one small read (slot bounds, the flag and the largest move) and one MPI all-gather. The next step's
   interior is queued before the read, so the GPU works while the host waits for it and for the other
   ranks: the interior takes its slots from the device (the probe's ``spec``), and both do nothing if the
   window outgrew the rank's arrays (the host then grows them and queues both again). The migration waits
   for the next step (``state`` queues it at once).
If any rank's flag is set, or a step that kept the slots left a drift past the margin, that step re-bins
every rank's particles over the whole box and sends each to its owner, whatever the distance (the slow
way, sim/particles/rank_slow.py: more reads and messages); the queued interior's counts and statistics
are dropped and it runs again after.
Arrays grow rarely, with room to spare (sim/particles/rank_memory.py): a step allocates nothing.

``xp`` and ``kernels`` default to CuPy and the compiled kernels; tests pass numpy and a stand-in.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.gpu import cuda
from sim.gpu.cuda import ceil_div, grid_for
from sim.gpu.scan import CountScan
from sim.particles import kernels as builds
from sim.particles import rank_exchange, rank_launch, rank_slow, world
from sim.particles.rank_drift import Drift
from sim.particles.rank_memory import SIDES, RankMemory, Streams
from sim.particles.strips import Strips

BIN_CUTOFFS = builds.BIN_CUTOFFS  # as one GPU's
STAGES = ("ghosts", "forces+move", "counts", "bin", "migrate")
GHOST_ROWS = 2  # the neighbours' rows next to mine that I read, each side (rank_drift.py: why two)


def bins_per_side(size: float, bin_cutoffs: float = BIN_CUTOFFS) -> int:
    return max(1, int(size / (world.CUTOFF * max(bin_cutoffs, 1.0))))


def rows_of(y: np.ndarray, size: float, precision: str, bin_cutoffs: float = BIN_CUTOFFS) -> np.ndarray:
    """The bin row of each particle as the kernels' bin_of computes it (in the kernels' precision)."""
    real: type[np.floating[Any]] = np.float64 if precision == "fp64" else np.float32
    nb = bins_per_side(size, bin_cutoffs)
    rows = (y.astype(real) * real(nb / size)).astype(np.int64)
    return np.clip(rows, 0, nb - 1)


class GpuRank:
    def __init__(
        self,
        comm,
        link,
        x,
        y,
        vx,
        vy,
        ids,
        size: float,
        steps: int,
        variant: str = "plain",
        precision: str = "fp64",
        block: int = 256,
        stats: bool = True,
        device: int = 0,
        xp: Any = None,
        kernels=None,
        timer=None,
    ):
        if xp is None:
            import cupy

            xp = cupy
        if variant == "texture":  # its kernel reads textures; the ranks' runs start mid-buffer (ghosts before)
            raise ValueError("the texture variant runs on one GPU; MPI ranks run plain, tiled or blockscan")
        self.xp, self.comm, self.link = xp, comm, link
        self.host = getattr(xp, "asnumpy", np.asarray)
        self.variant, self.block, self.stats_on = variant, int(block), stats
        self.real = np.float64 if precision == "fp64" else np.float32
        if kernels is None:
            kernels = cuda.kernels(builds.step(variant, precision, block, stats, ranks=True), device)
        self.k = kernels
        self.size = size
        self.nb = nb = bins_per_side(size)
        self.inv_width = self.real(nb / size)
        self.strips = Strips(nb, comm.size)
        self.row0, self.row1 = row0, row1 = self.strips.bounds(comm.rank)
        self.below, self.above = self.strips.neighbours(comm.rank)
        self.peers = {"below": self.below, "above": self.above}
        self.timer = timer if timer is not None else cuda.stage_timer("gpu" if xp is not np else "cpu", STAGES)
        self.streams = Streams(xp)
        i32 = xp.int32
        if comm.size > 1 and nb // comm.size < GHOST_ROWS:  # (one rank has no neighbours to read)
            raise ValueError(
                f"the box has {nb} bin rows for {comm.size} GPU ranks: each needs at least {GHOST_ROWS} (its "
                "neighbours' ghosts; use fewer ranks or more particles)"
            )
        # the window's bins: my rows and the ghost rows each side (the rows searched); a particle landing
        # outside my rows and the one row each side (the leavers' rows) is a stray
        first_row, end_row = max(row0 - GHOST_ROWS, 0), min(row1 + GHOST_ROWS, nb)
        self.w0, self.w1 = first_row * nb, end_row * nb
        self.window_rows = (np.int32(first_row), np.int32(end_row - 1))  # the step's rows searched
        self.s0, self.s1 = max(row0 - 1, 0) * nb, min(row1 + 1, nb) * nb
        pad = -self.w0 % 4  # the window's counts and starts 16-byte aligned (the scan's int4 loads and stores)
        self.count = xp.zeros(nb * nb + pad, i32)[pad:]
        self.start = xp.zeros(nb * nb + 1 + pad, i32)[pad:]
        # my first and last row (arrivals land there) and the neighbours' rows next to them (leavers go there)
        self.rows = {"below": slice(row0 * nb, (row0 + 1) * nb), "above": slice((row1 - 1) * nb, row1 * nb)}
        self.leaving_rows = {"below": slice((row0 - 1) * nb, row0 * nb), "above": slice(row1 * nb, (row1 + 1) * nb)}
        self.ghost_bins = GHOST_ROWS * nb  # bins of the ghost rows each side
        self.ghost_start = {"below": (row0 - GHOST_ROWS) * nb, "above": row1 * nb}  # their first bin
        if variant == "blockscan":
            self.block_sums = xp.zeros(max(1, ceil_div(self.w1 - self.w0, 2 * builds.SCAN_BLOCK)), i32)
        else:
            self.count_scan = CountScan(kernels, self.w1 - self.w0, xp)
        self.imm = {side: xp.zeros(nb, i32) for side in SIDES}  # arrivals per bin of my row; counted down as placed
        self.own_below = xp.zeros(nb, i32)  # my own counts in my bottom row (arrivals from below go after them)
        self.seg_out = {side: xp.zeros(self.ghost_bins + 1, i32) for side in SIDES}  # boundary rows' bin starts
        self.seg_in = {side: xp.zeros(self.ghost_bins + 1, i32) for side in SIDES}
        self.stray = xp.zeros(2, i32)  # a particle left the window; the step's largest move (a float's bits)
        # the rows whose slots step apart from the interior: three at each end with a neighbour (its ghost row
        # and its arrivals are read by them, or by a particle there that drifted a row since its numbering)
        inner0 = min(row0 + (3 if self.below is not None else 0), row1)
        inner1 = max(row1 - (3 if self.above is not None else 0), inner0)
        # probed after each scan: the window's total, my first and end slot, the end of my bottom rows and the
        # first of my top rows (the ghosts I send), the interior's first and end
        bottom_end, top_first = min(row0 + GHOST_ROWS, row1) * nb, max(row1 - GHOST_ROWS, row0) * nb
        self.at = xp.asarray(
            [self.w1, row0 * nb, row1 * nb, bottom_end, top_first, inner0 * nb, inner1 * nb], dtype=np.int64
        )
        self.probed = xp.zeros(self.at.shape[0] + 2, i32)
        self.probed_host = self.streams.pinned(self.at.shape[0] + 2, np.int32)
        self.spec = xp.zeros(3, i32)  # the next interior's first and end slots, and whether they fit (probe)
        self.go = self.spec[2:]  # (that flag, for the queued place)
        self.cap = 0  # the rows the last probe checked the window against
        self.queued = False  # whether the next step's interior is queued (it takes its slots from spec)
        self.drift = Drift(size / nb, GHOST_ROWS)
        self.moved = 0.0  # every rank's largest move in the step last read (rank_exchange.agree)
        self.renumbering = True  # whether the step now queued or next to run renumbers (the first one does)
        self.slots_are_rows = False  # whether perm maps each of my slots to its own row (after a calm step)
        # per step: closest pair (bits), sum, pairs; a row more for the interior queued after the last step
        self.stats = xp.zeros((max(1, steps) + 1, 3), xp.uint64)
        self.stats[:, 0] = np.float64(1.0).view(np.uint64)
        self.fresh_stats = self.stats[-1].copy()  # a row before any pair
        self.t = 0
        self.bytes_sent = 0  # ghosts, counts and migrants this rank has sent
        self.migrants = 0  # particles handed to a neighbour the usual way
        self.everywhere_steps = 0  # steps that took the slow way (a particle jumped past a neighbour's row)
        self.renumbered_steps = 0  # steps that renumbered the particles (the others kept their slots)
        self.outgrown_steps = 0  # steps whose queued place and interior ran again (the window outgrew the arrays)
        self.topped_up_steps = 0  # steps whose queued interior missed slots (more than it covered)
        n = x.shape[0]
        self.mem = RankMemory(xp, self.real, n + 4 * nb, 4 * nb)
        self.cur = 0  # the set the next step reads
        # set by rank_slow.bin_afresh and each step: my slots [lo, hi), the end of the rows the step wrote (arrivals
        # after), the interior's slots, the migration still to queue (at, total, first, end)
        self.lo: int
        self.hi: int
        self.end: int
        self.inner: tuple[int, int]
        self.pending: tuple[int, int, int, int] | None
        # set by _agree: my bottom and top rows' particles, the neighbours' ghosts and arrivals by side
        self.bottom: int
        self.top: int
        self.ghosts_in: dict[str, int]
        self.arriving: dict[str, int]
        pos, vel, ids_now = self.mem.set(0)
        pos[:n] = xp.asarray(np.column_stack([x, y]), self.real)
        vel[:n] = xp.asarray(np.column_stack([vx, vy]), self.real)
        ids_now[:n] = xp.asarray(ids, i32)
        rank_slow.bin_afresh(self, n)
        rank_exchange.agree(self, stray=False)
        self.make_room(self.hi, self.lo, 0, 0)
        self.streams.mark()

    @property
    def n(self) -> int:
        return self.hi - self.lo

    # --- one step -----------------------------------------------------------------------------------
    def step(self) -> None:
        renumbering, by_row = self.renumbering, self.slots_are_rows
        if not self.queued:  # (queued by the last step unless it took the slow way)
            with self.timer.stage("forces+move"):  # (reads no slot, start or row that side writes)
                rank_launch.step(self, *self.inner, counts=renumbering)
        self.queued = False
        with self.streams.side():
            if self.pending is not None:  # the last step's leavers and arrivals
                with self.timer.stage("migrate"):
                    rank_exchange.migrate(self, *self.pending)
                self.pending = None
            with self.timer.stage("ghosts"):
                rank_exchange.ghosts(self)
        with self.timer.stage("forces+move"):
            self.streams.join()
            rank_launch.step(self, self.lo, self.inner[0], counts=renumbering)
            rank_launch.step(self, self.inner[1], self.hi, counts=renumbering)
        self.cur = 1 - self.cur
        if by_row:  # the step left the ids where they were: they are the new current set's
            self.mem.ids.reverse()
        self.t += 1
        self.renumbered_steps += renumbering
        if renumbering:
            with self.timer.stage("counts"):
                rank_exchange.counts(self)
        with self.timer.stage("bin"):
            if renumbering:
                rank_launch.scan(self)
                rank_launch.queue_probe(self)
                rank_launch.place(self, self.lo, self.hi, self.go)  # (nothing if the window outgrew perm)
                self.slots_are_rows = False
            else:  # the slots stay; each now reads the row the step wrote it at
                if not self.slots_are_rows:
                    rank_launch.slots_as_rows(self)
                    self.slots_are_rows = True
                rank_launch.queue_probe(self)  # (the same numbering's slots)
            self.streams.mark()
        self.renumbering = self.drift.renumbers(renumbering)
        with self.timer.stage("forces+move"):
            launched = self._queue_interior()
        missed = (0, 0)  # the next interior's slots that its queued launch did not step (stepped below)
        with self.timer.stage("bin"):
            total, first, end, bottom_end, top_begin, inner0, inner1, stray, move = rank_launch.probed(self)
            mine, leave_below, leave_above = end - first, first, total - end
            if not renumbering:  # the probe read the same numbering: the slots before and after mine are ghosts
                leave_below = leave_above = 0
            everywhere = rank_exchange.agree(
                self, stray != 0, mine, bottom_end - first, end - top_begin, leave_below, leave_above, move
            )
            everywhere = self.drift.read(renumbering, self.moved) or everywhere
            if everywhere:
                self._drop_interior()
                rank_slow.everywhere(self)
            else:
                fitted = total <= self.cap  # the queued place and interior ran
                self.outgrown_steps += not fitted
                if self.make_room(total, first, leave_below, leave_above) or not fitted:
                    if not fitted and renumbering:
                        rank_launch.place(self, self.lo, self.hi)
                    self.streams.mark()
                if renumbering:  # the migration is queued with the next step's ghosts, after its interior
                    self.pending = (self.hi, total, first, end)
                    self.migrants += leave_below + leave_above
                    self.lo, self.hi = first, end
                else:
                    self.end = self.hi  # the next ghosts go after the rows this step wrote
                self.inner = (inner0, inner1)
                self.queued = True
                missed = (inner0 + launched, inner1) if fitted else (inner0, inner1)
                self.topped_up_steps += fitted and missed[1] > missed[0]
        if missed[1] > missed[0]:
            with self.timer.stage("forces+move"):
                rank_launch.step(self, *missed, counts=self.renumbering)
        self.timer.frame_done()

    def _settle(self) -> None:
        """The last step's migration queued (if it is not yet) and waited for by ``main``."""
        if self.pending is not None:
            with self.streams.side():
                rank_exchange.migrate(self, *self.pending)
            self.pending = None
        self.streams.join()

    def _queue_interior(self) -> int:
        """The next step's interior, its slots from the device (spec): slots the launch covers (the last
        step's particles and a row more; ``step`` launches the rest, if any, once it has read them)."""
        (blocks,), (block,) = grid_for(self._cover(), self.block)
        rank_launch.step(self, 0, blocks * block, self.spec, counts=self.renumbering)
        return blocks * block  # (its threads: a whole number of blocks)

    def _cover(self) -> int:
        return self.n + self.nb

    def _cap(self) -> int:
        """The window's slots the queued place and interior may write: the arrays' rows."""
        return self.mem.rows

    def _drop_interior(self) -> None:
        """The queued interior is not the next step's (the slow way): its statistics cleared (the slow way
        clears the counts), to be counted again when the step does it."""
        self.streams.join()  # (numpy ranks: main's launches held back run now)
        if self.stats_on:
            self.stats[self.t] = self.fresh_stats

    def make_room(self, total: int, first: int, leave_below: int, leave_above: int) -> bool:
        """Room for this step's arrivals and leavers and the next step's ghosts, from the window's ``total``
        slots, my ``first``; whether the arrays grew. Only while side is idle (after the step's read), and
        before the mark that side waits for (a grown array's copy is queued on main, after the interior)."""
        g, k = self.ghosts_in, self.arriving
        arrived_end = self.hi + k["below"] + k["above"]
        rows, head = max(arrived_end + g["below"] + g["above"], total + g["above"]), g["below"] - first
        grows = not self.mem.holds(rows, head)
        if grows:
            self.streams.join()  # (numpy ranks: main's held launches write the arrays before they are copied)
        self.mem.fit(rows, head)
        self.mem.fit_sends(max(leave_below, leave_above, self.bottom, self.top))
        return grows

    # --- reading back ------------------------------------------------------------------------------
    def state(self) -> tuple[np.ndarray, ...]:
        """(ids, x, y, vx, vy) of my particles, float64 on the host."""
        self._settle()
        rows = self.mem.perm[self.lo : self.hi]
        pos, vel, ids = (self.host(a[rows]) for a in self.mem.set(self.cur))
        return ids.astype(np.int64), *(np.asarray(a, np.float64) for a in (pos[:, 0], pos[:, 1], vel[:, 0], vel[:, 1]))

    def positions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ids, x, y, _, _ = self.state()
        return ids, x, y

    def step_stats(self) -> np.ndarray:
        """(steps done, 3) float64: per step my closest pair, the sum of my pair distances, my pairs."""
        raw = self.host(self.stats[: self.t])
        out = np.empty((self.t, 3))
        out[:, 0] = raw[:, 0].view(np.float64)
        out[:, 1] = raw[:, 1].view(np.float64)
        out[:, 2] = raw[:, 2]
        return out
