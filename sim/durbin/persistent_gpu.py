"""The persistent kernel (persistent.cuh) on the GPU: one launch for a range of steps, on one
thread-block cluster (distributed shared memory, cluster barriers; launched with cuLaunchKernelEx through
cuda-bindings, which CuPy lacks) or a cooperative grid (flags in global memory, a watchdog status):
its plan (blocks, pairs a block, shared memory) and its launch. ``PersistentLaunch``, which ``DurbinGpu``
(gpu.py) inherits; its methods work on the state that class holds (declared below).
"""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np

from sim.durbin import kernels, layout
from sim.gpu import cuda
from sim.gpu.cuda import KernelError, ceil_div, device_properties

REGION = 512  # grid path: steps per half of the flag ring (slots are 2 * REGION deep)
CLUSTER_PAIRS = 2048  # auto: a cluster while each block owns at most this many pairs (N <= 65536 on 16 blocks;
# measured on an H100: the cluster of 16 beats the grid there, 2.4 against 3.2 us a step at N = 65536)
SENTINEL: dict[str, np.unsignedinteger] = {"fp64": np.uint64(0x7FF4DEAD0000BEEF), "fp32": np.uint32(0x7FA0BEEF)}
MAX_GRID = 256  # the grid path's blocks: warp 0 polls 8 slots a lane (durbin.cu POLL_PER_LANE)


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError as exc:  # pragma: no cover - the [gpu] extra installs it
        raise KernelError(f"thread-block clusters need cuda-bindings ({exc})") from None
    return driver


def _checked(result):
    driver = _driver()
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise KernelError(f"CUDA driver call failed: {err.name if hasattr(err, 'name') else err}")
    return rest[0] if len(rest) == 1 else rest


def _cluster_config(fn, blocks: int, block: int, smem: int, stream_ptr: int):
    driver = _driver()
    func = driver.CUfunction(fn.kernel.ptr)
    attr = driver.CUfunction_attribute
    _checked(driver.cuFuncSetAttribute(func, attr.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1))
    _checked(driver.cuFuncSetAttribute(func, attr.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem))
    config = driver.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = blocks, 1, 1
    config.blockDimX, config.blockDimY, config.blockDimZ = block, 1, 1
    config.sharedMemBytes = smem
    config.hStream = driver.CUstream(stream_ptr)
    cluster = driver.CUlaunchAttribute()
    cluster.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    cluster.value.clusterDim.x, cluster.value.clusterDim.y, cluster.value.clusterDim.z = blocks, 1, 1
    config.attrs = [cluster]
    config.numAttrs = 1
    return func, config


def cluster_fits(fn, blocks: int, block: int, smem: int) -> bool:
    """Whether one cluster of ``blocks`` blocks can be resident (a cluster of 16 needs a GPC with 16 free SMs)."""
    if blocks == 1:
        return True
    driver = _driver()
    func, config = _cluster_config(fn, blocks, block, smem, 0)
    err, count = driver.cuOccupancyMaxActiveClusters(func, config)
    return err == driver.CUresult.CUDA_SUCCESS and count >= 1


def launch_cluster(fn, blocks: int, block: int, smem: int, stream, args, cooperative: bool = False) -> None:
    """cuLaunchKernelEx with the cluster dimension (the grid is one cluster), or a cooperative launch."""
    driver = _driver()
    func, config = _cluster_config(fn, blocks, block, smem, stream.ptr)
    if cooperative:  # the same launch with the cooperative attribute instead of the cluster dimension
        attribute = driver.CUlaunchAttribute()
        attribute.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
        attribute.value.cooperative = 1
        config.attrs = [attribute]
    holders = [np.array([a.data.ptr], np.uint64) if isinstance(a, cupy.ndarray) else np.array([a]) for a in args]
    params = np.array([h.ctypes.data for h in holders], np.uint64)
    _checked(driver.cuLaunchKernelEx(config, func, params.ctypes.data, 0))


class PersistentLaunch:
    """The persistent kernel's plan and launch, as methods of ``DurbinGpu``."""

    # the state DurbinGpu holds (gpu.py) that these read
    n: int
    block: int
    precision: str
    version: str
    device: int
    dtype: Any
    r: Any
    y: Any
    alphas: Any
    betas: Any
    stream: Any

    # --- set-up -----------------------------------------------------------------------------------
    def _setup_persistent(self, path: str | None, blocks: int | None) -> None:
        if path not in (None, *kernels.PATHS):
            raise KernelError(f"unknown persistent path {path!r} (choose from {', '.join(kernels.PATHS)})")
        plan = self._cluster_plan(blocks, forced=path == "cluster") if path in (None, "cluster") else None
        if plan is None:
            plan = self._grid_plan(blocks)
        self.path_kind, self.blocks, self.pairs, self.smem, self._fn = plan
        self._fn.max_dynamic_shared_size_bytes = self.smem
        depth = 2 * REGION if self.path_kind == "grid" else 1  # the cluster kernel exchanges in shared memory
        self.slots = cupy.empty((2, depth, self.blocks), SENTINEL[self.precision].dtype)
        self.status = cupy.zeros(1, cupy.int32)
        if self.path_kind == "grid":
            self.path = f"cooperative grid of {self.blocks} blocks x {self.block} threads (flags in global memory)"
        else:
            self.path = (
                f"thread-block cluster of {self.blocks} blocks x {self.block} threads (distributed shared memory)"
            )

    def _smem_max(self) -> int:
        return device_properties(self.device)["sharedMemPerBlockOptin"] - layout.PERSISTENT_STATIC_SMEM

    def _cluster_plan(self, blocks: int | None, forced: bool):
        """One cluster of ``blocks`` blocks if given, else of the most blocks that fit (16 where the GPU
        co-schedules 16, else 8, ...); unless forced, only while each block owns at most CLUSTER_PAIRS
        pairs, else None: the grid takes it."""
        itemsize = np.dtype(self.dtype).itemsize
        try:
            fn = cuda.kernel(kernels.persistent("cluster", self.precision, self.version), self.device)
            sizes = [blocks] if blocks else [16, 8, 4, 2, 1]
            for g in sizes:
                if not 1 <= g <= 16:
                    raise KernelError(f"a cluster has 1..16 blocks, got {g}")
                per_block = layout.pairs_per_block(self.n, g)
                smem = layout.persistent_smem(per_block, itemsize)
                if smem > self._smem_max() or (not forced and not blocks and per_block > CLUSTER_PAIRS):
                    continue
                if cluster_fits(fn, g, self.block, smem):
                    return ("cluster", g, per_block, smem, fn)
        except KernelError:
            if forced:
                raise
            return None
        if forced:
            raise KernelError(
                f"N = {self.n:,} does not fit one thread-block cluster "
                f"({self._smem_max():,} bytes of shared memory per block, at most 16 blocks)"
            )
        return None

    def _grid_plan(self, blocks: int | None):
        sms = min(device_properties(self.device)["multiProcessorCount"], MAX_GRID)
        blocks = blocks or max(1, min(sms, ceil_div(layout.pair_count(self.n), self.block)))
        if not 1 <= blocks <= sms:
            raise KernelError(f"the persistent grid has 1..{sms} blocks (one per SM), got {blocks}")
        per_block = layout.pairs_per_block(self.n, blocks)
        smem = layout.persistent_smem(per_block, np.dtype(self.dtype).itemsize)
        if smem > self._smem_max():
            raise KernelError(
                f"N = {self.n:,} needs {smem:,} bytes of shared memory per block on {blocks} "
                f"blocks ({self._smem_max():,} available): use the two-kernel scheme"
            )
        fn = cuda.kernel(kernels.persistent("grid", self.precision, self.version), self.device)
        return ("grid", blocks, per_block, smem, fn)

    # --- launch -------------------------------------------------------------------------------------
    def _persistent(self, k0: int, k1: int) -> None:
        args = (
            self.r,
            self.y,
            self.alphas,
            self.betas,
            np.int32(self.n),
            np.int32(k0),
            np.int32(k1),
            np.int32(self.pairs),
            self.slots[0],
            self.slots[1],
            np.int32(REGION),
            self.status,
        )
        if self.path_kind == "cluster":
            launch_cluster(self._fn, self.blocks, self.block, self.smem, self.stream, args)
            return
        self.slots.fill(SENTINEL[self.precision])
        try:  # CuPy launches cooperatively (cuLaunchCooperativeKernel) since v9
            self._fn.kernel(
                (self.blocks,),
                (self.block,),
                args,
                shared_mem=self.smem,
                stream=self.stream,
                enable_cooperative_groups=True,
            )
        except TypeError:
            launch_cluster(self._fn, self.blocks, self.block, self.smem, self.stream, args, cooperative=True)
