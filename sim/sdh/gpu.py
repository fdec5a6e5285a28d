"""The distance histogram kernels on the GPU (CuPy): launch shapes, shared memory, CUDA-event timing."""

from __future__ import annotations

import cupy
import numpy as np

from sim import cuda
from sim.sdh import kernels
from sim.sdh.kernels import ATOMS, KERNELS


def spare_slots_for(buckets: int) -> int:
    """Counters past the course's last bucket that a far-corner pair can reach (its 1.732 is below
    sqrt 3: at most buckets * (sqrt 3 / 1.732 - 1) < 3e-5 buckets), plus room for float32 rounding."""
    return int(buckets * 3e-5) + 3


class KernelError(ValueError):
    """A kernel cannot run with these settings (block size, shared memory); the message says why."""


def launch_shape(kernel: str, n: int, block: int, buckets: int, device: int = 0) -> tuple[int, int, bool]:
    """(blocks, dynamic shared bytes, lane counters?); KernelError for a block size or bucket count it cannot take.

    The fast kernel counts per lane when the columns fit in shared memory, else per warp (atomics).
    """
    if not 1 <= block <= 1024:
        raise KernelError(f"block size must be 1..1024, got {block}")
    if kernel == "fast" and block % 32:
        raise KernelError(f"the fast kernel keeps a histogram per warp: block size must be a multiple of 32, "
                          f"got {block}")
    if kernel in ("naive", "naive-priv"):
        blocks, shared = -(-n // block), 0
    elif kernel in ("tiled", "tiled-priv"):
        blocks, shared = -(-n // block), 3 * 8 * block
    limit = cupy.cuda.runtime.getDeviceProperties(device)["sharedMemPerBlockOptin"]
    lanes = False
    if kernel == "fast":
        warps = block // 32
        blocks = -(-n // (ATOMS * block))
        slots = buckets + spare_slots_for(buckets)
        lane_bytes = ((warps * 32 * slots + 3) & ~3) * 4 + 16 * block
        lanes = lane_bytes <= limit // 2  # leave room for a second block per SM
        shared = lane_bytes if lanes else ((warps * slots + 3) & ~3) * 4 + 16 * block
    if kernel.endswith("priv"):
        shared += 8 * buckets
    if shared > limit:
        raise KernelError(f"kernel {kernel} needs {shared:,} bytes of shared memory for {buckets:,} buckets at block "
                          f"{block} ({limit:,} available): use a larger bucket width or another kernel")
    return blocks, shared, lanes


def histogram(points, width: float, buckets: int, kernel: str = "fast", block: int = 256,
              repeats: int = 1, device: int = 0) -> tuple[np.ndarray, float]:
    """(counts int64, median kernel milliseconds over ``repeats`` runs, CUDA events, transfers excluded)."""
    with cupy.cuda.Device(device):
        return _histogram(points, width, buckets, kernel, block, repeats, device)


def _histogram(points, width, buckets, kernel, block, repeats, device):
    if kernel not in KERNELS:
        raise KernelError(f"unknown kernel {kernel!r} (choose from {', '.join(KERNELS)})")
    n = points.shape[0]
    blocks, shared, lanes = launch_shape(kernel, n, block, buckets, device)
    p = cupy.ascontiguousarray(cupy.asarray(points), dtype=cupy.float64)  # host or device points
    x, y, z = (cupy.ascontiguousarray(p[:, k]) for k in range(3))
    args = (x, y, z, np.int64(n), np.float64(width), np.int32(buckets))
    if kernel == "fast":
        xf = cupy.zeros((n, 4), cupy.float32)
        xf[:, :3] = p * (1.0 / width)  # float32 copies in bucket units, rounded to nearest
        args = (xf, *args, np.int32(buckets + spare_slots_for(buckets)))
    fn = cuda.kernel(kernels.histogram(kernel, block, lanes), device)
    if shared > 48 * 1024:
        fn.max_dynamic_shared_size_bytes = shared
    hist = cupy.empty(buckets, cupy.uint64)
    times = []
    for _ in range(max(1, repeats)):
        hist.fill(0)
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn((blocks,), (block,), (*args, hist), shared_mem=shared)
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
    return hist.get().astype(np.int64), float(np.median(times))
