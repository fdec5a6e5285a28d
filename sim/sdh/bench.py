"""``bench sdh``: CUDA-event kernel times of the histogram kernels (median of three), every
kernel's counts checked against the first one's and against N(N-1)/2 during the run (a kernel that
disagrees is reported, still timed, and makes the run exit 1)."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from sim import cli, interrupts
from sim.cli import Command, UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-n", "--count", "--sizes", dest="count", type=cli.counts, default=[100_000],
                   help="comma-separated atom counts (default 100000)")
    p.add_argument("--kernel", default="all", help="comma-separated kernels, or all (default)")
    p.add_argument("--block", type=cli.counts, default=[256], help="comma-separated block sizes (default 256)")
    p.add_argument("--width", type=float, default=500.0, help="bucket width (default 500)")
    p.add_argument("--backend", default="gpu", choices=("gpu", "cpu"),
                   help="gpu (default): the kernels; cpu: the CPU histogram, as a scaling table over MPI ranks")


def run(args) -> int:
    from sim import bench, dist

    if dist.world().size > 1 or args.backend == "cpu":  # strong and weak scaling over MPI ranks
        from sim.dist import bench as scaling

        return scaling.sdh(args)
    from sim.backend import BackendUnavailable, gpu_status
    from sim.sdh import data

    if not gpu_status().available:
        raise BackendUnavailable(f"the sdh benchmark times GPU kernels: {gpu_status().reason}")
    from sim.sdh import gpu

    kernels = cli.choices(cli.items(args.kernel), gpu.KERNELS, "kernel")
    if not 0 < args.width < float("inf"):
        raise UsageError(f"bucket width must be positive, got {args.width}")
    buckets = data.bucket_count(args.width)
    records, failed = [], False
    for n in args.count:
        points = data.atoms(n)
        reference = None
        for kernel, block in ((k, b) for k in kernels for b in args.block):
            interrupts.check()
            try:
                counts, ms = gpu.histogram(points, args.width, buckets, kernel, block, repeats=3)
            except gpu.KernelError as exc:
                raise UsageError(str(exc)) from None
            reference = counts if reference is None else reference
            exact = bool(np.array_equal(counts, reference) and counts.sum() == data.pair_count(n))
            if not exact:  # timed all the same; the run fails at the end
                print(f"kernel {kernel} block {block} disagrees at n={n}", file=sys.stderr)
                failed = True
            pairs = data.pair_count(n)
            records.append({"n": n, "w": args.width, "backend": "gpu", "kernel": kernel, "block": block,
                            "kernel_ms": ms, "pairs_per_s": pairs / (ms * 1e-3), "exact": exact})
            print(f"n={n:,} {kernel} block {block}: {ms:.3f} ms, {pairs / (ms * 1e-3):.4g} pairs/s",
                  file=sys.stderr, flush=True)
        del points
        bench.release_memory()
    report = bench.report("sdh", records)
    bench.publish(report, table(report), args.json)
    return 1 if failed else 0


def table(rep: dict) -> str:
    lines = [f"sdh on {rep['device']} (commit {rep['commit']}, {rep['date']}); CUDA-event kernel times, median of 3",
             f"{'n':>10} {'w':>7} {'kernel':>11} {'block':>5} {'kernel ms':>12} {'pairs/s':>12}"]
    for r in rep["results"]:
        lines.append(f"{r['n']:>10} {r['w']:>7g} {r['kernel']:>11} {r['block']:>5} "
                     f"{r['kernel_ms']:>12.3f} {r['pairs_per_s']:>12.4g}"
                     + ("" if r.get("exact", True) else "  WRONG COUNTS"))
    return "\n".join(lines)


BENCH = Command("bench sdh", "time the histogram kernels", add_arguments, run)
