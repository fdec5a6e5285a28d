"""CS 267 particles on the GPU (CuPy): a fused step kernel, binned afresh only when the particles may have
left their bins.

Per step (no host round trip): ``step`` (forces from the 9 neighbour bins with one reciprocal square root
per pair, move, walls; the state written at the thread's own row, the largest move kept), then the
binning, which the device decides: ``rebin_count`` (whether the moves since the last numbering may sum to
a bin less the cutoff; if so each particle counted into its bin, unless the step counted them), the prefix
sum of the counts, clearing them (three launches of common/scan.cuh, or the report's three-launch block
scan) and ``rebin_place`` (each slot's source row, the ids in slot order; whether the next step is
foreseen to bin, and so counts); when not binning they return at once. Right after
a binning the step reads each slot's particle and neighbours through that index and writes them in bin
order; on the other steps it reads by row (the rows are in the numbering's order, each particle within the
margin of its bin there). binning.cu's header has the whole of it.
Variants:
- "plain": forces read the state arrays; the scan of common/scan.cuh (sim.gpu.scan.CountScan);
- "tiled": each block copies the slots it reads (three runs, one a bin row) to shared memory first;
- "blockscan": plain forces with the report's three-launch scan;
- "texture": plain, with positions and velocities fetched through texture objects.
Bins are kernels.BIN_CUTOFFS cutoffs wide. fp64 by default, fp32 as an option.
"""

from __future__ import annotations

import cupy
import numpy as np

from sim.gpu import cuda
from sim.gpu.cuda import ceil_div, grid_for
from sim.gpu.scan import CountScan
from sim.particles import kernels, world

VARIANTS = kernels.VARIANTS
MAX_TEXTURE_1D_LINEAR_WIDTH = 69  # cudaDevAttrMaxTexture1DLinearWidth: 2^27 texels on Hopper
REBIN_BLOCKS_PER_SM = 8  # rebin_count and rebin_place stride over the particles: 2048 threads an SM
UNKNOWN_DRIFT = int(np.float32(np.inf).view(np.int32))  # calm[2] before a first binning: bin now


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
        # positions and velocities, (n, 2): x, y pairs side by side, one wide load per particle; two sets,
        # the step reads one and writes the other
        state = [cupy.asarray(np.column_stack([x, y]), self.real), cupy.asarray(np.column_stack([vx, vy]), self.real)]
        self.buffers = [[cupy.empty_like(a) for a in state], state]  # the state starts in set 1
        self.cur = 1
        self.ids = cupy.arange(n, dtype=cupy.int32)  # each row's particle (moved only by a binning's step)
        self.id_sorted = cupy.empty(n, cupy.int32)  # the ids in slot order, from a binning to its step
        self.bin = cupy.empty(n, cupy.int32)
        self.offset = cupy.empty(n, cupy.int32)
        self.count = cupy.zeros(self.bins, cupy.int32)
        self.start = cupy.zeros(self.bins + 1, cupy.int32)  # each bin's first slot in the numbering
        self.perm = cupy.empty(n, cupy.int32)  # slot -> row, from a binning to its step
        # calm: [0] the next step reads through perm, [1] this step's binning (the scan's length: bins or 0),
        # [2] the drift since the numbering, [3] the last step's largest move (floats' bits), [4] the next
        # step counts into bins for the binning it is foreseen to end with (binning.cu)
        self.calm = cupy.zeros(5, cupy.int32)
        self.binning = self.calm[1:2]
        bin_side = size / self.nb
        self.margin = np.float32(bin_side - world.CUTOFF - bin_side / 100)  # 1% of a bin for rounding
        sms = cuda.device_properties(self.device)["multiProcessorCount"]
        self.rebin_grid = ((min(ceil_div(n, 256), REBIN_BLOCKS_PER_SM * sms),), (256,))
        self.block_sums = cupy.empty(ceil_div(self.bins, 2 * kernels.SCAN_BLOCK), cupy.int32)
        self.count_scan = CountScan(self.k, self.bins)
        if stats:
            self.stat = cupy.zeros(3, cupy.uint64)
            self.stat[0] = np.float64(1.0).view(np.uint64)
            self.totals = cupy.asarray([1.0, 0.0, 0.0])  # absmin, sum of per-step averages, steps with pairs
        # TEXTURE: one texture object per buffer the step reads (both sets' positions and velocities)
        self.textures = (
            [[linear_texture(a, self.real, self.device) for a in s] for s in self.buffers]
            if variant == "texture"
            else None
        )
        self._bin()

    def load_state(self, x, y, vx, vy) -> None:
        """Replace the state with host arrays of the same count in the particles' own order (a step finished
        on the host: a user's force kernel), binned afresh into the same buffers (textures and a captured
        graph stay valid)."""
        pos, vel = self.buffers[self.cur]
        pos.set(np.column_stack([x, y]).astype(self.real))
        vel.set(np.column_stack([vx, vy]).astype(self.real))
        self.ids[:] = cupy.arange(self.n, dtype=cupy.int32)
        self._bin()

    def _bin(self) -> None:
        """Bin the current set afresh (the counts are clear): the next step reads through the index."""
        self.forget_numbering()
        self._rebin()

    def forget_numbering(self) -> None:
        """The next binning launches bin whatever the drift, counting the particles themselves."""
        self.calm[2:5] = cupy.asarray([UNKNOWN_DRIFT, 0, 0], cupy.int32)

    # --- a step ------------------------------------------------------------------------------------
    def _rebin(self) -> None:
        """The binning after a step, if the device finds the rows may have left their bins: count, scan,
        each slot's source row. Otherwise each launch returns at once and the drift grows by the step's move."""
        self.k["rebin_count"](
            *self.rebin_grid,
            (
                self.buffers[self.cur][0],
                np.int32(self.n),
                self.real(self.inv_width),
                np.int32(self.nb),
                self.bin,
                self.offset,
                self.count,
                self.calm,
                self.margin,
                np.int32(self.bins),
            ),
        )
        self._scan()
        self.k["rebin_place"](
            *self.rebin_grid,
            (
                self.bin,
                self.offset,
                self.start,
                np.int32(self.n),
                self.perm,
                self.ids,
                self.id_sorted,
                self.calm,
                self.margin,
            ),
        )

    def _scan(self) -> None:
        if self.variant == "blockscan":  # the report's three launches; they clear the counts too
            kernels.report_scan(self.k, self.count, self.bins, self.start, self.block_sums, self.binning)
        else:
            self.count_scan(self.count, self.start, clear=True, length=self.binning)

    def prepared_step(self) -> tuple:
        """The fused step's launch from the current set into the other (forces, move, walls, the largest
        move kept, the particles counted into bins when a binning is foreseen), ready to queue: (kernel,
        grid, block, arguments)."""
        source = self.textures[self.cur] if self.textures else self.buffers[self.cur]
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
                *self.buffers[1 - self.cur],
                self.bin,
                self.offset,
                self.count,
                self._stats_arg(),
                self.perm,
                self.id_sorted,
                self.ids,
                self.calm,
            ),
        )

    def step(self, timer) -> None:
        fn, grid, block, args = self.prepared_step()
        with timer.stage("forces+move"):
            fn(grid, block, args)
            self._fold_stats()
        self.cur = 1 - self.cur
        with timer.stage("bin"):
            self._rebin()

    def _stats_arg(self):
        return self.stat if self.stats_on else kernels.NULL

    def _fold_stats(self) -> None:
        if self.stats_on:
            self.k["fold_stats"]((1,), (1,), (self.stat, self.totals))

    # --- reading back ------------------------------------------------------------------------
    @property
    def state(self) -> list:
        """x, y, vx, vy (views of the pairs) and ids of the current set, in the order the steps wrote them
        (row i by thread i; the last binning's order, each particle moved since; ``bin_order`` sorts them)."""
        pos, vel = self.buffers[self.cur]
        return [pos[:, 0], pos[:, 1], vel[:, 0], vel[:, 1], self.ids]

    @property
    def bin_order(self):
        """Right after a binning (on creation, ``load_state``): indices of ``state`` in bin order."""
        return self.perm

    def _by_id(self, arrays) -> list[np.ndarray]:
        """Device arrays in ``state``'s order -> float64 host arrays in the particles' own order."""
        ids = self.ids
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
