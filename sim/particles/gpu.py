"""CS 267 particles on the GPU (CuPy): state kept sorted by bin, one fused step kernel, a scan and a scatter.

Per step (no host round trip): ``step`` (forces from the 9 neighbour bins, move, walls, count
into the new bin), the prefix sum of the counts (CuPy's cumsum, or the report's three-launch
block scan), ``scatter`` into the new bin order. Variants: "plain" (forces read the sorted arrays),
"tiled" (each block stages its neighbourhood in shared memory), "blockscan" (plain forces with the
report's scan). fp64 by default, fp32 as an option.
"""

from __future__ import annotations

import cupy
import numpy as np

from sim.gpu import ROOT, grid_for, load_module
from sim.particles import world

SOURCE = ROOT / "sim" / "particles" / "particles.cu"
VARIANTS = ("plain", "tiled", "blockscan")
SCAN_BLOCK = 512  # threads of scan_blocks; each scans two counts


def kernels(variant: str, real: str, block: int, stats: bool):
    options = ["--std=c++17", f"-DREAL={real}", f"-DBLOCK={block}"]
    if variant == "tiled":
        options.append("-DTILED")
    if stats:
        options.append("-DSTATS")
    names = ("count_bins", "scatter", "step", "scan_blocks", "scan_sums", "add_sums")
    names += ("fold_stats",) if stats else ()
    return load_module(SOURCE, tuple(options), names)


class ParticlesGpu:
    def __init__(self, x, y, vx, vy, size: float, variant: str = "plain", precision: str = "fp64",
                 block: int = 256, stats: bool = True, bin_width: float = world.CUTOFF):
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r} (choose from {', '.join(VARIANTS)})")
        if precision not in ("fp64", "fp32"):
            raise ValueError(f"unknown precision {precision!r} (fp64 or fp32)")
        self.real = np.float64 if precision == "fp64" else np.float32
        self.variant, self.precision, self.block, self.stats_on = variant, precision, int(block), stats
        self.k = kernels(variant, "double" if precision == "fp64" else "float", self.block, stats)
        self.n = n = x.shape[0]
        self.size = size
        self.nb = max(1, int(size / bin_width))
        self.inv_width = self.nb / size  # bins of side size / nb >= bin_width
        self.bins = self.nb * self.nb
        self.state = [cupy.asarray(a, self.real) for a in (x, y, vx, vy)] + [cupy.arange(n, dtype=cupy.int32)]
        self.spare = [cupy.empty_like(a) for a in self.state]
        self.bin = cupy.empty(n, cupy.int32)
        self.offset = cupy.empty(n, cupy.int32)
        self.count = cupy.zeros(self.bins, cupy.int32)
        self.start = cupy.zeros(self.bins + 1, cupy.int32)
        self.scan_blocks = -(-self.bins // (2 * SCAN_BLOCK))
        self.block_sums = cupy.empty(self.scan_blocks, cupy.int32)
        if stats:
            self.stat = cupy.zeros(3, cupy.uint64)
            self.stat[0] = np.float64(1.0).view(np.uint64)
            self.totals = cupy.asarray([1.0, 0.0, 0.0])  # absmin, sum of per-step averages, steps with pairs
        self.k["count_bins"](*grid_for(n, 256), (*self.state[:2], np.int32(n), self.real(self.inv_width),
                                                 np.int32(self.nb), self.bin, self.offset, self.count))
        self._scan()
        self._scatter(self.state, self.spare)

    def _scan(self) -> None:
        if self.variant == "blockscan":
            m = np.int32(self.bins)
            self.k["scan_blocks"]((self.scan_blocks,), (SCAN_BLOCK,), (self.count, m, self.start, self.block_sums),
                                  shared_mem=2 * SCAN_BLOCK * 4)
            self.k["scan_sums"]((1,), (1024,), (self.block_sums, np.int32(self.scan_blocks)))
            self.k["add_sums"]((self.scan_blocks,), (SCAN_BLOCK,), (self.start, m, self.block_sums))
        else:
            cupy.cumsum(self.count, dtype=cupy.int32, out=self.start[1:])

    def _scatter(self, source, target) -> None:
        self.k["scatter"](*grid_for(self.n, 256), (self.bin, self.offset, self.start, np.int32(self.n), *source,
                                                   *target))
        self.state, self.spare = target, source
        self.count.fill(0)

    def step(self, timer) -> None:
        x, y, vx, vy, ids = self.state
        nx, ny, nvx, nvy, nids = self.spare
        with timer.stage("forces+move"):
            self.k["step"](*grid_for(self.n, self.block), (
                x, y, vx, vy, self.start, np.int32(self.n), self.real(self.size), self.real(self.inv_width),
                np.int32(self.nb), nx, ny, nvx, nvy, self.bin, self.offset, self.count,
                self.stat if self.stats_on else np.uint64(0)))
            if self.stats_on:
                self.k["fold_stats"]((1,), (1,), (self.stat, self.totals))
        with timer.stage("bin"):  # ids stay put in the step; the scatter carries them
            self._scan()
            self._scatter([nx, ny, nvx, nvy, ids], [x, y, vx, vy, nids])

    # --- reading back ------------------------------------------------------------------------
    def host_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """x, y in the particles' original order (for the course's output file)."""
        x, y, _, _, ids = self.state
        ox = cupy.empty(self.n, cupy.float64)
        oy = cupy.empty(self.n, cupy.float64)
        ox[ids] = x
        oy[ids] = y
        return cupy.asnumpy(ox), cupy.asnumpy(oy)

    def host_state(self) -> tuple[np.ndarray, ...]:
        """x, y, vx, vy (float64) in the original order."""
        *arrays, ids = self.state
        out = []
        for a in arrays:
            o = cupy.empty(self.n, cupy.float64)
            o[ids] = a
            out.append(cupy.asnumpy(o))
        return tuple(out)

    def sorted_host_state(self) -> tuple[np.ndarray, ...]:
        """x, y, vx, vy (float64) and ids, in the device's (bin-sorted) order."""
        *arrays, ids = self.state
        return tuple(cupy.asnumpy(a).astype(np.float64) for a in arrays) + (cupy.asnumpy(ids),)

    def distance_stats(self) -> tuple[float, float, int]:
        """(absmin, sum of per-step mean distances, steps with pairs), read from the device."""
        absmin, total, steps = (float(v) for v in self.totals.get())
        return absmin, total, int(steps)

    def bytes_per_particle(self) -> float:
        return cupy.get_default_memory_pool().used_bytes() / max(self.n, 1)
