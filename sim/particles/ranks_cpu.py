"""One rank's particles on the CPU: bit-identical to the one-process CPU run for any rank count.

The one-process step adds each particle's neighbours in increasing index, which is id order there.
Here a rank keeps its particles, and the ghosts it receives, in id order: the local index order is
then the id order, and the existing step (binning_cpu: bins, forces, move) adds the same forces in
the same order, so every position and velocity has the same bits. Per step:

1. ghosts: the particles of my bottom bin row go to the rank below, my top row to the rank above
   (x, y and id); theirs come back;
2. my particles and the ghosts, merged in id order, are binned and their forces added; only my
   particles' accelerations are kept (a ghost's neighbours are not all here), and they move;
3. migration: particles whose bin row is now another rank's go there with their id, velocity
   included (any distance: a particle kicked across the box goes straight to its new owner).
"""

from __future__ import annotations

import numba
import numpy as np

from sim.gpu.timing import StageTimer
from sim.particles import binning_cpu
from sim.particles.strips import Strips

STAGES = ("ghosts", "forces+move", "migrate")


@numba.njit(cache=True)
def bin_rows(y, size, nbins):
    """The bin row of each particle, computed exactly as binning_cpu.sort_into_bins does."""
    width = size / nbins
    rows = np.empty(y.shape[0], np.int64)
    for i in range(y.shape[0]):
        rows[i] = min(int(y[i] / width), nbins - 1)
    return rows


class CpuRank:
    def __init__(self, comm, x, y, vx, vy, ids, size: float):
        self.comm, self.size = comm, size
        self.nbins = binning_cpu.bin_count(size)
        self.strips = Strips(self.nbins, comm.size)
        self.row0, self.row1 = self.strips.bounds(comm.rank)
        self.below, self.above = self.strips.neighbours(comm.rank)
        x, y, vx, vy = (np.ascontiguousarray(a, np.float64) for a in (x, y, vx, vy))
        self._set(x, y, vx, vy, np.asarray(ids, np.int64))
        self.timer = StageTimer(STAGES)
        self.bytes_sent = 0  # ghosts and migrants (and their counts) this rank has sent

    def _set(self, x, y, vx, vy, ids) -> None:
        order = np.argsort(ids, kind="stable")
        self.x, self.y, self.vx, self.vy = (np.ascontiguousarray(a[order]) for a in (x, y, vx, vy))
        self.ids = ids[order]

    @property
    def n(self) -> int:
        return self.x.shape[0]

    def step(self) -> tuple[float, float, int]:
        """One step of my particles; their distance statistics (closest pair, sum, pairs)."""
        with self.timer.stage("ghosts"):
            rows = bin_rows(self.y, self.size, self.nbins)
            gx, gy, gid = self._ghosts(rows)
        with self.timer.stage("forces+move"):
            stats = self._forces_and_move(gx, gy, gid)
        with self.timer.stage("migrate"):
            self._migrate()
        self.timer.frame_done()
        return stats

    def _send(self, sends, recv_rows: dict[int, int], width: int) -> dict[int, np.ndarray]:
        """Counts, then rows of ``width`` float64 values, to and from the neighbours in ``sends``."""
        counts = {peer: np.array([rows.shape[0]], np.int64) for peer, rows in sends}
        got = {peer: np.zeros(1, np.int64) for peer in recv_rows}
        self.comm.exchange(list(counts.items()), list(got.items()))
        data = {peer: np.empty((int(c[0]), width)) for peer, c in got.items()}
        self.comm.exchange(sends, list(data.items()))
        self.bytes_sent += sum(8 + rows.nbytes for _, rows in sends)
        return data

    def _ghosts(self, rows):
        sends = []
        for peer, row in ((self.below, self.row0), (self.above, self.row1 - 1)):
            if peer is not None:
                mine = rows == row
                sends.append((peer, np.column_stack([self.x[mine], self.y[mine], self.ids[mine].astype(np.float64)])))
        got = self._send(sends, {p: 0 for p in (self.below, self.above) if p is not None}, 3)
        ghosts = np.concatenate([np.empty((0, 3)), *got.values()])
        return ghosts[:, 0], ghosts[:, 1], ghosts[:, 2].astype(np.int64)

    def _forces_and_move(self, gx, gy, gid) -> tuple[float, float, int]:
        n = self.n
        order = np.argsort(np.concatenate([self.ids, gid]), kind="stable")  # id order: the starter's order
        x = np.ascontiguousarray(np.concatenate([self.x, gx])[order])
        y = np.ascontiguousarray(np.concatenate([self.y, gy])[order])
        where = np.empty_like(order)
        where[order] = np.arange(order.shape[0])
        own = where[:n]  # my particles' places among the merged ones
        m = x.shape[0]
        ax, ay, dmin, dsum = np.empty(m), np.empty(m), np.empty(m), np.empty(m)
        dcount = np.empty(m, np.int64)
        bins, start, members = binning_cpu.sort_into_bins(x, y, self.size, self.nbins)
        binning_cpu.forces(x, y, ax, ay, self.nbins, bins, start, members, dmin, dsum, dcount)
        binning_cpu.move(self.x, self.y, self.vx, self.vy, ax[own], ay[own], self.size)
        return float(dmin[own].min(initial=1.0)), float(dsum[own].sum()), int(dcount[own].sum())

    def _migrate(self) -> None:
        if self.comm.size == 1:
            return
        owners = self.strips.owners(bin_rows(self.y, self.size, self.nbins))
        leaving = owners != self.comm.rank
        out = np.bincount(owners[leaving], minlength=self.comm.size).astype(np.int64)
        incoming = self.comm.alltoall(out)
        state = np.column_stack([self.x, self.y, self.vx, self.vy, self.ids.astype(np.float64)])
        sends = [(q, state[owners == q]) for q in range(self.comm.size) if out[q]]
        recvs = [(q, np.empty((int(incoming[q]), 5))) for q in range(self.comm.size) if incoming[q]]
        self.comm.exchange(sends, recvs)
        self.bytes_sent += 8 * self.comm.size + sum(rows.nbytes for _, rows in sends)
        merged = np.concatenate([state[~leaving], *(rows for _, rows in recvs)])
        x, y, vx, vy = (merged[:, k].copy() for k in range(4))
        self._set(x, y, vx, vy, merged[:, 4].astype(np.int64))

    def positions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids, x, y) of my particles."""
        return self.ids, self.x, self.y

    def state(self) -> tuple[np.ndarray, ...]:
        """(ids, x, y, vx, vy) of my particles."""
        return self.ids, self.x, self.y, self.vx, self.vy
