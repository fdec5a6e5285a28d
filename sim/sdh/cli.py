"""The SDH course command: ``sdh N W [BLOCK]`` like the course's ``./SDH atoms width [block]``.

Refused before any work (exit 2): N < 2, a width that is not a positive number or makes more than
``data.MAX_BUCKETS`` buckets, BLOCK, --kernel or --compare without ``--backend gpu``, an unknown
kernel, and a size whose memory estimate exceeds what this machine (or GPU) has. A run estimated
past ``resources.NOTICE_SECONDS`` says how long it will take and shows progress; the CPU histogram
stops within a second on Ctrl-C (exit 130). Under ``mpiexec -n R`` the pairs are split over the ranks
in bands (bands.py) and rank 0 prints the same output.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import time
from dataclasses import dataclass

import numpy as np

from sim import mpi
from sim.cmdline import cli, interrupts, resources
from sim.cmdline.cli import Command, UsageError
from sim.mpi.links import HostLink, gpu_link
from sim.sdh import bands

DEFAULT_BLOCK = 256
DEFAULT_KERNELS = ("tensor", "fast")  # fastest first: the first that can run at the width and block is the default
# Kernel pace on an H200 at W = 500 (bench/results/h200-sdh-*.json), for the time estimate only
GPU_PAIRS_PER_SECOND = {
    "naive": 4.5e9,
    "naive-priv": 1.5e11,
    "tiled": 4.5e9,
    "tiled-priv": 2e11,
    "fast": 0.9e12,
    "tensor": 1.7e12,
}


@dataclass(frozen=True)
class SdhRequest:
    """``sdh``'s arguments as parsed (``add_arguments``)."""

    atoms: int
    width: float
    block: int | None
    backend: str
    kernel: list[str] | None
    compare: bool


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "atoms",
        type=functools.partial(cli.count, lo=2, what="atoms"),
        metavar="N",
        help="number of atoms (>= 2; 10k, 1e6 and the like)",
    )
    p.add_argument(
        "width",
        type=functools.partial(cli.number, what="bucket width"),
        metavar="W",
        help=f"bucket width (> 0; at most 1,000,000 buckets: W >= {23000 * 1.732 / 1e6:.4g})",
    )
    p.add_argument(
        "block",
        type=functools.partial(cli.count, what="block size"),
        nargs="?",
        metavar="BLOCK",
        help=f"GPU: CUDA block size, 1..1024 (multiple of 32 for the fast kernel; default {DEFAULT_BLOCK})",
    )
    p.add_argument("--backend", default="cpu", choices=("cpu", "gpu"), help="default cpu")
    p.add_argument(
        "--kernel",
        type=cli.items,
        help="GPU: naive, naive-priv, tiled, tiled-priv, fast, tensor, all (those that can run "
        "at this width), or a comma-separated list; default: the fastest exact kernel that "
        "can run at this width and block, tensor (bucket widths above about 170 at block "
        "256), else fast",
    )
    p.add_argument(
        "--compare",
        action="store_true",
        help="GPU: also compute on the CPU, print the difference histogram, exit 1 if any bucket differs",
    )


def _checked(request: SdhRequest) -> tuple[int, list[str], int]:
    """(buckets, kernels, block) after every check that needs no GPU; UsageError names what is wrong."""
    from sim.sdh import data
    from sim.sdh.kernels import KERNELS, RANK_KERNELS

    buckets = data.bucket_count(request.width)  # WidthError (a UsageError): not positive, or past MAX_BUCKETS
    if request.backend != "gpu":
        given = [
            name
            for name, on in (
                ("BLOCK", request.block is not None),
                ("--kernel", request.kernel is not None),
                ("--compare", request.compare),
            )
            if on
        ]
        if given:
            raise UsageError(
                f"{' and '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to the GPU backend "
                "only: add --backend gpu, or leave "
                f"{'it' if len(given) == 1 else 'them'} out"
            )
        return buckets, [], 0
    block = DEFAULT_BLOCK if request.block is None else request.block
    if not 1 <= block <= 1024:
        raise UsageError(f"block size must be 1..1024, got {block}")
    names = request.kernel or [DEFAULT_KERNELS[-1]]  # run() picks the default
    kernels = cli.choices(names, RANK_KERNELS if mpi.world().size > 1 else KERNELS, "kernel")
    return buckets, kernels, block


def default_kernel(n: int, buckets: int, block: int, device: int = 0) -> str:
    """The first of DEFAULT_KERNELS that can run with these settings; the last one when none can (``runnable``
    then says why)."""
    from sim.sdh import gpu

    for kernel in DEFAULT_KERNELS[:-1]:
        try:
            gpu.launch_shape(kernel, n, block, buckets, device, *_slots(kernel, buckets))
            return kernel
        except gpu.KernelError:
            pass
    return DEFAULT_KERNELS[-1]


def _slots(kernel: str, buckets: int) -> tuple:
    from sim.sdh import gpu

    return (gpu.fine_slots(buckets),) if kernel == "tensor" else ()  # the course cube's counters


def runnable(
    kernels: list[str], every: bool, n: int, buckets: int, blocks: list[int], device: int = 0, say: bool = True
) -> list[str]:
    """The kernels that can run with these settings and every block, all checked before any runs. A kernel
    named outright that cannot is a UsageError saying why; with ``every`` (``--kernel all``) it is left out
    with a line saying why (the tensor kernel at narrow buckets) where ``say`` (MPI: rank 0 alone)."""
    from sim.sdh import gpu

    kept = []
    for kernel in kernels:
        try:
            for block in blocks:
                gpu.launch_shape(kernel, n, block, buckets, device, *_slots(kernel, buckets))
        except gpu.KernelError as exc:
            if not every:
                raise UsageError(str(exc)) from None
            if say:
                print(f"  kernel {kernel} left out: {exc}", file=sys.stderr, flush=True)
            continue
        kept.append(kernel)
    if not kept:
        raise UsageError(f"no kernel can run with {buckets:,} buckets")
    return kept


def every_kernel(request: SdhRequest) -> bool:
    return request.kernel == ["all"]


def estimate(request: SdhRequest, buckets: int, kernels: list[str]) -> resources.Estimate:
    """Memory and time of ``sdh`` with these arguments on this machine."""
    return histogram_estimate(request.atoms, buckets, request.backend, kernels, request.compare)


def histogram_estimate(
    n: int, buckets: int, backend: str, kernels=(), compare: bool = False, runs: int = 1, label: str = "sdh"
) -> resources.Estimate:
    """Memory and time of ``runs`` histograms of ``n`` atoms on the CPU, or of each of ``kernels`` on the GPU
    (and the CPU's once, with ``compare``); ``sdh`` and ``bench sdh`` alike."""
    from sim.sdh import data, sdh_cpu

    count = f"{cli.count_text(n)} atoms ({cli.count_text(data.pair_count(n))} pairs)"
    what = f"{label}: {count}" + (f" x {runs} runs" if runs > 1 else "")
    pairs = float(n) * (n - 1) / 2  # the pace in floats: inf, not an OverflowError, for an absurd N
    cpu_seconds = pairs / (sdh_cpu.PAIRS_PER_SECOND_PER_THREAD * resources.cpu_threads())
    host = data.ATOM_BYTES * n + 8 * 4 * resources.cpu_threads() * buckets + 40 * buckets  # atoms, counts, text
    if backend != "gpu":
        return resources.Estimate(f"{what} on the CPU", memory=host, seconds=runs * cpu_seconds)
    seconds = runs * sum(pairs / GPU_PAIRS_PER_SECOND[k] for k in kernels) + (cpu_seconds if compare else 0.0)
    return resources.Estimate(
        f"{what} on the GPU", memory=host, seconds=seconds, gpu_memory=64 * n + 16 * buckets + (1 << 20)
    )


def run(request: SdhRequest) -> int:
    buckets, kernels, block = _checked(request)
    if request.backend == "gpu":
        from sim.gpu.backend import BackendUnavailable, gpu_status

        if not gpu_status().available:
            raise BackendUnavailable(f"GPU backend unavailable: {gpu_status().reason}")
        if request.kernel is None:  # every rank of an MPI launch picks the same: GPU 0's limits
            kernels = [default_kernel(request.atoms, buckets, block)]
    need = estimate(request, buckets, kernels)
    if mpi.world().size > 1:  # mpiexec -n R: the pairs split over the ranks, rank 0 prints
        return run_ranks(request, buckets, kernels, block, need)
    resources.check(need)
    if request.backend == "gpu" and need.long:
        print(
            "  each kernel runs as one launch: Ctrl-C takes effect when the running kernel ends",
            file=sys.stderr,
            flush=True,
        )
    from sim.sdh import data, sdh_cpu
    from sim.sdh.output import format_histogram

    points = data.atoms(request.atoms)
    pairs = data.pair_count(request.atoms)
    if request.backend == "cpu":
        start = time.perf_counter()
        with resources.Progress("CPU histogram", pairs, "pairs", show=need.long) as progress:
            counts = sdh_cpu.histogram(points, request.width, buckets, progress=progress)
        seconds = time.perf_counter() - start
        print(f"Running time for CPU version: {int(seconds)}.{int(seconds % 1 * 1e6):06d}")
        print(format_histogram(counts), end="")
        return 0
    return run_gpu(request, points, buckets, kernels, block, need)


def run_gpu(request: SdhRequest, points: np.ndarray, buckets: int, kernels: list[str], block: int, need) -> int:
    from sim.sdh import data, gpu, sdh_cpu

    results = {}
    kernels = runnable(kernels, every_kernel(request), request.atoms, buckets, [block])
    try:
        for kernel in kernels:
            interrupts.check()
            counts, ms = gpu.histogram(points, request.width, buckets, kernel, block)
            results[kernel] = counts
            label = "" if len(kernels) == 1 else f" ({kernel})"
            print(f"Running time for GPU version{label}: {ms:0.5f} ms", flush=True)
    except gpu.KernelError as exc:
        raise UsageError(str(exc)) from None
    reference = None
    if request.compare:
        pairs = data.pair_count(request.atoms)
        with resources.Progress("CPU histogram", pairs, "pairs", show=need.long) as progress:
            reference = sdh_cpu.histogram(points, request.width, buckets, progress=progress)
    return print_gpu_histograms(results, kernels, reference, data.pair_count(request.atoms))


def run_ranks(request: SdhRequest, buckets: int, kernels: list[str], block: int, need: resources.Estimate) -> int:
    """``sdh`` on every rank of an MPI launch: the same printout as one process, from rank 0."""
    from sim.sdh import data
    from sim.sdh.output import format_histogram

    comm = mpi.world()
    share = comm.size if request.backend == "gpu" else comm.hosts
    resources.check(dataclasses.replace(need, seconds=need.seconds / share))
    device = 0
    if request.backend == "gpu":
        device = mpi.gpu_of(comm)
        kernels = runnable(kernels, every_kernel(request), request.atoms, buckets, [block], device, say=comm.is_root)
    points = data.atoms(request.atoms)
    mpi.begin()
    link = gpu_link(comm, device) if request.backend == "gpu" else HostLink(comm)
    root = comm.is_root
    if root:
        where = f"GPU {device} of each" if request.backend == "gpu" else "the CPU"
        print(
            f"  {comm.size} ranks on {comm.hosts} host(s), {where}; messages: {link.describe()}",
            file=sys.stderr,
            flush=True,
        )
    pairs = data.pair_count(request.atoms)
    show = need.long and root

    def cpu_counts(label: str) -> bands.DistributedResult:
        mine = bands.shares(request.atoms, comm.size)[comm.rank]
        with resources.Progress(label, bands.share_pairs(request.atoms, mine), "pairs", show=show) as progress:
            return bands.histogram(comm, link, points, request.width, buckets, "cpu", progress=progress)

    if request.backend == "cpu":
        result = cpu_counts("CPU histogram (rank 0's share)")
        mpi.end()
        if root and result.counts is not None:  # the counts come back to rank 0
            seconds = result.wall_ms / 1e3
            print(f"Running time for CPU version: {int(seconds)}.{int(seconds % 1 * 1e6):06d}")
            print(format_histogram(result.counts), end="")
        return 0
    results = {}
    for kernel in kernels:
        result = bands.histogram(comm, link, points, request.width, buckets, "gpu", kernel, block, device)
        results[kernel] = result.counts
        if root:
            label = "" if len(kernels) == 1 else f" ({kernel})"
            print(f"Running time for GPU version{label}: {result.wall_ms:0.5f} ms", flush=True)
            print(
                f"  kernel ms per rank: {', '.join(f'{ms:.3f}' for ms in result.rank_ms)}; whole run (start to the "
                f"summed histogram on rank 0): {result.wall_ms:.3f} ms",
                file=sys.stderr,
                flush=True,
            )
    reference = cpu_counts("CPU histogram for --compare (rank 0's share)").counts if request.compare else None
    link.close()
    mpi.end()
    return print_gpu_histograms(results, kernels, reference, pairs) if root else 0


def print_gpu_histograms(results: dict, kernels: list[str], reference, pairs: int) -> int:
    """The course's printout of the first kernel's histogram; 1 when kernels disagree, when the total is
    not N(N-1)/2, or (``reference``: the CPU's, for --compare) when the difference histogram is not zero."""
    from sim.sdh.output import format_histogram

    counts = results[kernels[0]]
    print(format_histogram(counts), end="")
    status = 0
    for kernel, other in results.items():
        if not np.array_equal(other, counts):
            print(f"kernel {kernel} disagrees with {kernels[0]}", file=sys.stderr)
            status = 1
    if int(counts.sum()) != pairs:
        print(f"the histogram holds {int(counts.sum())} pairs, not {pairs}", file=sys.stderr)
        status = 1
    if reference is not None:
        difference = counts - reference
        print("\nDifference histogram (GPU - CPU):", end="")
        print(format_histogram(difference), end="")
        if difference.any():
            print(f"{int(np.count_nonzero(difference))} buckets differ", file=sys.stderr)
            status = 1
    return status


COMMANDS = (
    Command(
        "sdh",
        "spatial distance histogram, course-compatible: ./SDH atoms width [block]",
        add_arguments,
        run,
        "The histogram of all N(N-1)/2 distances of N atoms from glibc rand() after srand(1) in a cube of "
        "side 23000, printed like the course's program.",
        request=SdhRequest,
    ),
)
