"""The heat stencil on the GPU (CuPy): the field kept on the device, stepped by any variant.

``HeatGpu`` is what the CLI, the bench and a viewer scene use::

    sim = HeatGpu(field, device=0, kernel="temporal", block=(32, 4), k=8)
    sim.step(40)                     # 40 steps (temporal: 5 launches of 8), asynchronous
    sim.write_into(pixels)           # a CuPy float32 (nj, ni) array, e.g. a mapped GL buffer
    sim.paint(x, y, radius, 100.0)   # cells within radius of (x, y), on the device
    sim.configure(kernel="shared", block=(32, 8))   # switch at any step; the state is kept
    sim.tiles()                      # which block writes which cell (kernels.LaunchTiles)

Every build is ``--fmad=false`` unless ``fma=True``: then the last line of the update is one
fused multiply-add, as nvcc compiles the course's code by default.
"""

from __future__ import annotations

import cupy
import numpy as np

from sim.cmdline import interrupts
from sim.gpu import cuda
from sim.gpu.cuda import KernelError, ceil_div, device_properties
from sim.heat import kernels
from sim.heat.course import TFAC
from sim.heat.kernels import K_MAX, KERNELS
from sim.heat.stencil_cpu import paint_box

PITCH_ALIGNMENT = 512  # bytes: what cudaMallocPitch gives on current GPUs


def pitch_elements(ni: int, device: int = 0) -> int:
    """Row stride in elements of a pitched row of ``ni`` floats: the row's bytes rounded up to the
    device's pitch alignment (at least 512 bytes, like cudaMallocPitch), divided by 4."""
    align = max(PITCH_ALIGNMENT, int(device_properties(device).get("texturePitchAlignment", 0)))
    return ceil_div(ni * 4, align) * align // 4


def row_stride(kernel: str, ni: int, device: int = 0) -> int:
    return ni if kernels.dense_kernel(kernel) else pitch_elements(ni, device)


def device_bytes(kernel: str, ni: int, nj: int, device: int = 0) -> int:
    """Device memory of the two buffers."""
    return 2 * 4 * nj * row_stride(kernel, ni, device)


def check_launch(kernel: str, block, k: int = 1, device: int = 0) -> None:
    """KernelError if ``kernel`` cannot run with this block shape (and k) on ``device``."""
    if kernel not in KERNELS:
        raise KernelError(f"unknown kernel {kernel!r} (choose from {', '.join(KERNELS)})")
    try:
        bx, by = (int(v) for v in block)
    except (TypeError, ValueError):
        raise KernelError(f"a block is a 2D shape such as 32x8, got {block!r}") from None
    props = device_properties(device)
    limit = int(props["maxThreadsPerBlock"])
    dims = props["maxThreadsDim"]
    if bx < 1 or by < 1 or bx * by > limit or bx > dims[0] or by > dims[1]:
        raise KernelError(
            f"block {bx}x{by} ({bx * by} threads) cannot run: at most {limit} threads a block, "
            f"{dims[0]} across and {dims[1]} down"
        )
    if kernel == "shared" and (bx + 2) * (by + 2) * 4 > int(props["sharedMemPerBlock"]):
        raise KernelError(
            f"block {bx}x{by}: its tile and halo need {(bx + 2) * (by + 2) * 4:,} bytes of shared "
            f"memory, {int(props['sharedMemPerBlock']):,} available"
        )
    if kernel == "temporal":
        if bx % 32:
            raise KernelError(
                f"the temporal kernel streams one strip per warp: block width must be a multiple of 32, got {bx}"
            )
        if not 1 <= k <= K_MAX:
            raise KernelError(f"temporal steps per launch k must be 1..{K_MAX}, got {k}")


class HeatGpu:
    """The field (nj, ni) float32 on ``device`` and a scratch buffer, stepped by one variant."""

    def __init__(
        self,
        field,
        device: int = 0,
        kernel: str = "global",
        block=(32, 8),
        k: int = 1,
        fma: bool = False,
        tfac: float = TFAC,
    ):
        self.device = int(device)
        nj, ni = np.shape(field)
        if ni < 3 or nj < 3:
            raise ValueError(f"the grid must be at least 3x3, got {ni}x{nj}")
        self.ni, self.nj = int(ni), int(nj)
        self.tfac = np.float32(tfac)
        self.kernel, self.block, self.k, self.fma = "global", (32, 8), 1, False
        self.stride = 0
        self.steps_done = 0
        self._rows: dict = {}
        self.configure(kernel, block, k, fma)
        self.load(field)

    # --- state ----------------------------------------------------------------------------------
    def _allocate(self, stride: int) -> None:
        with cupy.cuda.Device(self.device):
            self._a = cupy.zeros((self.nj, stride), cupy.float32)  # padding stays zero
            self._b = cupy.zeros((self.nj, stride), cupy.float32)
        self.stride = stride

    def load(self, field) -> None:
        """Replace the state with ``field`` (host or device, (nj, ni) float32), in both buffers."""
        if np.shape(field) != (self.nj, self.ni):
            raise ValueError(f"field shape {np.shape(field)} is not ({self.nj}, {self.ni})")
        if not self.stride:
            self._allocate(row_stride(self.kernel, self.ni, self.device))
        with cupy.cuda.Device(self.device):
            values = cupy.asarray(field, dtype=cupy.float32)
            self._a[:, : self.ni] = values
            self._b[:, : self.ni] = values

    @property
    def field(self):
        """The current state: a CuPy (nj, ni) view of the device buffer (rows ``stride`` apart)."""
        return self._a[:, : self.ni]

    def get(self) -> np.ndarray:
        """The current state on the host, (nj, ni) float32."""
        with cupy.cuda.Device(self.device):
            return cupy.asnumpy(self.field)

    def write_into(self, out) -> None:
        """Copy the current state into ``out``, a CuPy float32 (nj, ni) array on this device
        (e.g. a mapped GL pixel buffer); device to device, no host copy."""
        if tuple(out.shape) != (self.nj, self.ni) or out.dtype != np.float32:
            raise ValueError(f"write_into needs a float32 ({self.nj}, {self.ni}) array, got {out.dtype} {out.shape}")
        with cupy.cuda.Device(self.device):
            cupy.copyto(out, self.field)

    def paint(self, x: float, y: float, radius: float, value: float) -> None:
        """Cells with (i - x)^2 + (j - y)^2 <= radius^2 take ``value`` (both buffers; boundary cells too,
        which then hold it). Same cells as ``HeatCpu.paint``."""
        box = paint_box(self.ni, self.nj, x, y, radius)
        if box is None:
            return
        i0, j0, w, h = box
        fn = cuda.kernel(kernels.simple(self.fma), self.device, "paint")
        with cupy.cuda.Device(self.device):
            fn(
                (ceil_div(w, 32), ceil_div(h, 8)),
                (32, 8),
                (
                    np.int64(self.stride),
                    np.int32(i0),
                    np.int32(j0),
                    np.int32(w),
                    np.int32(h),
                    np.float64(x),
                    np.float64(y),
                    np.float64(radius) * np.float64(radius),
                    np.float32(value),
                    self._a,
                    self._b,
                ),
            )

    # --- variant ----------------------------------------------------------------------------------
    def configure(self, kernel: str | None = None, block=None, k: int | None = None, fma: bool | None = None) -> None:
        """Switch variant, block shape, temporal k or the FMA build; checked first (KernelError), the
        state is kept (moved when the row layout changes)."""
        kernel = self.kernel if kernel is None else kernel
        block = self.block if block is None else tuple(int(v) for v in block)
        k = self.k if k is None else int(k)
        check_launch(kernel, block, k if kernel == "temporal" else 1, self.device)
        stride = row_stride(kernel, self.ni, self.device)
        if self.stride and stride != self.stride:
            with cupy.cuda.Device(self.device):
                current = self.field.copy()
            self._allocate(stride)
            self.load(current)
        self.kernel, self.block, self.k = kernel, block, k
        self.fma = self.fma if fma is None else bool(fma)

    def _temporal(self, k: int):
        threads = self.block[0] * self.block[1]
        return cuda.kernel(kernels.temporal(threads, self.fma), self.device, f"step_temporal_{k}")

    def rows(self, k: int | None = None) -> int:
        """Temporal band height for k steps a launch, from the device's SMs and the kernel's occupancy."""
        k = self.k if k is None else k
        key = (k, self.block, self.fma)
        if key not in self._rows:
            fn = self._temporal(k)
            threads = self.block[0] * self.block[1]
            with cupy.cuda.Device(self.device):
                per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.kernel.ptr, threads, 0)
            slots = int(device_properties(self.device)["multiProcessorCount"]) * max(1, per_sm)
            self._rows[key] = kernels.band_rows(self.ni, self.nj, self.block, k, slots)
        return self._rows[key]

    def launch_grid(self, k: int | None = None) -> tuple[int, int]:
        """Blocks (x, y) of one launch of the current variant."""
        k = self.k if k is None else k
        rows = self.rows(k) if self.kernel == "temporal" else 1
        return kernels.launch_grid(self.kernel, self.ni, self.nj, self.block, k, rows)

    def tiles(self) -> kernels.LaunchTiles:
        """Which block writes which cell under the current variant (for a block-colouring overlay)."""
        rows = self.rows() if self.kernel == "temporal" else 1
        return kernels.tiles(self.kernel, self.ni, self.nj, self.block, self.k, rows)

    def launch_info(self) -> dict:
        """Registers, local (spill) bytes and blocks per SM of the current variant's kernel."""
        if self.kernel == "temporal":
            fn = self._temporal(self.k)
        else:
            name = "step_shared" if self.kernel == "shared" else "step_global"
            fn = cuda.kernel(kernels.simple(self.fma), self.device, name)
        threads = self.block[0] * self.block[1]
        shared = (self.block[0] + 2) * (self.block[1] + 2) * 4 if self.kernel == "shared" else 0
        with cupy.cuda.Device(self.device):
            per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.kernel.ptr, threads, shared)
        return {
            "registers": int(fn.num_regs),
            "local_bytes": int(fn.local_size_bytes),
            "blocks_per_sm": int(per_sm),
            "rows": self.rows() if self.kernel == "temporal" else None,
            "stride": self.stride,
        }

    # --- stepping -------------------------------------------------------------------------------------
    def prepared(self, k: int = 1) -> tuple:
        """One launch of k steps (temporal) or one, from the current buffer into the other, ready to queue:
        (kernel, grid, block, arguments, dynamic shared bytes)."""
        bx, by = self.block
        common = (np.int32(self.ni), np.int32(self.nj), np.int64(self.stride), self.tfac)
        if self.kernel == "temporal":
            rows = self.rows(k)
            grid = kernels.launch_grid("temporal", self.ni, self.nj, self.block, k, rows)
            return self._temporal(k), grid, (bx, by, 1), (*common, np.int32(rows), self._a, self._b), 0
        grid = kernels.launch_grid(self.kernel, self.ni, self.nj, self.block)
        name = "step_shared" if self.kernel == "shared" else "step_global"
        shared = (bx + 2) * (by + 2) * 4 if self.kernel == "shared" else 0
        fn = cuda.kernel(kernels.simple(self.fma), self.device, name)
        return fn, grid, (bx, by, 1), (*common, self._a, self._b), shared

    def _launch(self, k: int = 1) -> None:
        """One launch: k steps (temporal) or one, then swap."""
        fn, grid, block, args, shared = self.prepared(k)
        fn(grid, block, args, shared_mem=shared)
        self._a, self._b = self._b, self._a
        self.steps_done += k

    def launches(self, steps: int) -> list[int]:
        """Steps of each launch for ``steps`` steps: temporal takes k at a time, then the rest at once."""
        if self.kernel != "temporal":
            return [1] * steps
        return [self.k] * (steps // self.k) + ([steps % self.k] if steps % self.k else [])

    def step(self, steps: int = 1) -> None:
        """``steps`` steps (0 is fine), queued on the current stream."""
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        with cupy.cuda.Device(self.device):
            for k in self.launches(steps):
                self._launch(k)

    def advance(self, steps: int, chunk_seconds: float = 0.2, progress=None) -> float:
        """``steps`` steps in chunks with a wait after each (Ctrl-C stops within a chunk); returns the
        milliseconds between CUDA events around the whole run."""
        plan = self.launches(steps)
        with cupy.cuda.Device(self.device):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            done = stepped = 0
            chunk = 1
            while done < len(plan):
                for k in plan[done : done + chunk]:
                    self._launch(k)
                    stepped += k
                done = min(len(plan), done + chunk)
                mark = cupy.cuda.Event()
                mark.record()
                mark.synchronize()
                seconds = cupy.cuda.get_elapsed_time(start, mark) / 1e3
                chunk = max(1, min(4096, int(done / max(seconds, 1e-6) * chunk_seconds)))
                if progress:
                    progress(stepped, steps)
                interrupts.check()
            end.record()
            end.synchronize()
            return cupy.cuda.get_elapsed_time(start, end)
