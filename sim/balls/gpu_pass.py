"""The balls' proximity pass on the GPU (CuPy), in four variants: ``ProximityPass``, which ``BallsGpu``
(gpu.py) inherits; its methods work on the state that class holds (declared below, set in ``BallsGpu.load``).

A proximity pass reorders the state into the order its kernel walks (by z_max for the z-sweep, by
grid cell for the grid), so a ball's index is its thread's index: partners are near in memory, and
"colour by CUDA block" is index // block. The step before a grid pass also takes the bounds the
pass's grid needs (``step(before_pass=True)``). A grid pass's scatter moves only the positions; the
search (bound by its instructions, not its bytes) moves velocities, spins and ids on its way.

Host round trips: one per proximity pass (every six steps), reading four numbers together:
fallen balls (sorted last, then dropped), the longest partner list (overflow: rebuild with room,
so no pair is lost), the tests and the pairs. Nothing else waits for the device inside a step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import cupy
import numpy as np

from sim.balls import world
from sim.balls.kernels import SETUP_THREADS, STEP_BLOCK, grid_max_cells
from sim.gpu import cuda
from sim.gpu.cuda import grid_for
from sim.gpu.scan import CountScan
from sim.pairs import lists_from_pairs

FIRST_CAPACITY = 16  # partner slots per ball; grows on overflow


@dataclass
class PassResult:
    tests: int
    pairs: int
    fallen: int


class ProximityPass:
    """The proximity pass and the partner lists it leaves, as methods of ``BallsGpu``."""

    # the state BallsGpu holds (gpu.py) that the pass reads and writes
    n: int
    variant: str
    block: int
    fallen_y: float
    sm_count: int
    kernels: Mapping[str, Any]
    pos: Any
    vel: Any
    spin_yz: Any
    ids: Any
    _spare: tuple
    capacity: int
    stride: int
    count: Any
    partners: Any
    summary: Any
    textures: dict[tuple[int, int], Any]
    _bounds_of: Any
    _cell_count: Any
    _scan: CountScan | None
    _bounds: Any
    _order: Any
    _swap: Callable[[], None]

    # --- proximity pass --------------------------------------------------------------------
    def proximity_pass(
        self, timer, lifetime: float = world.PAIR_LIFETIME, margin: float = world.PROXIMITY_MARGIN
    ) -> PassResult:
        """Sort, search, and drop fallen balls; one host round trip (two when lists overflow)."""
        n = self.n
        if n == 0:
            return PassResult(0, 0, 0)
        self._size_lists(n)
        self.summary.fill(0)
        with timer.stage("sort"):
            if self.variant == "grid":
                self._sort_by_cell(n, lifetime, margin)
            else:
                self._sort_by_zmax(n, lifetime)
        with timer.stage("proximity"):
            self._search(n, lifetime, margin)
            fallen, longest, tests, found = (int(v) for v in self.summary.get())
            if longest > self.capacity:  # grow and search again: no pair is ever dropped
                self.capacity = 1 << math.ceil(math.log2(longest))
                self.partners = cupy.empty(self.capacity * self.stride, cupy.int32)
                self.summary[1:].fill(0)
                self._search(n, lifetime, margin)
        self.n = n - fallen
        return PassResult(tests, found // 2 if self.variant == "grid" else found, fallen)

    def _size_lists(self, n: int) -> None:
        if self.stride != n or self.count.shape[0] < n:
            self.stride = n
            self.count = cupy.zeros(n, cupy.int32)
            self.partners = cupy.empty(self.capacity * n, cupy.int32)

    def _reorder(self, order, n: int) -> None:
        out = self._spare
        self.kernels["reorder"](*grid_for(n, STEP_BLOCK), (order, np.int32(n), self.pos, self.vel, self.spin_yz, *out))
        self._swap()
        self.ids = self.ids[order]
        self.textures = {}

    def _sort_by_zmax(self, n: int, lifetime: float) -> None:
        z_max = cupy.empty(n, cupy.float32)
        z_min = cupy.empty(n, cupy.float32)
        self.kernels["sweep_keys"](
            *grid_for(n, STEP_BLOCK),
            (
                self.pos,
                self.vel,
                np.int32(n),
                np.float32(lifetime),
                np.float32(self.fallen_y),
                z_max,
                z_min,
                self.summary,
            ),
        )
        order = cupy.argsort(z_max)  # fallen balls have z_max = inf: they sort last
        self._reorder(order, n)
        self.z_max, self.z_min = z_max[order], z_min[order]

    def _sort_by_cell(self, n: int, lifetime: float, margin: float) -> None:
        """Counting sort by grid cell: atomic counts, prefix sum, scatter of the positions (the search
        moves the rest, _search). The counts stay allocated between passes, zero: the prefix sum clears
        them as it reads them."""
        max_cells = grid_max_cells(n)
        cells = 2 * max_cells + 1  # at most: the fine cells, as many coarse ones (grid_setup.cuh), the fallen
        if self._cell_count is None or self._cell_count.size < cells:
            self._cell_count = cupy.zeros(cells, cupy.int32)
            self.cell_start = cupy.zeros(cells + 1, cupy.int32)  # the scan writes [0 .. Grid.cells]
        if self._bounds_of is self.pos:  # the last step took them from this state
            bounds = self._bounds
        else:
            bounds = self._bounds_start.copy()
            blocks = min(cuda.ceil_div(n, STEP_BLOCK), 8 * self.sm_count)
            self.kernels["grid_bounds"](
                (blocks,), (STEP_BLOCK,), (self.pos, self.vel, np.int32(n), np.float32(self.fallen_y), bounds)
            )
        self._bounds_of = None
        self.grid = cupy.empty(15, cupy.int32)  # struct Grid (grid.cuh): origin, cells, bounds, the split
        fallen_y = np.float32(self.fallen_y)
        setup = (self.pos, self.vel, np.int32(n), fallen_y, bounds, np.float32(lifetime), np.float32(margin))
        self.kernels["grid_setup"]((1,), (SETUP_THREADS,), (*setup, np.int64(max_cells), self.grid))
        rank = cupy.empty(n, cupy.int32)
        self.kernels["grid_count"](
            *grid_for(n, STEP_BLOCK),
            (self.pos, self.vel, np.int32(n), self.grid, fallen_y, rank, self._cell_count, self.summary),
        )
        if self._scan is None or self._scan.m != cells or self._scan.k is not self.kernels:
            self._scan = CountScan(self.kernels, cells)
        # only the grid's cells and the fallen balls' (Grid.cells, known on the device) are scanned
        self._scan(self._cell_count, self.cell_start, clear=True, length=self.grid[9:])
        pos_out, self._order = self._spare[0], cupy.empty(n, cupy.int32)
        self.kernels["grid_scatter"](
            *grid_for(n, STEP_BLOCK),
            (self.grid, fallen_y, rank, self.cell_start, np.int32(n), self.pos, self.vel, pos_out, self._order),
        )
        self._spare = (self.pos, *self._spare[1:])
        self.pos = pos_out  # the rest follows in the search (_search)
        self.textures = {}

    @property
    def _bounds_start(self):
        """min x, y, z = +inf and max x, y, z, radius, speed^2 = -inf, as the kernels' ordered ints."""
        if not hasattr(self, "_bounds0"):
            inf = np.array([np.inf] * 3 + [-np.inf] * 5, np.float32).view(np.int32)
            self._bounds0 = cupy.asarray(np.where(inf >= 0, inf, inf ^ 0x7FFFFFFF).astype(np.int32))
        return self._bounds0

    def _texture(self, array):
        """A texture object over a float4 array's linear memory, kept while the array lives."""
        key = (array.data.ptr, array.nbytes)
        if key not in self.textures:
            from cupy.cuda import runtime, texture

            channels = texture.ChannelFormatDescriptor(32, 32, 32, 32, runtime.cudaChannelFormatKindFloat)
            resource = texture.ResourceDescriptor(
                runtime.cudaResourceTypeLinear, arr=array, chDesc=channels, sizeInBytes=array.nbytes
            )
            sampling = texture.TextureDescriptor(readMode=runtime.cudaReadModeElementType)
            self.textures[key] = texture.TextureObject(resource, sampling)
        return self.textures[key]

    def _search(self, n: int, lifetime: float, margin: float) -> None:
        block = self.block
        common = (np.int32(n), np.float32(lifetime), np.float32(margin))
        lists = (np.int32(self.capacity), np.int32(self.stride), self.count, self.partners, self.summary)
        if self.variant == "grid":
            order, self._order = self._order, None  # None: searching again, the state is sorted already
            if order is None:
                moving = (np.uint64(0),) * 4
            else:  # the scatter moved the positions only: the search moves the rest into its order
                moving = (order, self._spare[1], self._spare[2], cupy.empty(n, cupy.int32))
            self.kernels["sweep"](
                *grid_for(n, block),
                (
                    self.pos,
                    self.vel,
                    self.spin_yz,
                    self.ids,
                    *moving,
                    self.grid,
                    self.cell_start,
                    *common,
                    np.float32(self.fallen_y),
                    *lists,
                ),
            )
            if order is not None:
                self._spare = (self._spare[0], self.vel, self.spin_yz)
                self.vel, self.spin_yz, self.ids = moving[1:]
            # the fast balls' pairs where the grid is split (grid_fast.cuh); a few blocks that return at once if not
            blocks = min(cuda.ceil_div(n, block), 4 * self.sm_count)
            fast = (self.pos, self.vel, self.grid, self.cell_start, *common, np.float32(self.fallen_y))
            self.kernels["sweep_fast"]((blocks,), (block,), (*fast, *lists))
            return
        self.count[:n].fill(0)
        fn, grid, threads, args, shared = self.prepared_sweep(lifetime, margin, n)
        fn(grid, threads, args, shared_mem=shared)

    def take_sorted(self, z_max, z_min, capacity: int) -> None:
        """Balls loaded already in the z-sweep's order, with their keys (host or device float32) and room for
        ``capacity`` partners a ball: ``prepared_sweep`` then searches them as a pass does after its sort."""
        self.z_max, self.z_min = cupy.asarray(z_max, cupy.float32), cupy.asarray(z_min, cupy.float32)
        self.capacity = int(capacity)
        self.partners = cupy.empty(self.capacity * self.stride, cupy.int32)

    def prepared_sweep(self, lifetime: float, margin: float, n: int | None = None) -> tuple:
        """A z-sweep's search of the sorted balls, ready to queue: (kernel, grid, block, arguments, dynamic
        shared bytes). It adds to ``count``, which must be zero before each launch."""
        n = self.n if n is None else n
        block = self.block
        if self.variant == "texture":
            textures = (self._texture(self.pos[:n]), self._texture(self.vel[:n]))
        else:
            textures = (np.uint64(0), np.uint64(0))
        shared = 36 * block if self.variant == "shared" else 0
        grid, threads = grid_for(n, block)
        lists = (np.int32(self.capacity), np.int32(self.stride), self.count, self.partners, self.summary)
        return (
            self.kernels["sweep"],
            grid,
            threads,
            (
                self.pos,
                self.vel,
                *textures,
                self.z_max,
                self.z_min,
                np.int32(n),
                np.float32(lifetime),
                np.float32(margin),
                *lists,
            ),
            shared,
        )

    # --- what the pass found ---------------------------------------------------------------
    def host_lists(self) -> tuple[np.ndarray, np.ndarray]:
        """(count (n,), partners (n, capacity)) of the live balls, on the host."""
        n = self.n
        count = cupy.asnumpy(self.count[:n])
        slots = cupy.asnumpy(self.partners.reshape(self.capacity, self.stride)[:, :n]).T
        return count, slots

    def set_lists(self, pairs: np.ndarray) -> None:
        """Install a pair list computed elsewhere (the CPU twin), as symmetric per-ball lists."""
        n = self.n
        count, slots = lists_from_pairs(pairs, n, FIRST_CAPACITY)
        capacity = 1 << math.ceil(math.log2(slots.shape[1]))
        slot_major = np.zeros((capacity, n), np.int32)
        slot_major[: slots.shape[1]] = np.maximum(slots, 0).T
        self.capacity, self.stride = capacity, n
        self.count = cupy.asarray(count.astype(np.int32))
        self.partners = cupy.asarray(slot_major.ravel())
