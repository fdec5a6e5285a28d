"""The ``heat`` command: the DLI heat-conduction programme, course-compatible.

Prints the three initial cells the DLI prints (``T[0] T[4500] T[6700]``; a cell past a small grid
prints ``-``), the launch grid of each GPU run (blocks across x by blocks down y) and each run's
time; ``--compare`` runs the CPU reference too and prints the course's max-error verdict (exit 1
past 0.0005). Bad input exits 2 before any work, and so does a grid or a number of steps whose
estimate (``sim.cmdline.resources``) exceeds this machine's memory or a week; a run estimated past
``resources.NOTICE_SECONDS`` says how long it will take and shows progress. Ctrl-C stops within a
second (exit 130) and writes nothing.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from dataclasses import dataclass

import numpy as np

from sim.cmdline import cli, resources
from sim.cmdline.cli import Command, UsageError, count_text
from sim.heat import SPEC, course

KERNEL_CHOICES = ("global", "shared", "pitched", "temporal", "all")
DEFAULT_BLOCK = (32, 8)
DEFAULT_K = 8
GPU_ONLY = ("kernel", "block", "k", "fma", "compare")


@dataclass(frozen=True)
class HeatRequest:
    """``heat``'s arguments as parsed (``add_arguments``)."""

    ni: int
    nj: int
    steps: int
    factor: float
    backend: str
    kernel: str | None
    block: int | tuple[int, int] | None
    k: int | None
    fma: bool
    compare: bool
    output: str | None
    stats: bool

    def block_shape(self) -> tuple[int, int]:
        """The GPU block: the shape given, or the default; a thread count alone is refused."""
        if self.block is None:
            return DEFAULT_BLOCK
        if not isinstance(self.block, tuple):
            raise UsageError(f"--block must be a 2D shape such as 32x8, got {self.block}")
        return self.block


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ni",
        type=functools.partial(cli.count, lo=3, what="ni"),
        default=course.NI,
        help=f"cells in x, the fast index (>= 3; default {course.NI})",
    )
    p.add_argument(
        "--nj",
        type=functools.partial(cli.count, lo=3, what="nj"),
        default=course.NJ,
        help=f"cells in y (>= 3; default {course.NJ})",
    )
    p.add_argument(
        "--steps",
        type=functools.partial(cli.count, lo=0, what="steps"),
        default=course.STEPS,
        help=f"time steps (>= 0; default {course.STEPS})",
    )
    p.add_argument(
        "--factor",
        type=functools.partial(cli.number, what="factor"),
        default=course.TFAC,
        help=f"tfac, the diffusion factor (0 <= F < 0.25 for stability; default {course.TFAC})",
    )
    p.add_argument("--backend", default="cpu", choices=("cpu", "gpu"), help="default cpu")
    p.add_argument("--kernel", help="GPU: global (default), shared, pitched, temporal or all")
    p.add_argument(
        "--block", type=cli.block, help=f"GPU: block shape WxH (default {DEFAULT_BLOCK[0]}x{DEFAULT_BLOCK[1]})"
    )
    p.add_argument(
        "--k",
        type=functools.partial(cli.count, lo=1, what="k"),
        help=f"GPU temporal kernel: steps per launch (default {DEFAULT_K})",
    )
    p.add_argument(
        "--fma",
        action="store_true",
        help="GPU: build with fused multiply-adds (nvcc's default; differs from the CPU by ~1e-5)",
    )
    p.add_argument(
        "--compare",
        action="store_true",
        help="GPU: also run the CPU reference and print the course's max-error check (exit 1 if it fails)",
    )
    p.add_argument("--output", metavar="FILE", help="write the final field: raw little-endian float32, memory order")
    p.add_argument("--stats", action="store_true", help="print the float64 sum, min and max of the final field")


def check_arguments(request: HeatRequest) -> None:
    """Everything that needs no device, before any work."""
    if not (math.isfinite(request.factor) and 0 <= request.factor < 0.25):
        raise UsageError(
            f"--factor must be >= 0 and < 0.25 (the explicit scheme's stability limit), got {request.factor}"
        )
    if request.backend == "cpu":
        given = [f"--{name}" for name in GPU_ONLY if getattr(request, name) not in (None, False)]
        if given:
            raise UsageError(
                f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to the GPU backend only "
                "(add --backend gpu)"
            )
    if request.kernel is not None:
        cli.choice(request.kernel, KERNEL_CHOICES, "kernel")
    request.block_shape()  # refuses a block that is a thread count, not a shape
    if request.k is not None and request.kernel not in ("temporal", "all"):
        raise UsageError("--k applies to the temporal kernel only (add --kernel temporal)")
    if request.output is not None:
        from sim.cmdline.writer import check_target

        check_target(request.output, "output file")


def estimate(request: HeatRequest, kernels: int = 0) -> resources.Estimate:
    """Host memory, time and output size of ``heat`` with these arguments: on the CPU, or ``kernels``
    GPU runs (and the CPU reference with --compare)."""
    ni, nj = request.ni, request.nj
    cells, updates = ni * nj, float(ni - 2) * float(nj - 2) * request.steps  # floats: no overflow
    cpu_pace, gpu_pace = SPEC.pace
    cpu_seconds = updates / (cpu_pace * resources.cpu_threads()) + request.steps * resources.STEP_SECONDS
    # the initial field while drawing glibc rand(); the result, or the CPU reference's 2 buffers
    host = cells * (course.INIT_BYTES_PER_CELL + (12 if request.compare else 4 if kernels else 0))
    seconds = kernels * (updates / gpu_pace + request.steps * resources.STEP_SECONDS) + (
        cpu_seconds if request.compare or not kernels else 0.0
    )
    grid = f"a {count_text(request.ni)}x{count_text(request.nj)} grid"
    return resources.Estimate(
        f"heat: {grid} x {count_text(request.steps)} steps on the {'GPU' if kernels else 'CPU'}",
        memory=host,
        seconds=seconds,
        disk=4 * cells if request.output else 0,
        disk_path=request.output,
    )


def run(request: HeatRequest) -> int:
    check_arguments(request)
    if request.backend == "cpu":
        need = estimate(request)
        resources.check(need)
        return run_cpu(request, need)
    return run_gpu(request)


def steps_callback(label: str, need: resources.Estimate):
    """``progress(done, steps)`` for the stencil's chunks: a bar on a terminal when the run is long."""
    from sim.cmdline.progress import frames_callback

    return frames_callback(label, "steps", show=need.long)


def simulate_cpu(field: np.ndarray, steps: int, factor: float, progress=None) -> tuple[np.ndarray, float]:
    from sim.heat.stencil_cpu import HeatCpu

    heat = HeatCpu(field, factor)
    start = time.perf_counter()
    heat.advance(steps, progress)
    return heat.field, (time.perf_counter() - start) * 1e3


def run_cpu(request: HeatRequest, need: resources.Estimate) -> int:
    field = course.initial_field(request.ni, request.nj)
    print(course.initial_cells_line(field))
    result, ms = simulate_cpu(field, request.steps, request.factor, steps_callback("heat CPU", need))
    print(f"Elapsed CPU: {ms:.3f} ms")
    finish(request, result)
    return 0


def run_gpu(request: HeatRequest) -> int:
    from sim.gpu.backend import BackendUnavailable, gpu_status

    kernels_ = ["global", "shared", "pitched", "temporal"] if request.kernel == "all" else [request.kernel or "global"]
    block = request.block_shape()
    k = request.k or DEFAULT_K
    from sim.heat import kernels as builds

    plan = estimate(request, len(kernels_))
    resources.check(plan)
    if block[0] * block[1] > 1024:
        raise UsageError(f"block {block[0]}x{block[1]} has {block[0] * block[1]} threads: at most 1024")
    if "temporal" in kernels_ and (block[0] % 32 or not 1 <= k <= builds.K_MAX):
        raise UsageError(
            f"the temporal kernel needs a block width that is a multiple of 32 and 1 <= k <= "
            f"{builds.K_MAX}, got {block[0]}x{block[1]}, k={k}"
        )
    if not gpu_status().available:
        raise BackendUnavailable(f"GPU backend unavailable: {gpu_status().reason}")
    import cupy

    from sim.heat import gpu

    try:
        for kernel in kernels_:
            gpu.check_launch(kernel, block, k, 0)
    except gpu.KernelError as exc:
        raise UsageError(str(exc)) from None
    need = max(gpu.device_bytes(kernel, request.ni, request.nj) for kernel in kernels_)
    free = cupy.cuda.runtime.memGetInfo()[0]
    if need > free:
        raise UsageError(
            f"a {request.ni}x{request.nj} grid needs about {need / 1e9:.1f} GB of GPU memory "
            f"(2 float32 buffers, rows padded for pitched/temporal); {free / 1e9:.1f} GB free"
        )
    field = course.initial_field(request.ni, request.nj)
    print(course.initial_cells_line(field))
    results = {}
    for kernel in kernels_:
        heat = gpu.HeatGpu(field, 0, kernel, block, k, request.fma, request.factor)
        gx, gy = heat.launch_grid()
        extra = f", {k} steps a launch, bands of {heat.rows()} rows" if kernel == "temporal" else ""
        print(f"Grid: {gx} x {gy} blocks of {block[0]} x {block[1]} threads ({kernel}{extra})")
        ms = heat.advance(request.steps, progress=steps_callback(f"heat GPU {kernel}", plan))
        label = "" if len(kernels_) == 1 else f" ({kernel} {block[0]}x{block[1]})"
        print(f"Elapsed GPU{label}: {ms:.3f} ms")
        results[kernel] = heat.get()
        del heat
    status = 0
    first = results[kernels_[0]]
    if not request.fma:
        for kernel, other in results.items():
            if not np.array_equal(other, first):
                print(f"kernel {kernel} disagrees with {kernels_[0]}", file=sys.stderr)
                status = 1
    if request.compare:
        reference, ms = simulate_cpu(field, request.steps, request.factor, steps_callback("heat CPU", plan))
        print(f"Elapsed CPU: {ms:.3f} ms")
        for kernel, other in results.items():
            line, passed = course.check_line(course.max_error(other, reference))
            print(line if len(results) == 1 else f"{line} ({kernel})")
            status = status or (0 if passed else 1)
    finish(request, first)
    return status


def finish(request: HeatRequest, field: np.ndarray) -> None:
    if request.stats:
        values = field.astype(np.float64)
        print(f"sum {values.sum():.6f} min {values.min():.6f} max {values.max():.6f}")
    if request.output is not None:
        from sim.cmdline.writer import write_bytes

        write_bytes(request.output, np.ascontiguousarray(field, dtype="<f4").tobytes(), "output file")


COMMANDS = (
    Command(
        "heat",
        "DLI heat conduction, course-compatible: 2D stencil on the CPU or GPU (global, shared, pitched, temporal)",
        add_arguments,
        run,
        "The DLI heat-conduction exercise: a float32 5-point stencil on an NI x NJ grid from glibc rand() "
        "(no srand), boundary held fixed. Prints the three initial cells, the launch grid and the time of "
        "each run; --compare adds the CPU reference and the course's max-error check.",
        request=HeatRequest,
    ),
)
