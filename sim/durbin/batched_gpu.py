"""Many independent systems on the GPU (CuPy) in one launch: ``batched`` solves every row of r with
the batched kernel of durbin.cu, a thread, a warp or a block per system (``batched_group`` picks by
order, ``batched_shape`` sizes the launch)."""

from __future__ import annotations

import cupy
import numpy as np

from sim.durbin import kernels
from sim.durbin.gpu import DTYPES, check_block
from sim.gpu import cuda
from sim.gpu.cuda import KernelError, ceil_div, device_properties

MAX_ORDER = 1024


def batched_group(order: int) -> str:
    """Auto: a thread per system (registers up to REG_ORDER, then shared memory), a warp up to 256, a block beyond."""
    if order <= kernels.REG_ORDER:
        return "register"
    return "thread" if order <= 48 else ("warp" if order <= 256 else "block")


def batched_shape(
    systems: int, order: int, group: str, block: int | None, itemsize: int, device: int = 0
) -> tuple[int, int, int]:
    """(blocks, threads per block, dynamic shared bytes); KernelError when it cannot run."""
    if not 2 <= order <= MAX_ORDER:
        raise KernelError(f"batched order must be 2..{MAX_ORDER}, got {order}")
    if group not in kernels.GROUPS:
        raise KernelError(f"unknown batched group {group!r} (choose from {', '.join(kernels.GROUPS)})")
    block = check_block(block or {"register": 64, "thread": 64, "warp": 128, "block": 256}[group])
    if group == "register":
        if order > kernels.REG_ORDER or block > 256:
            raise KernelError(
                f"the register kernel takes orders up to {kernels.REG_ORDER} and blocks up to 256, "
                f"got order {order}, block {block}"
            )
        blocks, smem = ceil_div(systems, block), order * (block + 1) * itemsize
    elif group == "thread":
        blocks, smem = ceil_div(systems, block), 3 * order * (block + 1) * itemsize
    elif group == "warp":
        blocks, smem = ceil_div(systems, block // 32), 3 * order * (block // 32) * itemsize
    else:
        blocks, smem = systems, 3 * order * itemsize
    limit = device_properties(device)["sharedMemPerBlockOptin"] - 1024
    if smem > limit:
        raise KernelError(
            f"batched {group} kernel at order {order} and block {block} needs {smem:,} bytes of "
            f"shared memory ({limit:,} available): use a smaller block or another group"
        )
    return max(1, blocks), block, smem


def batched(
    r,
    group: str | None = None,
    block: int | None = None,
    precision: str = "fp64",
    version: str = "4",
    device: int = 0,
    stream=None,
    out=None,
):
    """(y, alphas, betas) for every row of r (systems, order), on the device: y and alphas (systems,
    order), betas the final normalised prediction error per system. Asynchronous on ``stream``.

    ``out``: (y, alphas, betas) arrays of those shapes and r's dtype to write into (a caller solving
    again and again reuses them); else new ones. Every kernel writes every entry, so they need no
    preparation."""
    with cupy.cuda.Device(device):
        run, solution = batched_launch(r, group, block, precision, version, device, stream, out)
        run()
    return solution


def batched_launch(
    r,
    group: str | None = None,
    block: int | None = None,
    precision: str = "fp64",
    version: str = "4",
    device: int = 0,
    stream=None,
    out=None,
):
    """(a call that queues the solve, (y, alphas, betas) it writes): ``batched`` with everything but the
    launch done beforehand (the shape checked, the kernel looked up, its shared memory set), so a caller
    can queue the same solve again and again, or time the launch alone. Queue it with ``device`` current."""
    dtype = DTYPES[precision]
    with cupy.cuda.Device(device):
        r = cupy.ascontiguousarray(cupy.asarray(r, dtype=dtype))
        if r.ndim != 2:
            raise KernelError("batched r must be (systems, order)")
        systems, order = r.shape
        group = group or batched_group(order)
        blocks, threads, smem = batched_shape(systems, order, group, block, np.dtype(dtype).itemsize, device)
        if out is None:
            y, alphas, betas = cupy.empty_like(r), cupy.empty_like(r), cupy.empty(systems, dtype)
        else:
            y, alphas, betas = out
            if (
                y.shape != r.shape
                or alphas.shape != r.shape
                or betas.shape != (systems,)
                or {y.dtype, alphas.dtype, betas.dtype} != {r.dtype}
                or not all(a.flags.c_contiguous for a in (y, alphas, betas))
            ):
                raise KernelError(
                    f"batched out= must be {r.shape}, {r.shape} and ({systems},) contiguous arrays of {r.dtype}"
                )
        if not systems:
            return (lambda: None), (y, alphas, betas)
        fn = cuda.kernel(kernels.batched(group, precision, version), device)
        fn.max_dynamic_shared_size_bytes = smem
        args = (r, y, alphas, betas, np.int32(systems), np.int32(order))

    def run() -> None:
        fn((blocks,), (threads,), args, shared_mem=smem, stream=stream)

    return run, (y, alphas, betas)
