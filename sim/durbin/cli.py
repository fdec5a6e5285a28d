"""The ``durbin`` command (PolyBench-compatible: dumps, the course's hash, kernel time); ``lpc`` is
sim/durbin/lpc_cli.py's."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np

from sim.cmdline import interrupts
from sim.cmdline.cli import Command, UsageError, count, count_text
from sim.durbin.inputs import DATASETS, DEFAULT_DATASET, INPUTS, VERSIONS
from sim.durbin.lpc_cli import LPC

KERNEL_CHOICES = ("two-kernel", "persistent", "persistent-cluster", "persistent-grid")
SCIPY_MAX = 50_000  # --compare solves with scipy up to here (O(N^2)); beyond, the residual through FFTs
TOLERANCE = {"fp64": 1e-10, "fp32": 1e-4}
MAX_N = 2**31 - 1  # the kernels index with 32-bit integers


@dataclass(frozen=True)
class DurbinRequest:
    """``durbin``'s arguments as parsed (``add_arguments``)."""

    n: int | None
    dataset: str | None
    version: str
    input: str
    backend: str
    kernel: str | None
    block: int | None
    precision: str | None
    dump: bool
    hash: bool
    compare: bool


def add_arguments(p: argparse.ArgumentParser) -> None:
    sizes = "; ".join(f"{v}: " + ", ".join(f"{k} {n}" for k, n in DATASETS[v].items()) for v in VERSIONS)
    p.add_argument(
        "n",
        nargs="?",
        type=lambda s: count(s, 1, "N"),
        metavar="N",
        help="system size (>= 2); default: the version's default dataset",
    )
    p.add_argument(
        "--dataset",
        help=f"PolyBench dataset instead of N ({sizes}; STANDARD and MEDIUM name the "
        "same middle size; GIGA, the course's 200000, works for both)",
    )
    p.add_argument(
        "--version",
        default="3.2",
        choices=VERSIONS,
        help="PolyBench version: 3.2 (the course's 2D-array recursion, default) or 4 (Golub & Van Loan "
        "4.7.1, solves T y = -r)",
    )
    p.add_argument(
        "--input",
        default="polybench",
        choices=INPUTS,
        help="r: PolyBench's own init (default), ar (autocorrelation of the AR(6) with reflection "
        "coefficients 0.6, -0.5, 0.4, -0.3, 0.2, -0.1) or ar1 (r_k = 0.5^(k+1))",
    )
    p.add_argument("--backend", default="cpu", choices=("cpu", "gpu"), help="default cpu (the numba twin)")
    p.add_argument(
        "--kernel",
        help="GPU: two-kernel, persistent (cluster or grid by size; default), "
        "persistent-cluster, persistent-grid, or all (two-kernel and persistent)",
    )
    p.add_argument("--block", type=lambda s: count(s, 1, "block size"), help="GPU: threads per block (default 256)")
    p.add_argument("--precision", choices=("fp64", "fp32"), help="GPU: float precision (default fp64)")
    p.add_argument("--dump", action="store_true", help="print PolyBench's dump of the output on stderr")
    p.add_argument("--hash", action="store_true", help="print the course's PRINT_HASH line (hash*37 + bits)")
    p.add_argument(
        "--compare",
        action="store_true",
        help="print the max relative error against scipy's solve_toeplitz (4.x; the FFT residual "
        f"|T y + r| / |r| above N = {SCIPY_MAX:,}) or, for 3.2 on the GPU, against the CPU twin; "
        "exit 1 above 1e-10 (1e-4 in fp32)",
    )


def size_of(request: DurbinRequest) -> tuple[int, str]:
    from sim.durbin.inputs import dataset_size

    if request.n is not None and request.dataset is not None:
        raise UsageError("give N or --dataset, not both")
    if request.n is not None:
        n, how = request.n, "N given"
    else:
        try:
            n, how = dataset_size(
                DEFAULT_DATASET[request.version] if request.dataset is None else request.dataset, request.version
            )
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if not 2 <= n <= MAX_N:
        raise UsageError(f"N must be 2..{MAX_N:,}, got {count_text(n)}")
    return n, how


def gpu_kernels(request: DurbinRequest) -> list[tuple[str, str | None]]:
    """[(kernel, path)] for --kernel; UsageError for GPU options on the CPU or an unknown kernel."""
    if request.backend == "cpu":
        given = [f"--{name}" for name in ("kernel", "block", "precision") if getattr(request, name) is not None]
        if given:
            raise UsageError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to --backend gpu only")
        return []
    if request.block is not None and not (32 <= request.block <= 1024 and request.block % 32 == 0):
        raise UsageError(f"--block must be a multiple of 32 in 32..1024, got {count_text(request.block)}")
    names = ["two-kernel", "persistent"] if request.kernel == "all" else [request.kernel or "persistent"]
    for name in names:
        if name not in KERNEL_CHOICES:
            raise UsageError(f"unknown kernel {name!r} (choose from {', '.join(KERNEL_CHOICES)} or all)")
    return [
        (
            name.split("-")[0] if name.startswith("persistent") else name,
            name.split("-")[1] if name.startswith("persistent-") else None,
        )
        for name in names
    ]


def memory_check(n: int, backend: str, precision: str) -> None:
    from sim.durbin.lpc import check_memory

    check_memory(8 * 8 * n, f"N = {n:,}")  # r, y, alphas, betas, a reference and scipy's work arrays
    if backend == "gpu":
        import cupy

        need = 6 * n * np.dtype(np.float32 if precision == "fp32" else np.float64).itemsize
        free = cupy.cuda.runtime.memGetInfo()[0]
        if need > 0.9 * free:
            raise UsageError(
                f"N = {n:,} would need about {need / 2**30:.1f} GiB of GPU memory, {free / 2**30:.1f} GiB free"
            )


def solve_seconds(n: int, gpu: bool) -> float:
    """A whole recursion of N at the durbin scene's pace (``sim.cmdline.resources``): on the CPU one thread's
    N^2 multiply-adds, on the GPU a launch's latency a step besides."""
    from sim.cmdline import resources
    from sim.durbin import SPEC

    work = resources.step_work("recursion", n, n)
    return work / SPEC.pace[1] + n * resources.STEP_SECONDS if gpu else work / SPEC.pace[0]


def time_check(n: int, backend: str, kernels: int):
    """Refuse (exit 2) a size that could not finish; the estimate (a long run says so)."""
    from sim.cmdline import resources

    gpu = backend == "gpu"
    need = resources.Estimate(
        f"durbin: N = {n:,} on the {backend.upper()}", seconds=(kernels if gpu else 1) * solve_seconds(n, gpu)
    )
    resources.check(need)
    return need


def run(request: DurbinRequest) -> int:
    from sim.cmdline import resources
    from sim.durbin import durbin_cpu, inputs, polybench

    n, how = size_of(request)
    kernels = gpu_kernels(request)
    precision = request.precision or "fp64"
    if request.compare and request.version == "3.2" and request.backend == "cpu":
        raise UsageError(
            "--compare with --version 3.2 compares the GPU with the CPU twin (3.2 solves no Toeplitz "
            "system): add --backend gpu, or use --version 4"
        )
    if request.backend == "gpu":
        from sim.gpu.backend import BackendUnavailable, gpu_status

        if not gpu_status().available:
            raise BackendUnavailable(f"GPU backend unavailable: {gpu_status().reason}")
    memory_check(n, request.backend, precision)
    need = time_check(n, request.backend, len(kernels))
    r = inputs.make(request.input, n, request.version)
    print(f"durbin: N = {n:,} ({how}), PolyBench {request.version}, input {request.input}, backend {request.backend}")
    results = []
    if request.backend == "cpu":
        durbin_cpu.solve(r[:2], request.version)  # numba's compile or cache load stays out of the time
        solver = durbin_cpu.DurbinCpu(r, request.version)
        start = time.perf_counter()
        with resources.Progress("durbin CPU", n, "steps", show=need.long) as progress:
            solver.run(progress.advance)
        seconds = time.perf_counter() - start
        print(f"cpu time: {seconds:.6f} s ({seconds / max(n - 1, 1) * 1e6:.3f} us per step)")
        results.append(("cpu", solver.y))
    else:
        from sim.durbin import gpu

        for kernel, path in kernels:
            interrupts.check()
            try:
                y, seconds, solver = gpu_run(r, kernel, path, request.block or 256, precision, request.version)
            except gpu.KernelError as exc:
                raise UsageError(str(exc)) from None
            print(
                f"kernel {kernel} on {gpu.device_properties(0)['name']}, {solver.path}: {seconds:.6f} s "
                f"({seconds / (n - 1) * 1e6:.3f} us per step)"
            )
            results.append((kernel, y))
    label = len(results) > 1
    if request.dump:
        sys.stderr.write(polybench.dump(results[0][1], request.version))
    if request.hash:
        for name, y in results:
            print(polybench.hash_line(y) if not label else f"hash ({name}): {polybench.bits_hash(y)}")
    if request.compare:
        return compare(r, results, request, precision)
    return 0


def gpu_run(r, kernel, path, block, precision, version):
    """(y on the host, kernel seconds by CUDA events, solver): compiled and prepared before timing."""
    import cupy

    from sim.durbin import gpu

    solver = gpu.DurbinGpu(r, kernel, block=block, precision=precision, version=version, path=path)
    solver.prepare()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record(solver.stream)
    solver.run()
    end.record(solver.stream)
    y = solver.result().astype(np.float64)
    return y, cupy.cuda.get_elapsed_time(start, end) * 1e-3, solver


def compare(r, results, request: DurbinRequest, precision) -> int:
    tolerance = TOLERANCE[precision]
    if request.version == "3.2":
        from sim.durbin import durbin_cpu

        reference, what = durbin_cpu.solve(r, "3.2"), "the CPU twin"
    else:
        reference, what = reference_4(r)
    status = 0
    for name, y in results:
        if what.startswith("the residual"):
            err = relative_residual(r, y)
        else:
            err = float(np.max(np.abs(y - reference)) / max(np.max(np.abs(reference)), np.finfo(float).tiny))
        ok = err <= tolerance
        print(
            f"{name}: max relative error against {what}: {err:.3e} ({'ok' if ok else 'FAIL'}, tolerance {tolerance:g})"
        )
        status |= 0 if ok else 1
    return status


def reference_4(r):
    import scipy.linalg

    from sim.durbin.inputs import toeplitz_column

    if r.size <= SCIPY_MAX:
        return scipy.linalg.solve_toeplitz(toeplitz_column(r), -r), "scipy.linalg.solve_toeplitz"
    return None, "the residual |T y + r| / |r| (scipy.linalg.matmul_toeplitz)"


def relative_residual(r, y) -> float:
    import scipy.linalg

    from sim.durbin.inputs import toeplitz_column

    residual = scipy.linalg.matmul_toeplitz(toeplitz_column(r), y) + r
    return float(np.max(np.abs(residual)) / max(np.max(np.abs(r)), np.finfo(float).tiny))


COMMANDS = (
    Command(
        "durbin",
        "Levinson-Durbin recursion, PolyBench-compatible (3.2 and 4.x dumps, the course's hash)",
        add_arguments,
        run,
        "PolyBench's durbin on the CPU (numba, bit-identical to the C code) or the GPU (two launches per "
        "step, or one persistent launch on a thread-block cluster or a cooperative grid).",
        request=DurbinRequest,
    ),
    LPC,
)
