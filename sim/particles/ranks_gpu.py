"""One rank's particles on its GPU: the single-GPU kernels (particles/binning.cu) on the rank's strip.

The one-GPU step kernel (plain, tiled or blockscan; one reciprocal square root per pair, bins as
wide as the one-GPU scene's), but the state is scattered into bin order each step (one GPU reads it
through an index instead): ghosts and migrants are slices of it. Bins are numbered over the whole box, so a strip's
rows and its neighbours' boundary rows are contiguous runs of the sorted arrays. The rank's arrays
keep room before and after its own particles (``head``): ghosts are received straight into it, so
the step kernel sees [row below | my rows | row above] as one bin-sorted run, given a pointer to my
first particle and bin starts relative to it (negative for the row below). One step:

1. ghosts: my bottom and top rows (positions, plus that row's bin starts) to the neighbours;
2. ``step`` (forces, move, walls, count into the new bin) on my particles only;
3. each rank sends its neighbours the counts it made in their boundary rows (the particles it is
   about to hand them, per bin) and adds theirs to its own counts: the scan then keeps a slot for
   every arriving particle inside its bin;
4. the prefix sum over my rows and the two rows beside them, then ``scatter`` in bin order: the
   particles now below my strip come first, those above last, mine in the middle;
5. those that left go to the neighbour, those that arrive are counted (``count_bins``, starting at
   my own count of their bin) and ``scatter``-ed into their slots.
One small read from the device and one MPI all-gather (counts for the next ghosts, and a flag) per step. A
particle that moved more than one bin row (a hard kick) is caught by the count of the window, and that step
re-bins every rank's particles over the whole box and sends each to its owner, whatever the distance.

``xp`` and ``kernels`` default to CuPy and the compiled kernels; tests pass numpy and a stand-in.
"""

from __future__ import annotations

import numpy as np

from sim.gpu import cuda
from sim.gpu.cuda import ceil_div, grid_for
from sim.particles import kernels as builds
from sim.particles import world
from sim.particles.strips import Strips

BIN_CUTOFFS = builds.BIN_CUTOFFS  # as one GPU's
SCAN_BLOCK = 512
STAGES = ("ghosts", "forces+move", "counts", "bin", "migrate")


def bins_per_side(size: float, bin_cutoffs: float = BIN_CUTOFFS) -> int:
    return max(1, int(size / (world.CUTOFF * max(bin_cutoffs, 1.0))))


def rows_of(y: np.ndarray, size: float, precision: str, bin_cutoffs: float = BIN_CUTOFFS) -> np.ndarray:
    """The bin row of each particle as the kernels' bin_of computes it (in the kernels' precision)."""
    real = np.float64 if precision == "fp64" else np.float32
    nb = bins_per_side(size, bin_cutoffs)
    rows = (y.astype(real) * real(nb / size)).astype(np.int64)
    return np.clip(rows, 0, nb - 1)


class GpuRank:
    def __init__(self, comm, link, x, y, vx, vy, ids, size: float, steps: int, variant: str = "plain",
                 precision: str = "fp64", block: int = 256, stats: bool = True, device: int = 0, xp=None,
                 kernels=None, timer=None):
        if xp is None:
            import cupy as xp
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
        self.inv_width = nb / size
        self.strips = Strips(nb, comm.size)
        self.row0, self.row1 = self.strips.bounds(comm.rank)
        self.below, self.above = self.strips.neighbours(comm.rank)
        self.timer = timer if timer is not None else cuda.stage_timer("gpu" if xp is not np else "cpu", STAGES)
        i32 = xp.int32
        self.count = xp.zeros(nb * nb, i32)
        self.start = xp.zeros(nb * nb + 1, i32)
        self.block_sums = xp.zeros(max(1, ceil_div(nb * nb, 2 * SCAN_BLOCK)), i32)
        self.imm = {side: xp.zeros(nb, i32) for side in ("below", "above")}  # arriving particles per bin
        self.saved = {side: xp.zeros(nb, i32) for side in ("below", "above")}  # my counts in those rows
        self.seg = {side: xp.zeros(nb + 1, i32) for side in ("below", "above")}  # a ghost row's bin starts
        self.probe = xp.asarray([min(self.row1 + 1, nb) * nb, self.row0 * nb, self.row1 * nb, (self.row0 + 1) * nb,
                                 (self.row1 - 1) * nb], dtype=np.int64)
        self.stats = xp.zeros((max(1, steps), 3), xp.uint64)  # per step: closest pair (bits), sum, pairs
        self.stats[:, 0] = np.float64(1.0).view(np.uint64)
        self.t = 0
        self.bytes_sent = 0  # ghosts, counts and migrants this rank has sent
        self.migrants = 0  # particles handed to a neighbour the usual way
        self.everywhere_steps = 0  # steps that took the slow way (a particle jumped past a neighbour's row)
        n = x.shape[0]
        self.head, self.cap = 0, 0
        self.pos = [None, None]
        self.vel = [None, None]
        self.ids = [None, None]
        self._grow(max(1024, 4 * nb), int(1.25 * n) + 1024, keep=())
        h = self.head
        self.pos[1][h:h + n] = xp.asarray(np.column_stack([x, y]), self.real)
        self.vel[1][h:h + n] = xp.asarray(np.column_stack([vx, vy]), self.real)
        self.ids[1][h:h + n] = xp.asarray(ids, i32)
        self._rebin(n)
        self._agree(stray=False)

    # --- memory ---------------------------------------------------------------------------------
    def _grow(self, head: int, cap: int, keep) -> None:
        """Both sets to ``head`` rows of room on each side and ``cap`` particles; ``keep`` lists
        (kind, set) whose rows [head, head + n) survive (kind: pos, vel or ids)."""
        xp = self.xp
        head, cap = max(head, self.head), max(cap, self.cap)
        rows = 2 * head + cap
        kept = {(kind, s): getattr(self, kind)[s][self.head:self.head + self.n].copy() for kind, s in keep}
        for s in (0, 1):
            self.pos[s] = xp.empty((rows, 2), self.real)
            self.vel[s] = xp.empty((rows, 2), self.real)
            self.ids[s] = xp.empty(rows, xp.int32)
        for (kind, s), rows_kept in kept.items():
            getattr(self, kind)[s][head:head + rows_kept.shape[0]] = rows_kept
        for name in ("bin", "offset"):  # the step's bins and offsets survive too
            old, new = getattr(self, name, None), xp.empty(cap, xp.int32)
            if old is not None:
                new[:old.shape[0]] = old
            setattr(self, name, new)
        self.head, self.cap = head, cap

    def _room(self, below: int, mine: int, above: int, keep) -> None:
        if below > self.head or mine > self.cap or mine + above > self.cap + self.head:
            self._grow(2 * max(below, above, self.head), int(1.25 * mine) + 1024, keep)

    # --- the kernels --------------------------------------------------------------------------------
    def _grid(self, n: int, block: int = 256):
        return grid_for(n, block)

    def _count_bins(self, pos, n: int, bins, offsets) -> None:
        self.k["count_bins"](*self._grid(n), (pos, np.int32(n), self.real(self.inv_width), np.int32(self.nb), bins,
                                              offsets, self.count))

    def _scatter(self, n: int, bins, offsets, source, dest) -> None:
        self.k["scatter"](*self._grid(n), (bins, offsets, self.start, np.int32(n), *source, *dest))

    def _scan(self, w0: int, w1: int) -> None:
        """Bin starts of bins [w0, w1) relative to the first (start[w0] = 0); their counts cleared."""
        m = w1 - w0
        if self.variant == "blockscan":  # the report's three launches, on the window
            blocks = ceil_div(m, 2 * SCAN_BLOCK)
            self.k["scan_blocks"]((blocks,), (SCAN_BLOCK,), (self.count[w0:w1], np.int32(m), self.start[w0:],
                                                             self.block_sums), shared_mem=2 * SCAN_BLOCK * 4)
            self.k["scan_totals"]((1,), (1024,), (self.block_sums, np.int32(blocks)))
            self.k["add_sums"]((blocks,), (SCAN_BLOCK,), (self.start[w0:], np.int32(m), self.block_sums))
        else:
            self.xp.cumsum(self.count[w0:w1], dtype=self.xp.int32, out=self.start[w0 + 1:w1 + 1])
            self.count[w0:w1] = 0
        self.start[w0] = 0

    def _rows(self, first: int, last: int) -> slice:
        return slice(first * self.nb, last * self.nb)

    # --- one step -----------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return getattr(self, "_n", 0)

    def step(self) -> None:
        xp, n = self.xp, self.n
        with self.timer.stage("ghosts"):
            self._ghosts()
        h = self.head  # (the room may have grown)
        with self.timer.stage("forces+move"):
            if n:
                stats = self.stats[self.t] if self.stats_on else np.uint64(0)
                self.k["step"](*self._grid(n, self.block), (
                    self.pos[0][h:], self.vel[0][h:], self.start, np.int32(n), self.real(self.size),
                    self.real(self.inv_width), np.int32(self.nb), self.pos[1][h:], self.vel[1][h:], self.bin,
                    self.offset, self.count, stats))
        self.t += 1
        with self.timer.stage("counts"):  # the counts I made in my neighbours' rows, and theirs in mine
            sends, recvs = [], []
            if self.below is not None:
                sends.append((self.below, self.count[self._rows(self.row0 - 1, self.row0)]))
                recvs.append((self.below, self.imm["below"]))
            if self.above is not None:
                sends.append((self.above, self.count[self._rows(self.row1, self.row1 + 1)]))
                recvs.append((self.above, self.imm["above"]))
            self.link.exchange(sends, recvs)
            self.bytes_sent += sum(a.nbytes for _, a in sends)
            for side, rows in (("below", self._rows(self.row0, self.row0 + 1)),
                               ("above", self._rows(self.row1 - 1, self.row1))):
                if (self.below if side == "below" else self.above) is not None:
                    self.saved[side][...] = self.count[rows]
                    self.count[rows] += self.imm[side]
        with self.timer.stage("bin"):
            w0, w1 = max(self.row0 - 1, 0) * self.nb, min(self.row1 + 1, self.nb) * self.nb
            self._scan(w0, w1)
            info = self.host(xp.concatenate([self.start[self.probe].astype(xp.int64),
                                             xp.stack([self.imm["below"].sum(), self.imm["above"].sum()])
                                             .astype(xp.int64)]))
            total, s_lo, s_hi, bottom_end, top_begin, k_below, k_above = (int(v) for v in info)
            stray = total != n + k_below + k_above  # one of mine left the window (or more than arrived)
            mine = s_hi - s_lo
            everywhere = self._agree(stray, mine, bottom_end - s_lo, s_hi - top_begin)
            if everywhere:
                self._everywhere()
        if everywhere:
            self.timer.frame_done()
            return
        with self.timer.stage("bin"):
            self._room(s_lo, mine, total - s_hi, keep=(("pos", 1), ("vel", 1), ("ids", 0)))
            h = self.head
            x = h - s_lo  # the sorted run starts here, so that mine begin at the head
            self._scatter(n, self.bin, self.offset, (self.pos[1][h:], self.vel[1][h:], self.ids[0][h:]),
                          (self.pos[0][x:], self.vel[0][x:], self.ids[1][x:]))
            self.ids[0], self.ids[1] = self.ids[1], self.ids[0]
            self.start[self.row0 * self.nb:self.row1 * self.nb + 1] -= s_lo
        with self.timer.stage("migrate"):
            self._migrate(s_lo, mine, total - s_hi, k_below, k_above)
        self.migrants += s_lo + total - s_hi
        self._n = mine
        self.timer.frame_done()

    def _ghosts(self) -> None:
        """My boundary rows to the neighbours, theirs into the room around mine; their bins' starts."""
        n, nb = self.n, self.nb
        g_below, g_above = self.ghosts_in
        self._room(g_below, n, g_above, keep=(("pos", 0), ("vel", 0), ("ids", 0)))
        h = self.head
        pos = self.pos[0]
        sends, recvs = [], []
        if self.below is not None:
            bottom = self.start[self.row0 * nb:(self.row0 + 1) * nb + 1]  # relative to my first: no shift
            sends += [(self.below, pos[h:h + self.bottom]), (self.below, bottom)]
            recvs += [(self.below, pos[h - g_below:h]), (self.below, self.seg["below"])]
        if self.above is not None:
            first = n - self.top
            top = self.start[(self.row1 - 1) * nb:self.row1 * nb + 1] - np.int32(first)
            sends += [(self.above, pos[h + first:h + n]), (self.above, top)]
            recvs += [(self.above, pos[h + n:h + n + g_above]), (self.above, self.seg["above"])]
        self.link.exchange(sends, recvs)
        self.bytes_sent += sum(a.nbytes for _, a in sends)
        if self.below is not None:
            self.start[self._rows(self.row0 - 1, self.row0)] = self.seg["below"][:nb] - np.int32(g_below)
            if self.row0 >= 2:  # the tiled kernel's slab may start a row lower: an empty row there
                self.start[self._rows(self.row0 - 2, self.row0 - 1)] = -g_below
        if self.above is not None:
            self.start[self.row1 * nb:(self.row1 + 1) * nb + 1] = self.seg["above"] + np.int32(n)
            if self.row1 + 2 <= nb:  # and end a row higher
                self.start[(self.row1 + 1) * nb + 1:(self.row1 + 2) * nb + 1] = n + g_above

    def _migrate(self, e_below: int, mine: int, e_above: int, k_below: int, k_above: int) -> None:
        """Those that left go to the neighbours; those that arrive go into the slots kept for them."""
        xp, h = self.xp, self.head
        state = (self.pos[0], self.vel[0], self.ids[0])
        arriving = {}
        sends, recvs = [], []
        for side, peer, rows, k in (("below", self.below, slice(h - e_below, h), k_below),
                                    ("above", self.above, slice(h + mine, h + mine + e_above), k_above)):
            if peer is None:
                continue
            sends += [(peer, a[rows]) for a in state]
            arriving[side] = (xp.empty((k, 2), self.real), xp.empty((k, 2), self.real), xp.empty(k, xp.int32))
            recvs += [(peer, a) for a in arriving[side]]
        self.link.exchange(sends, recvs)
        self.bytes_sent += sum(a.nbytes for _, a in sends)
        for side, rows in (("below", self._rows(self.row0, self.row0 + 1)),
                           ("above", self._rows(self.row1 - 1, self.row1))):
            if side in arriving and arriving[side][2].shape[0]:
                k = arriving[side][2].shape[0]
                bins, offsets = xp.empty(k, xp.int32), xp.empty(k, xp.int32)
                self.count[rows] = self.saved[side]  # offsets continue after my own particles of each bin
                self._count_bins(arriving[side][0], k, bins, offsets)
                self._scatter(k, bins, offsets, arriving[side], (self.pos[0][h:], self.vel[0][h:], self.ids[0][h:]))
        for rows in (self._rows(self.row0, self.row0 + 1), self._rows(self.row1 - 1, self.row1)):
            self.count[rows] = 0

    def _agree(self, stray: bool, mine: int | None = None, bottom: int = 0, top: int = 0) -> bool:
        """All-gather (stray flag, particles, bottom row, top row) of every rank; True if any rank had a
        stray. Sets the ghost counts for the next step."""
        if mine is None:
            mine, bottom, top = self.n, self.bottom, self.top
        table = self.comm.allgather(np.array([int(stray), mine, bottom, top], np.int64))
        if table[:, 0].any():
            return True
        self.bottom, self.top = bottom, top
        self.ghosts_in = (int(table[self.below, 3]) if self.below is not None else 0,
                          int(table[self.above, 2]) if self.above is not None else 0)
        return False

    # --- the rare way: every particle to its owner ---------------------------------------------------
    def _everywhere(self) -> None:
        """Some particle moved more than a bin row: bin every rank's moved particles over the whole box,
        send each run of rows to its owner (any rank), and re-bin what each rank owns."""
        xp, h, n, nb = self.xp, self.head, self.n, self.nb
        self.everywhere_steps += 1
        self.count[...] = 0
        self._count_bins(self.pos[1][h:], n, self.bin, self.offset)
        self._scan(0, nb * nb)
        self._scatter(n, self.bin, self.offset, (self.pos[1][h:], self.vel[1][h:], self.ids[0][h:]),
                      (self.pos[0][h:], self.vel[0][h:], self.ids[1][h:]))
        self.ids[0], self.ids[1] = self.ids[1], self.ids[0]
        bounds = self.host(self.start[xp.asarray(self.strips.cuts() * nb)]).astype(np.int64)
        out = np.diff(bounds)
        out[self.comm.rank] = 0
        incoming = self.comm.alltoall(out)
        me = self.comm.rank
        state = (self.pos[0], self.vel[0], self.ids[0])
        sends = [(q, a[h + bounds[q]:h + bounds[q + 1]]) for q in range(self.comm.size) if out[q] for a in state]
        arriving = [(q, (xp.empty((int(incoming[q]), 2), self.real), xp.empty((int(incoming[q]), 2), self.real),
                         xp.empty(int(incoming[q]), xp.int32))) for q in range(self.comm.size) if incoming[q]]
        self.link.exchange(sends, [(q, a) for q, arrays in arriving for a in arrays])
        self.bytes_sent += sum(a.nbytes for _, a in sends) + 8 * self.comm.size
        kept = slice(h + bounds[me], h + bounds[me + 1])
        parts = [tuple(a[kept] for a in state)] + [arrays for _, arrays in arriving]
        total = sum(p[2].shape[0] for p in parts)
        self._n = 0
        self._room(0, total, 0, keep=())
        h = self.head
        for k, name in enumerate(("pos", "vel", "ids")):
            getattr(self, name)[1][h:h + total] = xp.concatenate([p[k] for p in parts])
        self._rebin(total)
        self._agree(stray=False)

    def _rebin(self, m: int) -> None:
        """Set 1's rows [head, head + m), all in my strip, sorted by bin into set 0; starts for my rows."""
        h, nb = self.head, self.nb
        self._count_bins(self.pos[1][h:], m, self.bin, self.offset)
        self._scan(self.row0 * nb, self.row1 * nb)
        self._scatter(m, self.bin, self.offset, (self.pos[1][h:], self.vel[1][h:], self.ids[1][h:]),
                      (self.pos[0][h:], self.vel[0][h:], self.ids[0][h:]))
        total, bottom_end, top_begin = (int(v) for v in self.host(self.start[self.probe[2:]]))
        if total != m:
            raise RuntimeError(f"rank {self.comm.rank}: {m - total} of its {m} particles are outside its rows")
        self._n, self.bottom, self.top = m, bottom_end, m - top_begin

    # --- reading back ------------------------------------------------------------------------------
    def state(self) -> tuple[np.ndarray, ...]:
        """(ids, x, y, vx, vy) of my particles, float64 on the host."""
        h, n = self.head, self.n
        pos, vel = self.host(self.pos[0][h:h + n]), self.host(self.vel[0][h:h + n])
        ids = self.host(self.ids[0][h:h + n]).astype(np.int64)
        return ids, *(np.asarray(a, np.float64) for a in (pos[:, 0], pos[:, 1], vel[:, 0], vel[:, 1]))

    def positions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ids, x, y, _, _ = self.state()
        return ids, x, y

    def step_stats(self) -> np.ndarray:
        """(steps done, 3) float64: per step my closest pair, the sum of my pair distances, my pairs."""
        raw = self.host(self.stats[:self.t])
        out = np.empty((self.t, 3))
        out[:, 0] = raw[:, 0].view(np.float64)
        out[:, 1] = raw[:, 1].view(np.float64)
        out[:, 2] = raw[:, 2]
        return out
