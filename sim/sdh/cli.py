"""The SDH course command: ``sdh N W [BLOCK]`` like the course's ``./SDH atoms width [block]``."""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from sim.cli import Command, UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("atoms", type=int, metavar="N", help="number of atoms (>= 2)")
    p.add_argument("width", type=float, metavar="W", help="bucket width (> 0)")
    p.add_argument("block", type=int, nargs="?", default=256, metavar="BLOCK",
                   help="CUDA block size, 1..1024 (multiple of 32 for the fast kernel; default 256)")
    p.add_argument("--backend", default="cpu", choices=("cpu", "gpu"), help="default cpu")
    p.add_argument("--kernel", default="fast",
                   help="GPU kernel: naive, naive-priv, tiled, tiled-priv, fast (default) or all")
    p.add_argument("--compare", action="store_true",
                   help="GPU: also compute on the CPU, print the difference histogram, exit 1 if any bucket differs")


def run(args) -> int:
    from sim.sdh import cpu, data
    from sim.sdh.output import format_histogram

    if args.atoms < 2:
        raise UsageError(f"need at least 2 atoms, got {args.atoms}")
    if not (args.width > 0 and args.width < float("inf")):
        raise UsageError(f"bucket width must be positive, got {args.width}")
    if not 1 <= args.block <= 1024:
        raise UsageError(f"block size must be 1..1024, got {args.block}")
    buckets = data.bucket_count(args.width)
    points = data.atoms(args.atoms)
    if args.backend == "cpu":
        start = time.perf_counter()
        counts = cpu.histogram(points, args.width, buckets, progress=sys.stderr.isatty() or args.atoms >= 100_000)
        seconds = time.perf_counter() - start
        print(f"Running time for CPU version: {int(seconds)}.{int(seconds % 1 * 1e6):06d}")
        print(format_histogram(counts), end="")
        return 0
    from sim.backend import BackendUnavailable, gpu_status

    if not gpu_status().available:
        raise BackendUnavailable(f"GPU backend unavailable: {gpu_status().reason}")
    from sim.sdh import gpu

    kernels = list(gpu.KERNELS) if args.kernel == "all" else [args.kernel]
    results = {}
    try:
        for kernel in kernels:
            gpu.launch_shape(kernel, args.atoms, args.block, buckets)  # every kernel checked before any runs
        for kernel in kernels:
            counts, ms = gpu.histogram(points, args.width, buckets, kernel, args.block)
            results[kernel] = counts
            label = "" if len(kernels) == 1 else f" ({kernel})"
            print(f"Running time for GPU version{label}: {ms:0.5f} ms")
    except gpu.KernelError as exc:
        raise UsageError(str(exc)) from None
    counts = results[kernels[0]]
    print(format_histogram(counts), end="")
    status = 0
    for kernel, other in results.items():
        if not np.array_equal(other, counts):
            print(f"kernel {kernel} disagrees with {kernels[0]}", file=sys.stderr)
            status = 1
    if args.compare:
        reference = cpu.histogram(points, args.width, buckets, progress=args.atoms >= 100_000)
        difference = counts - reference
        print("\nDifference histogram (GPU - CPU):", end="")
        print(format_histogram(difference), end="")
        if difference.any():
            print(f"{int(np.count_nonzero(difference))} buckets differ", file=sys.stderr)
            status = 1
    return status


COMMANDS = (
    Command("sdh", "spatial distance histogram, course-compatible: ./SDH atoms width [block]", add_arguments, run,
            "The histogram of all N(N-1)/2 distances of N atoms from glibc rand() after srand(1) in a cube of "
            "side 23000, printed like the course's program."),
)
