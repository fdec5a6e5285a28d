"""The distance histogram kernels on the GPU (CuPy): launch shapes, shared memory, CUDA-event timing."""

from __future__ import annotations

import cupy
import numpy as np

from sim.gpu import cuda
from sim.gpu.cuda import KernelError, ceil_div, device_properties
from sim.sdh import kernels, squares
from sim.sdh.kernels import KERNELS, rows_per_block


def spare_slots_for(buckets: int) -> int:
    """Counters past the course's last bucket that a far-corner pair can reach (its 1.732 is below
    sqrt 3: at most buckets * (sqrt 3 / 1.732 - 1) < 3e-5 buckets), plus room for float32 rounding."""
    return int(buckets * 3e-5) + 3


def fine_slots(buckets: int) -> int:
    """The tensor kernels' counters (one per integer of the squared distance in bucket units) for atoms in
    the course's cube: its diagonal is at most buckets * sqrt 3 / 1.732 buckets long."""
    return (buckets + 1) ** 2 + 2


def launch_shape(
    kernel: str, n: int, block: int, buckets: int, device: int = 0, slots: int | None = None
) -> tuple[int, int, bool]:
    """(blocks, dynamic shared bytes, lane counters?); KernelError for a block size or bucket count it cannot take.

    The fast kernel counts per lane when the columns fit in shared memory, else per warp (atomics). The
    tensor kernels need ``slots`` counters (``arguments``'s, or ``fine_slots`` for the course's cube) and a tile.
    """
    if not 1 <= block <= 1024:
        raise KernelError(f"block size must be 1..1024, got {block}")
    if kernel in ("fast", "tensor") and block % 32:
        raise KernelError(f"the {kernel} kernel works in whole warps: block size must be a multiple of 32, got {block}")
    if kernel in ("naive", "naive-priv"):
        blocks, shared = ceil_div(n, block), 0
    elif kernel in ("tiled", "tiled-priv"):
        blocks, shared = ceil_div(n, block), 3 * 8 * block
    limit = device_properties(device)["sharedMemPerBlockOptin"]
    lanes = False
    if kernel == "tensor":
        if slots is None:  # its counters depend on the points: ``arguments`` counts them
            raise KernelError("the tensor kernel's shape needs its counter count (sdh/gpu.py arguments or fine_slots)")
        blocks = ceil_div(n, rows_per_block(kernel, block))
        shared = 40 * block + 4 * slots  # the tile's B columns (32 bytes) and C (8), the 32-bit counters
        if rows_per_block(kernel, block) * n >= 2**32:  # a block's pairs could overflow one 32-bit counter
            raise KernelError(
                f"kernel {kernel} counts a block's pairs in 32-bit counters: at n={n:,} use a block size below {block}"
            )
    if kernel == "fast":
        warps = block // 32
        blocks = ceil_div(n, rows_per_block(kernel, block))
        slots = buckets + spare_slots_for(buckets)
        lane_bytes = ((warps * 32 * slots + 3) & ~3) * 4 + 16 * block
        lanes = lane_bytes <= limit // 2  # leave room for a second block per SM
        shared = lane_bytes if lanes else ((warps * slots + 3) & ~3) * 4 + 16 * block
    if kernel.endswith("priv"):
        shared += 8 * buckets
    if kernel == "tensor" and shared > limit:
        raise KernelError(
            f"the tensor kernel keeps a counter per whole squared distance in buckets: {slots:,} "
            f"counters ({buckets:,} buckets) need {shared:,} bytes of shared memory at block {block} "
            f"({limit:,} available); in the course's cube it needs a bucket width above "
            f"{kernels.tensor_min_width(block, limit):.4g}"
        )
    if shared > limit:
        raise KernelError(
            f"kernel {kernel} needs {shared:,} bytes of shared memory for {buckets:,} buckets at block "
            f"{block} ({limit:,} available): use a larger bucket width or another kernel"
        )
    return blocks, shared, lanes


def arguments(kernel: str, p, width: float, buckets: int) -> tuple[tuple, int | None, bool]:
    """(the kernel's arguments before the histogram, the tensor kernels' counter count, whether they may
    build with -DONE_ADD) for points ``p`` ((n, 3) float64 on the device)."""
    n = p.shape[0]
    x, y, z = (cupy.ascontiguousarray(p[:, k]) for k in range(3))
    args = (x, y, z, np.int64(n), np.float64(width), np.int32(buckets))
    if kernel == "fast":
        xf = cupy.zeros((n, 4), cupy.float32)
        xf[:, :3] = p * (1.0 / width)  # float32 copies in bucket units, rounded to nearest
        return (xf, *args, np.int32(buckets + spare_slots_for(buckets))), None, False
    if kernel != "tensor":
        return args, None, False
    qa, qb, cj, e, slots = squares.inputs(p, width, cupy)  # sdh/tensor.cuh's inputs and error bound
    return (
        (qa, qb, cj, x, y, z, np.int64(n), np.float64(width), np.int32(buckets), np.int32(slots), np.float64(2.0 * e)),
        slots,
        squares.one_add(e),
    )


def from_row(args: tuple, first: int) -> tuple:
    """``arguments``'s arguments for the atoms from row ``first`` on (the ranks' bands, sim.sdh.bands): every
    per-atom array a view from that row, the atom count (the one int64) less ``first``; the rest as they are."""
    return tuple(
        a[first:] if isinstance(a, cupy.ndarray) else np.int64(a - first) if isinstance(a, np.int64) else a
        for a in args
    )


def histogram(
    points, width: float, buckets: int, kernel: str = "fast", block: int = 256, repeats: int = 1, device: int = 0
) -> tuple[np.ndarray, float]:
    """(counts int64, median kernel milliseconds over ``repeats`` runs, CUDA events, transfers excluded)."""
    with cupy.cuda.Device(device):
        run, hist, _ = launcher(points, width, buckets, kernel, block, device)
        times = []
        for _ in range(max(1, repeats)):
            hist.fill(0)
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            run()
            end.record()
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, end))
        return hist.get().astype(np.int64), float(np.median(times))


def measured_histogram(points, width: float, buckets: int, kernel: str = "fast", block: int = 256, device: int = 0):
    """(counts int64, ``sim.gpu.measure.Timing`` of the kernel in milliseconds): the benchmark's harness, the
    L2 cache flushed between runs where the atoms and counters fit in it."""
    from sim.cmdline import interrupts
    from sim.gpu import measure

    with cupy.cuda.Device(device):
        run, hist, working_set = launcher(points, width, buckets, kernel, block, device)
        timing = measure.measure(
            run,
            measure.EventClock(),
            setup=lambda: hist.fill(0),
            flush=measure.l2_flush(working_set, device),
            between=interrupts.check,
        )
        return hist.get().astype(np.int64), timing


def launcher(points, width, buckets, kernel, block, device=0):
    """(a call that queues the kernel, its counters, the bytes it works on) for ``points`` (host or device),
    on the current device, which must be ``device``: the benches' and the user stage's built-in timings."""
    if kernel not in KERNELS:
        raise KernelError(f"unknown kernel {kernel!r} (choose from {', '.join(KERNELS)})")
    n = points.shape[0]
    p = cupy.ascontiguousarray(cupy.asarray(points), dtype=cupy.float64)  # host or device points
    args, slots, one_add = arguments(kernel, p, width, buckets)
    blocks, shared, lanes = launch_shape(kernel, n, block, buckets, device, slots)
    fn = cuda.kernel(kernels.histogram(kernel, block, lanes, one_add), device)
    if shared > 48 * 1024:
        fn.max_dynamic_shared_size_bytes = shared
    hist = cupy.empty(buckets, cupy.uint64)

    def run() -> None:
        fn((blocks,), (block,), (*args, hist), shared_mem=shared)

    working_set = hist.nbytes + sum(a.nbytes for a in args if isinstance(a, cupy.ndarray))
    return run, hist, working_set
