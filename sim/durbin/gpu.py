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
up to N = 65536 (CLUSTER_PAIRS), the grid beyond. Its plan and launch are ``PersistentLaunch``'s
(persistent_gpu.py), which ``DurbinGpu`` inherits.
"""

from __future__ import annotations

from typing import Literal

import cupy
import numpy as np

from sim.durbin import kernels, layout
from sim.durbin.durbin_cpu import first_alpha
from sim.durbin.persistent_gpu import PersistentLaunch
from sim.gpu import cuda
from sim.gpu.cuda import KernelError, ceil_div, device_properties

GRAPH_STEPS = 2048  # two-kernel steps per CUDA graph
DTYPES = {"fp64": np.float64, "fp32": np.float32}


def check_block(block: int) -> int:
    if not (32 <= block <= 1024 and block % 32 == 0):
        raise KernelError(f"block size must be a multiple of 32 in 32..1024, got {block}")
    return block


class DurbinGpu(PersistentLaunch):
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


def solve(r, kernel: str = "persistent", **options) -> np.ndarray:
    """y of the whole recursion on the GPU (host array)."""
    solver = DurbinGpu(r, kernel, **options)
    solver.run()
    return solver.result()
