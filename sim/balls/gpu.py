"""The balls' pipeline on the GPU (CuPy): device state, the proximity pass in four variants, the step.

State: 40 bytes a ball, double-buffered (each step reads one set and writes the other): float4 pos
(x, y, z, radius), float4 vel (vx, vy, vz, spin x) and float2 spin_yz (spin y, z). The step is bound
by the bytes it moves; ``host_state`` and ``rows`` give (pos, vel, omega) as float4 rows again.
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
from dataclasses import dataclass
from typing import Any

import cupy
import numpy as np

from sim.balls import kernels, world
from sim.gpu import cuda
from sim.gpu.cuda import grid_for
from sim.pairs import lists_from_pairs

VARIANTS = world.PROXIMITY_VARIANTS
STEP_BLOCK = kernels.STEP_BLOCK
FIRST_CAPACITY = 16  # partner slots per ball; grows on overflow
BYTES_PER_BALL = 2 * 40 + 4 * 4 + 16 * 4 + 8 * 4  # state x2, keys/bins, partner slots, sort scratch


@dataclass
class PassResult:
    tests: int
    pairs: int
    fallen: int


def check_memory(n: int) -> None:
    """Refuse early, with a clear message, a ball count the device cannot hold."""
    free, total = cupy.cuda.runtime.memGetInfo()
    need = n * BYTES_PER_BALL
    pool = cupy.get_default_memory_pool()
    if need > free + pool.free_bytes():
        raise MemoryError(
            f"{n:,} balls need about {need / 2**30:.1f} GiB of GPU memory; "
            f"{(free + pool.free_bytes()) / 2**30:.1f} GiB of {total / 2**30:.1f} GiB is free"
        )


class BallsGpu:
    """Device state and kernels for one balls scene."""

    def __init__(
        self,
        pos: np.ndarray,
        vel: np.ndarray,
        omega: np.ndarray,
        variant: str = "grid",
        block: int = 128,
        fallen_y: float = -60.0,
        device: int = 0,
        ids: np.ndarray | None = None,
    ):
        self.device = int(device)
        check_memory(pos.shape[0])
        self.fallen_y = fallen_y  # balls below are dropped at the next pass
        self.sm_count = cuda.device_properties(self.device)["multiProcessorCount"]
        self.variant, self.block = variant, block
        self.set_variant(variant)
        self.set_block(block)
        self._step = cuda.kernel(kernels.STEP, self.device)
        self._step_bounds = cuda.kernels(kernels.STEP_BOUNDS, self.device)
        self.load(pos, vel, omega, ids)

    # --- configuration -------------------------------------------------------------------
    def set_variant(self, variant: str) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r} (choose from {', '.join(VARIANTS)})")
        self.kernels = cuda.kernels(kernels.proximity(variant, self.block), self.device)
        self.variant = variant

    def set_block(self, block: int) -> None:
        block = int(block)
        if not (32 <= block <= 1024 and block % 32 == 0):
            raise ValueError(f"block size must be a multiple of 32 from 32 to 1024, got {block}")
        self.kernels = cuda.kernels(kernels.proximity(self.variant, block), self.device)
        self.block = block

    # --- state ---------------------------------------------------------------------------
    def load(self, pos: np.ndarray, vel: np.ndarray, omega: np.ndarray, ids: np.ndarray | None = None) -> None:
        """The balls' state; ``ids`` name them (default: their index here, which CPU physics lending the
        device its state maps the pass's lists back with)."""
        n = pos.shape[0]
        self.pos, self.vel, self.spin_yz = (cupy.asarray(a) for a in packed(pos, vel, omega))
        self._spare = tuple(cupy.empty_like(a) for a in (self.pos, self.vel, self.spin_yz))
        self.n = n
        self.capacity = FIRST_CAPACITY
        self.stride = n
        self.count = cupy.zeros(max(n, 1), cupy.int32)
        self.partners = cupy.empty(self.capacity * max(n, 1), cupy.int32)
        self.summary = cupy.zeros(4, cupy.uint64)  # fallen, longest list on overflow, tests, pairs
        # each ball's id through every reorder and drop
        self.ids = cupy.arange(n, dtype=cupy.int32) if ids is None else cupy.asarray(ids, cupy.int32)
        self.textures: dict[tuple[int, int], Any] = {}  # CuPy texture objects by (pointer, bytes)
        self._bounds_of = None  # the state whose bounds the last step took (step(before_pass=True))
        self._cell_count = None  # the grid's cell counts, kept zero between passes
        self._scan: cuda.CountScan | None = None  # their prefix sum, kept while the cell count and kernels stay
        self._warp_boxes = None  # the step's per-warp boxes before a pass
        self._bounds = cupy.empty(8, cupy.int32)  # the box they fold into
        self._order = None  # a grid pass's order (sorted index -> previous) from its scatter to its search

    def append(self, pos: np.ndarray, vel: np.ndarray, ids: np.ndarray) -> None:
        """Add balls named ``ids`` (between passes): they join the next pass."""
        new = packed(pos, vel, np.zeros((pos.shape[0], 4), np.float32))  # no spin
        self.pos, self.vel, self.spin_yz = (
            cupy.concatenate([a[: self.n], cupy.asarray(b)])
            for a, b in zip((self.pos, self.vel, self.spin_yz), new, strict=True)
        )
        self._spare = tuple(cupy.empty_like(a) for a in (self.pos, self.vel, self.spin_yz))
        self.ids = cupy.concatenate([self.ids[: self.n], cupy.asarray(ids, cupy.int32)])
        self.n = self.pos.shape[0]
        self.textures = {}

    def host_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pos, vel, omega) of the live balls as (n, 4) float32 host arrays (vel and omega w = 0)."""
        n = self.n
        return unpacked(*(cupy.asnumpy(a[:n]) for a in (self.pos, self.vel, self.spin_yz)))

    def host_ids(self) -> np.ndarray:
        """The live balls' ids, in the device's order (``host_state``'s)."""
        return cupy.asnumpy(self.ids[: self.n]).astype(np.int64)

    def rows(self, at) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pos, vel, omega) rows of the balls at device indices ``at``, as ``host_state`` gives them."""
        return unpacked(*(a[at].get() for a in (self.pos, self.vel, self.spin_yz)))

    def _swap(self) -> None:
        spare = self._spare
        self._spare = (self.pos, self.vel, self.spin_yz)
        self.pos, self.vel, self.spin_yz = spare

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
        max_cells = 2 * n  # a cell per ball or so; cells grow past this
        cells = max_cells + 1  # at most: the grid's cells, then the fallen balls' cell
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
        self.grid = cupy.empty(10, cupy.int32)  # struct Grid: origin, cell side, dims, bounds, cells
        self.kernels["grid_setup"](
            (1,), (1,), (bounds, np.float32(lifetime), np.float32(margin), np.int64(max_cells), self.grid)
        )
        rank = cupy.empty(n, cupy.int32)
        fallen_y = np.float32(self.fallen_y)
        self.kernels["grid_count"](
            *grid_for(n, STEP_BLOCK), (self.pos, np.int32(n), self.grid, fallen_y, rank, self._cell_count, self.summary)
        )
        if self._scan is None or self._scan.m != cells or self._scan.k is not self.kernels:
            self._scan = cuda.CountScan(self.kernels, cells)
        # only the grid's cells and the fallen balls' (Grid.cells, known on the device) are scanned
        self._scan(self._cell_count, self.cell_start, clear=True, length=self.grid[9:])
        pos_out, self._order = self._spare[0], cupy.empty(n, cupy.int32)
        self.kernels["grid_scatter"](
            *grid_for(n, STEP_BLOCK),
            (self.grid, fallen_y, rank, self.cell_start, np.int32(n), self.pos, pos_out, self._order),
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

    # --- drawing -------------------------------------------------------------------------------
    def write_points(self, pos_out, quantity_out, mode: int, block: int) -> None:
        """Positions and the quantity of colour mode ``mode`` (``render_cpu.QUANTITY_MODES``) into (n, 4)
        and (n,) arrays (the mapped GL buffers), one kernel."""
        n = self.n
        cuda.kernel(kernels.RENDER, self.device)(
            *grid_for(n, STEP_BLOCK),
            (self.pos, self.vel, self.count, np.int32(n), np.int32(mode), np.int32(block), pos_out, quantity_out),
        )

    # --- the step ----------------------------------------------------------------------------
    def step(self, settings, trough, zeta: float, dt: float, before_pass: bool = False) -> None:
        """One step; ``before_pass``: a grid pass comes next, so the step also takes the bounds of the
        state it writes (the pass then need not read the whole state for them)."""
        n = self.n
        if n == 0:
            return
        contact = contact_args(settings, trough, zeta, dt)
        out = self._spare
        bounds = before_pass and self.variant == "grid"
        grid = grid_for(n, STEP_BLOCK)
        warps = grid[0][0] * STEP_BLOCK // 32
        if bounds:
            if self._warp_boxes is None or self._warp_boxes.size < 8 * warps:
                self._warp_boxes = cupy.empty(8 * warps, cupy.int32)
            boxes, kernel = self._warp_boxes, self._step_bounds["step"]
        else:
            boxes, kernel = np.uint64(0), self._step
        kernel(
            *grid,
            (
                self.pos,
                self.vel,
                self.spin_yz,
                *out,
                self.count,
                self.partners,
                np.int32(self.stride),
                np.int32(n),
                *contact,
                np.float32(self.fallen_y),
                boxes,
            ),
        )
        if bounds:
            self._bounds[...] = self._bounds_start
            blocks = min(cuda.ceil_div(warps, STEP_BLOCK), 4 * self.sm_count)
            self._step_bounds["fold_bounds"]((blocks,), (STEP_BLOCK,), (boxes, np.int32(warps), self._bounds))
        self._swap()
        self._bounds_of = self.pos if bounds else None


def packed(pos: np.ndarray, vel: np.ndarray, omega: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, 4) pos, vel, omega -> the device layout: pos, vel with the spin's x in w, the spin's y, z."""
    pos = np.ascontiguousarray(pos, np.float32)
    vel = np.array(vel, np.float32)
    vel[:, 3] = omega[:, 0]
    return pos, vel, np.ascontiguousarray(omega[:, 1:3], np.float32)


def unpacked(pos: np.ndarray, vel: np.ndarray, spin_yz: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The device layout -> (n, 4) pos, vel, omega (w of vel and omega 0)."""
    omega = np.zeros_like(vel)
    omega[:, 0], omega[:, 1:3] = vel[:, 3], spin_yz
    vel = vel.copy()
    vel[:, 3] = 0.0
    return pos, vel, omega


def contact_args(settings, trough, zeta: float, dt: float) -> tuple:
    """The contact model's kernel arguments (struct Contact of contact.cuh, in order)."""
    return (
        np.float32(world.DENSITY),
        np.float32(settings.contact_freq),
        np.float32(zeta),
        np.float32(settings.friction),
        np.float32(settings.rolling),
        np.float32(settings.gravity),
        np.float32(dt),
        np.float32(trough.radius),
        np.float32(trough.z_min),
        np.float32(trough.z_max),
    )
