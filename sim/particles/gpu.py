"""CS 267 particles on the GPU (CuPy): particles read in bin order, one fused step kernel, a scan, an index.

Per step (no host round trip): ``step`` (forces from the 9 neighbour bins with one reciprocal
square root per pair, move, walls, count into the new bin), the prefix sum of the counts (three
launches of common/scan.cuh, or the report's three-launch block scan), ``place`` (each bin-order slot's source index,
and the occupied bins' counts cleared). The next step reads its particle and its neighbours through
that index and writes the moved state at its own slot, so the state arrays are in the order the last
step wrote them (``bin_order`` sorts them), not bin order: no pass writes the state in bin order. That
order is the last numbering's bin order with each particle moved once: while no move was longer than a
bin less the cutoff, the step reads the neighbours by row in the last numbering's bins (``row_start``),
without the index (all variants but tiled; binning.cu's LAST_BINS).
Variants:
- "plain": forces read the state arrays; the scan of common/scan.cuh (sim.gpu.cuda.CountScan);
- "tiled": each block stages its neighbourhood in shared memory;
- "blockscan": plain forces with the report's three-launch scan;
- "texture": plain, with positions and velocities fetched through texture objects.
Bins are kernels.BIN_CUTOFFS cutoffs wide. fp64 by default, fp32 as an option.
"""

from __future__ import annotations

import cupy
import numpy as np

from sim.gpu import cuda
from sim.gpu.cuda import ceil_div, grid_for
from sim.particles import kernels, world

VARIANTS = kernels.VARIANTS
SCAN_BLOCK = 512  # threads of scan_blocks; each scans two counts
MAX_TEXTURE_1D_LINEAR_WIDTH = 69  # cudaDevAttrMaxTexture1DLinearWidth: 2^27 texels on Hopper


class ParticlesGpu:
    def __init__(
        self,
        x,
        y,
        vx,
        vy,
        size: float,
        variant: str = "plain",
        precision: str = "fp64",
        block: int = 256,
        stats: bool = True,
        device: int = 0,
    ):
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r} (choose from {', '.join(VARIANTS)})")
        if precision not in ("fp64", "fp32"):
            raise ValueError(f"unknown precision {precision!r} (fp64 or fp32)")
        self.real = np.float64 if precision == "fp64" else np.float32
        self.variant, self.precision, self.block, self.stats_on = variant, precision, int(block), stats
        self.device = int(device)
        self.k = cuda.kernels(kernels.step(variant, precision, self.block, stats), self.device)
        self.n = n = x.shape[0]
        self.size = size
        self.nb = max(1, int(size / (world.CUTOFF * kernels.BIN_CUTOFFS)))
        self.inv_width = self.nb / size  # bins of side size / nb, at least the reach
        self.bins = self.nb * self.nb
        # (pos (n, 2), vel (n, 2), ids): x, y pairs side by side, one wide load per particle
        state = [
            cupy.asarray(np.column_stack([x, y]), self.real),
            cupy.asarray(np.column_stack([vx, vy]), self.real),
            cupy.arange(n, dtype=cupy.int32),
        ]
        self.buffers = [[cupy.empty_like(a) for a in state], state]  # the state starts in set 1
        self.cur = 1
        self.bin = cupy.empty(n, cupy.int32)
        self.offset = cupy.empty(n, cupy.int32)
        self.count = cupy.zeros(self.bins, cupy.int32)
        self.start = cupy.zeros(self.bins + 1, cupy.int32)  # the bins of the numbering the next step's slots are in
        self.row_start = cupy.zeros(self.bins + 1, cupy.int32)  # those of the numbering the rows are in
        # LAST_BINS: far[0] whether the rows are not in row_start's bins to within a bin less the cutoff (the
        # last step moved some particle further, or they were binned afresh); the step sets far[1], place rolls it
        self.by_row = variant != "tiled"
        self.far = cupy.ones(2, cupy.int32) if self.by_row else None
        self.margin = self.real(size / self.nb - world.CUTOFF - size / self.nb / 100)  # 1% of a bin for rounding
        self.scan_blocks = ceil_div(self.bins, 2 * SCAN_BLOCK)
        self.block_sums = cupy.empty(self.scan_blocks, cupy.int32)
        self.count_scan = cuda.CountScan(self.k, self.bins)
        if stats:
            self.stat = cupy.zeros(3, cupy.uint64)
            self.stat[0] = np.float64(1.0).view(np.uint64)
            self.totals = cupy.asarray([1.0, 0.0, 0.0])  # absmin, sum of per-step averages, steps with pairs
        self.perm = cupy.empty(n, cupy.int32)
        # TEXTURE: one texture object per buffer the step reads (both sets' positions and velocities)
        self.textures = (
            [[linear_texture(a, self.real, self.device) for a in s[:2]] for s in self.buffers]
            if variant == "texture"
            else None
        )
        self._bin()

    def load_state(self, x, y, vx, vy) -> None:
        """Replace the state with host arrays of the same count in the particles' own order (a step finished
        on the host: a user's force kernel), binned afresh into the same buffers (textures and a captured
        graph stay valid)."""
        pos, vel, ids = self.buffers[self.cur]
        pos.set(np.column_stack([x, y]).astype(self.real))
        vel.set(np.column_stack([vx, vy]).astype(self.real))
        ids[:] = cupy.arange(self.n, dtype=cupy.int32)
        self._bin()

    # --- every step re-sorted ------------------------------------------------------------------
    def _bin(self) -> None:
        """Bin the current set from scratch (the counts are clear): count, scan, each slot's source. The
        rows are in no bin order: the next step reads through the index (far)."""
        if self.far is not None:
            self.far[1] = 1
        self.k["count_bins"](
            *grid_for(self.n, 256),
            (
                self.buffers[self.cur][0],
                np.int32(self.n),
                self.real(self.inv_width),
                np.int32(self.nb),
                self.bin,
                self.offset,
                self.count,
            ),
        )
        self._scan()
        self._reorder()

    def _scan(self) -> None:
        if self.variant == "blockscan":  # the report's three launches; they clear the counts too
            m = np.int32(self.bins)
            self.k["scan_blocks"](
                (self.scan_blocks,),
                (SCAN_BLOCK,),
                (self.count, m, self.start, self.block_sums),
                shared_mem=2 * SCAN_BLOCK * 4,
            )
            self.k["scan_totals"]((1,), (1024,), (self.block_sums, np.int32(self.scan_blocks)))
            self.k["add_sums"]((self.scan_blocks,), (SCAN_BLOCK,), (self.start, m, self.block_sums))
        else:
            self.count_scan(self.count, self.start)  # place clears the counts

    def _reorder(self) -> None:
        """Each bin-order slot's source index (the next step reads through it); the counts cleared."""
        far = (self.far,) if self.far is not None else ()
        self.k["place"](
            *grid_for(self.n, 256), (self.bin, self.offset, self.start, np.int32(self.n), self.perm, self.count, *far)
        )

    def prepared_step(self) -> tuple:
        """The fused step's launch from the current set into the other (forces, move, walls, the count into
        the new bins), ready to queue: (kernel, grid, block, arguments)."""
        a, b = self.buffers[self.cur], self.buffers[1 - self.cur]
        source = self.textures[self.cur] if self.textures else a[:2]
        grid, block = grid_for(self.n, self.block)
        return (
            self.k["step"],
            grid,
            block,
            (
                *source,
                self.start,
                np.int32(self.n),
                self.real(self.size),
                self.real(self.inv_width),
                np.int32(self.nb),
                *b[:2],
                self.bin,
                self.offset,
                self.count,
                self._stats_arg(),
                self.perm,
                a[2],
                b[2],
                *((self.row_start, self.far, self.margin) if self.by_row else ()),
            ),
        )

    def step(self, timer) -> None:
        fn, grid, block, args = self.prepared_step()
        with timer.stage("forces+move"):
            fn(grid, block, args)
            self._fold_stats()
        self.cur = 1 - self.cur
        # the rows are now in this step's numbering; the scan numbers the next step's slots in the other starts
        self.start, self.row_start = self.row_start, self.start
        with timer.stage("bin"):
            self._scan()
            self._reorder()

    def _stats_arg(self):
        return self.stat if self.stats_on else np.uint64(0)

    def _fold_stats(self) -> None:
        if self.stats_on:
            self.k["fold_stats"]((1,), (1,), (self.stat, self.totals))

    # --- reading back ------------------------------------------------------------------------
    @property
    def state(self) -> list:
        """x, y, vx, vy (views of the pairs) and ids of the current set, in the order the last step wrote
        them (slot i of the last bin order by thread i; ``bin_order`` sorts them)."""
        pos, vel, ids = self.buffers[self.cur]
        return [pos[:, 0], pos[:, 1], vel[:, 0], vel[:, 1], ids]

    @property
    def bin_order(self):
        """Indices of ``state`` in bin order (the next step's slots)."""
        return self.perm

    def _by_id(self, arrays) -> list[np.ndarray]:
        """Device arrays in ``state``'s order -> float64 host arrays in the particles' own order."""
        ids = self.buffers[self.cur][2]
        out = []
        for a in arrays:
            o = cupy.empty(self.n, cupy.float64)
            o[ids] = a
            out.append(cupy.asnumpy(o))
        return out

    def host_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """x, y in the particles' original order (for the course's output file)."""
        x, y = self._by_id(self.state[:2])
        return x, y

    def host_state(self) -> tuple[np.ndarray, ...]:
        """x, y, vx, vy (float64) in the original order."""
        return tuple(self._by_id(self.state[:4]))

    def sorted_host_state(self) -> tuple[np.ndarray, ...]:
        """x, y, vx, vy (float64) and ids, in the device's order (``state``'s)."""
        *arrays, ids = self.state
        return tuple(cupy.asnumpy(a).astype(np.float64) for a in arrays) + (cupy.asnumpy(ids),)

    def distance_stats(self) -> tuple[float, float, int]:
        """(absmin, sum of per-step mean distances, steps with pairs), read from the device."""
        absmin, total, steps = (float(v) for v in self.totals.get())
        return absmin, total, int(steps)


def texture_limit(device: int) -> int:
    """The most texels of a 1D texture over linear memory on ``device``."""
    from cupy.cuda import runtime

    return runtime.deviceGetAttribute(MAX_TEXTURE_1D_LINEAR_WIDTH, device)


def linear_texture(a, real, device: int):
    """A texture object over the (n, 2) array ``a``: fp64 pairs as int4 texels (the kernel reassembles
    the doubles with __hiloint2double; textures have no 64-bit float channels), fp32 pairs as float2."""
    from cupy.cuda import runtime, texture

    texels = a.shape[0]
    limit = texture_limit(device)
    if texels > limit:
        raise ValueError(
            f"the texture variant reads at most {limit} particles on this GPU (a 1D texture over "
            f"linear memory has at most that many texels); {texels} asked: use plain"
        )
    if real == np.float64:
        channels = texture.ChannelFormatDescriptor(32, 32, 32, 32, runtime.cudaChannelFormatKindSigned)
    else:
        channels = texture.ChannelFormatDescriptor(32, 32, 0, 0, runtime.cudaChannelFormatKindFloat)
    resource = texture.ResourceDescriptor(runtime.cudaResourceTypeLinear, arr=a, chDesc=channels, sizeInBytes=a.nbytes)
    sampling = texture.TextureDescriptor(
        filterMode=runtime.cudaFilterModePoint, readMode=runtime.cudaReadModeElementType
    )
    return texture.TextureObject(resource, sampling)
