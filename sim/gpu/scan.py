"""Prefix sums of int counts on the GPU, shared by the balls' grid, the particles' binning and an MPI rank's
window: ``CountScan`` launches the three kernels of ``sim/common/scan.cuh`` (in every build that includes
it) with no host wait. Its CPU twin is numpy's cumsum (tests/test_scan_gpu.py)."""

from __future__ import annotations

from typing import Any

from sim.gpu.cuda import ceil_div

SCAN_KERNELS = ("scan_reduce", "scan_totals", "scan_tiles")  # in every build that includes scan.cuh
SCAN_TILE = 4096  # scan.cuh's SCAN_TILE
SCAN_BLOCKS_PER_SM = 8  # scan_reduce's and scan_tiles' grid: 2048 threads an SM, taking the tiles in turns


class CountScan:
    """``start[: m + 1]`` = 0 then ``cumsum(count[:m])``, with the scan.cuh kernels of a build that
    includes it (``k``: that build's kernels), three launches and no host wait; ``clear`` zeroes the
    counts. ``length``: a device int32 array whose first value, when below m, is the number of counts
    to scan instead (only that prefix and ``start`` up to it are read or written). ``start`` must be
    16-byte aligned (a whole CuPy array is). ``xp``: the array module (CuPy; tests pass numpy, with kernels
    that stand in for the CUDA ones). ``blocks``: the grid of the two launches over the tiles (default
    SCAN_BLOCKS_PER_SM a multiprocessor of the current device, at most a block a tile): a step that scans
    nothing (``length`` 0) then launches a few blocks, not one a tile (10M particles: 8M bins, 1953 tiles;
    4.0 against 6.1 us a step that does not bin, on an H200)."""

    def __init__(self, k, m: int, xp: Any = None, blocks: int | None = None):
        if xp is None:
            import cupy

            xp = cupy
        self.k, self.m = k, int(m)
        self.tiles = max(1, ceil_div(self.m, SCAN_TILE))
        self.tile_sums = xp.empty(self.tiles, xp.int32)
        if blocks is None:
            sms = xp.cuda.Device().attributes["MultiProcessorCount"] if hasattr(xp, "cuda") else self.tiles
            blocks = SCAN_BLOCKS_PER_SM * sms
        self.blocks = max(1, min(self.tiles, int(blocks)))

    def __call__(self, count, start, clear: bool = False, length=None) -> None:
        import numpy as np

        m, tiles = np.int32(self.m), np.int32(self.tiles)
        length = np.uint64(0) if length is None else length
        self.k["scan_reduce"]((self.blocks,), (256,), (count, m, length, self.tile_sums))
        self.k["scan_totals"]((1,), (1024,), (self.tile_sums, tiles, length, np.int32(SCAN_TILE)))
        self.k["scan_tiles"]((self.blocks,), (256,), (count, m, length, self.tile_sums, start, np.int32(clear)))
