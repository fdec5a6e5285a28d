"""The balls' pipeline on the GPU (CuPy): device state and the step (``BallsGpu``); the proximity pass, in
four variants, is ``ProximityPass`` (gpu_pass.py), which ``BallsGpu`` inherits.

State: 40 bytes a ball, double-buffered (each step reads one set and writes the other): float4 pos
(x, y, z, radius), float4 vel (vx, vy, vz, spin x) and float2 spin_yz (spin y, z). The step is bound
by the bytes it moves; ``host_state`` and ``rows`` give (pos, vel, omega) as float4 rows again.
"""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np

from sim.balls import kernels, world
from sim.balls.gpu_pass import FIRST_CAPACITY, ProximityPass
from sim.gpu import cuda
from sim.gpu.cuda import grid_for
from sim.gpu.scan import CountScan

VARIANTS = world.PROXIMITY_VARIANTS
STEP_BLOCK = kernels.STEP_BLOCK
# state x2, the grid's cell counts and starts (room for eight cells a ball: fine and coarse), partner slots, sort
# scratch
BYTES_PER_BALL = 2 * 40 + 16 * 4 + 16 * 4 + 8 * 4


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


class BallsGpu(ProximityPass):
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
        self._scan: CountScan | None = None  # their prefix sum, kept while the cell count and kernels stay
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
        contact = world.contact_args(settings, trough, zeta, dt)
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
