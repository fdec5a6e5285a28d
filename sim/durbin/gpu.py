"""The recursion on the GPU (CuPy): a steppable single-system ``DurbinGpu`` (many systems at once:
``batched_gpu``).

``DurbinGpu(r, kernel="two-kernel" | "persistent")`` holds r, y, alphas and betas on the device and
advances like ``DurbinCpu``: ``step(m)``, ``run()``, ``k`` entries done. Work goes to the solver's own
stream; ``synchronize()`` waits for it (and reports a persistent barrier that timed out).

two-kernel: per step one launch forms per-block partial dot products, one launch sums them (in
every block, same order), forms alpha and beta on the device and updates the pairs; the step
number lives on the device, so ``run()`` replays a CUDA graph of GRAPH_STEPS steps.
persistent: one launch for a range of steps; ``path`` "cluster" (one thread-block cluster of up to
16 blocks, distributed shared memory, cluster barriers; launched with cuLaunchKernelEx through
cuda-bindings, which CuPy lacks) or "grid" (a cooperative launch, CuPy's
enable_cooperative_groups, of up to one block per SM, flags in global memory); None: the cluster of 16
up to N = 65536 (CLUSTER_PAIRS), the grid beyond.
"""

from __future__ import annotations

from typing import Literal

import cupy
import numpy as np

from sim.durbin import kernels, layout
from sim.durbin.durbin_cpu import first_alpha
from sim.gpu import cuda
from sim.gpu.cuda import KernelError, ceil_div, device_properties

GRAPH_STEPS = 2048  # two-kernel steps per CUDA graph
REGION = 512  # grid path: steps per half of the flag ring (slots are 2 * REGION deep)
CLUSTER_PAIRS = 2048  # auto: a cluster while each block owns at most this many pairs (N <= 65536 on 16 blocks;
# measured on an H100: the cluster of 16 beats the grid there, 2.4 against 3.2 us a step at N = 65536)
SENTINEL: dict[str, np.unsignedinteger] = {"fp64": np.uint64(0x7FF4DEAD0000BEEF), "fp32": np.uint32(0x7FA0BEEF)}
DTYPES = {"fp64": np.float64, "fp32": np.float32}
MAX_GRID = 256  # the grid path's blocks: warp 0 polls 8 slots a lane (durbin.cu POLL_PER_LANE)


def check_block(block: int) -> int:
    if not (32 <= block <= 1024 and block % 32 == 0):
        raise KernelError(f"block size must be a multiple of 32 in 32..1024, got {block}")
    return block


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


class DurbinGpu:
    """One system T y = -r (4.x; 3.2's recursion with version="3.2") on the GPU, steppable."""

    backend: Literal["gpu"] = "gpu"  # tells the two solvers apart

    def __init__(
        self,
        r,
        kernel: str = "persistent",
        block: int = 256,
        precision: str = "fp64",
        version: str = "4",
        device: int = 0,
        path: str | None = None,
        blocks: int | None = None,
    ):
        if kernel not in kernels.KERNELS:
            raise KernelError(f"unknown kernel {kernel!r} (choose from {', '.join(kernels.KERNELS)})")
        if precision not in DTYPES:
            raise KernelError(f"unknown precision {precision!r} (choose from {', '.join(DTYPES)})")
        self.kernel, self.block, self.precision, self.version, self.device = (
            kernel,
            check_block(block),
            precision,
            version,
            int(device),
        )
        self.dtype = DTYPES[precision]
        with cupy.cuda.Device(self.device):
            self.r = cupy.asarray(r, dtype=self.dtype).ravel()
            self.n = int(self.r.size)
            if self.n < 2:
                raise KernelError("the GPU solver needs at least 2 entries")
            self.stream = cupy.cuda.Stream(non_blocking=True)
            self.y = cupy.empty(self.n, self.dtype)
            self.alphas = cupy.empty(self.n, self.dtype)
            self.betas = cupy.empty(self.n, self.dtype)
            self._r0 = float(self.r[0].get())
            if kernel == "two-kernel":
                if path or blocks:
                    raise KernelError("path and blocks choose how the persistent kernel runs")
                self._setup_two_kernel()
            else:
                self._setup_persistent(path, blocks)
            cupy.cuda.Device(self.device).synchronize()  # uploads and zeros (default stream) before self.stream's work
        self.reset()

    # --- set-up -----------------------------------------------------------------------------------
    def _setup_two_kernel(self) -> None:
        sms = device_properties(self.device)["multiProcessorCount"]
        self.dot_blocks = max(1, min(2 * sms, ceil_div(self.n - 1, self.block)))
        self.update_blocks = max(1, min(2 * sms, ceil_div(self.n // 2, self.block)))
        fns = cuda.kernels(kernels.two_kernel(self.precision, self.version), self.device)
        self._dot, self._update = fns["two_kernel_dot"], fns["two_kernel_update"]
        self.partials = cupy.zeros(self.dot_blocks, self.dtype)
        self.steps = cupy.zeros(2, cupy.int32)
        self._graphs: dict[int, object] = {}
        self.path = f"two launches per step, {self.dot_blocks}+{self.update_blocks} blocks, CUDA graphs"

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

    # --- state ------------------------------------------------------------------------------------
    def reset(self) -> None:
        a0 = first_alpha(self._r0, self.version)
        with cupy.cuda.Device(self.device), self.stream:
            for array in (self.y, self.alphas, self.betas):
                array.fill(np.nan)  # poison: nothing unwritten passes for a result
            self.y[0] = a0
            self.alphas[0] = a0
            self.betas[0] = 1.0
            if self.kernel == "two-kernel":
                self.steps[0] = 1
        self.k = 1

    @property
    def done(self) -> bool:
        return self.k >= self.n

    def step(self, count: int = 1) -> None:
        """Advance ``count`` steps (fewer at the end), asynchronously on ``self.stream``."""
        count = min(int(count), self.n - self.k)
        if count <= 0:
            return
        with cupy.cuda.Device(self.device), self.stream:
            if self.kernel == "two-kernel":
                for _ in range(count):
                    self._two_kernel_step()
            else:
                self._persistent(self.k, self.k + count)
        self.k += count

    def run(self) -> None:
        """All remaining steps (two-kernel: CUDA graphs of GRAPH_STEPS steps, the rest launched directly)."""
        if self.kernel != "two-kernel":
            self.step(self.n - self.k)
            return
        with cupy.cuda.Device(self.device), self.stream:
            while self.n - self.k >= GRAPH_STEPS:
                self._graph().launch(self.stream)
                self.k += GRAPH_STEPS
        self.step(self.n - self.k)

    def prepare(self) -> None:
        """Host work before the first step, kept out of timings: the two-kernel's CUDA graph."""
        if self.kernel == "two-kernel" and self.n - self.k >= GRAPH_STEPS:
            with cupy.cuda.Device(self.device), self.stream:
                self._graph()

    def synchronize(self) -> None:
        """Wait for the queued work; KernelError if a grid barrier timed out."""
        self.stream.synchronize()
        if self.kernel == "persistent":
            stuck = int(self.status.get()[0])
            if stuck:
                raise KernelError(f"the persistent grid's barrier timed out at step {stuck} (blocks not co-resident?)")

    def result(self) -> np.ndarray:
        """y[0..k-1] on the host (waits)."""
        self.synchronize()
        return cupy.asnumpy(self.y[: self.k])

    def snapshot(self) -> dict[str, np.ndarray]:
        """The state after k steps on the host (waits): y, alphas and betas, k entries each."""
        self.synchronize()
        return {name: cupy.asnumpy(getattr(self, name)[: self.k]) for name in ("y", "alphas", "betas")}

    def owners(self, k: int | None = None) -> np.ndarray:
        """The CUDA block that updated each of y[0..k] in step k (default: the last step done)."""
        k = self.k - 1 if k is None else k
        if self.kernel == "two-kernel":
            return layout.owners_two_kernel(k, self.update_blocks, self.block)
        return layout.owners_persistent(k, self.pairs)

    # --- launches -----------------------------------------------------------------------------------
    def _two_kernel_step(self) -> None:
        self._dot((self.dot_blocks,), (self.block,), (self.r, self.y, self.partials, self.steps))
        self._update(
            (self.update_blocks,),
            (self.block,),
            (self.r, self.y, self.alphas, self.betas, self.partials, np.int32(self.dot_blocks), self.steps),
        )

    def _graph(self):
        if GRAPH_STEPS not in self._graphs:
            self.stream.synchronize()  # capture records only what follows
            self.stream.begin_capture()
            try:
                for _ in range(GRAPH_STEPS):
                    self._two_kernel_step()
            finally:
                graph = self.stream.end_capture()
            self._graphs[GRAPH_STEPS] = graph
        return self._graphs[GRAPH_STEPS]

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


def solve(r, kernel: str = "persistent", **options) -> np.ndarray:
    """y of the whole recursion on the GPU (host array)."""
    solver = DurbinGpu(r, kernel, **options)
    solver.run()
    return solver.result()
