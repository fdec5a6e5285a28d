"""The particles' step on the CPU (numba): bin, then forces and the move; bit-identical to the
course's O(n^2) starter (see binning_cpu.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.particles import binning_cpu


@dataclass
class HostParticles:
    x: np.ndarray
    y: np.ndarray
    vx: np.ndarray
    vy: np.ndarray
    ax: np.ndarray = field(init=False)
    ay: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.x, self.y, self.vx, self.vy = (
            np.ascontiguousarray(a, np.float64) for a in (self.x, self.y, self.vx, self.vy)
        )
        self.ax = np.zeros(self.x.shape[0])
        self.ay = np.zeros(self.x.shape[0])

    @property
    def n(self) -> int:
        return self.x.shape[0]


def distances(p: HostParticles, nbins: int, bins, start, members, forces: bool = True):
    """Forces into p.ax, p.ay (zero when ``forces`` is off) and the step's distance statistics
    (closest pair, sum of pair distances, pairs) in cutoffs."""
    n = p.n
    dmin, dsum, dcount = np.empty(n), np.empty(n), np.empty(n, np.int64)
    ax, ay = (p.ax, p.ay) if forces else (np.zeros(n), np.zeros(n))
    binning_cpu.forces(p.x, p.y, ax, ay, nbins, bins, start, members, dmin, dsum, dcount)
    if not forces:
        p.ax[:] = 0.0
        p.ay[:] = 0.0
    return float(dmin.min(initial=1.0)), float(dsum.sum()), int(dcount.sum())


def step(p: HostParticles, size: float, nbins: int, timer, forces: bool = True):
    """One step; returns the step's distance statistics. ``forces=False``: the course's control run
    (the particles drift through each other, absavg ~ 0.67: both of its warnings)."""
    with timer.stage("bin"):
        bins, start, members = binning_cpu.sort_into_bins(p.x, p.y, size, nbins)
    with timer.stage("forces+move"):
        stats = distances(p, nbins, bins, start, members, forces)
        binning_cpu.move(p.x, p.y, p.vx, p.vy, p.ax, p.ay, size)
    return stats


def stepped_copy(x, y, vx, vy, size: float, nbins: int):
    """The state after one CPU step from copies of (x, y, vx, vy) (for verification)."""
    p = HostParticles(x.copy(), y.copy(), vx.copy(), vy.copy())
    bins, start, members = binning_cpu.sort_into_bins(p.x, p.y, size, nbins)
    distances(p, nbins, bins, start, members)
    binning_cpu.move(p.x, p.y, p.vx, p.vy, p.ax, p.ay, size)
    return p
