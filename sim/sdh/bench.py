"""``bench sdh``: CUDA-event kernel times of the histogram kernels (``sim.gpu.measure``: median ± error), every
kernel's counts checked against the first one's and against N(N-1)/2 during the run (a kernel that
disagrees is reported, still timed, and makes the run exit 1). Sizes whose memory or time estimate
(the ``sdh`` command's) exceeds this machine or a week are refused before any runs, exit 2.
Over MPI ranks (``scaling``, the bench's ``over_ranks``) and with ``--backend cpu``: the scaling tables of
bands_bench.py."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys

import numpy as np

from sim.cmdline import cli, interrupts, resources
from sim.cmdline.arguments import own_bench_arguments
from sim.cmdline.cli import UsageError
from sim.contract import Bench, SceneSpec
from sim.gpu import measure
from sim.gpu.roofline import Setup, record_lines
from sim.sdh import bands_bench
from sim.sdh.cli import DEFAULT_BLOCK

RUNS = 2  # of each kernel, block and size in the estimate: the harness's warm-up and first timed run (more
# runs only within its time budget)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-n",
        "--count",
        "--sizes",
        dest="count",
        type=functools.partial(cli.counts, lo=2, what="atoms"),
        default=[100_000],
        help="comma-separated atom counts, each at least 2 (default 100000)",
    )
    p.add_argument("--kernel", type=cli.items, help="GPU: comma-separated kernels, or all (default)")
    p.add_argument(
        "--block", type=cli.counts, help=f"GPU: comma-separated block sizes, 1..1024 (default {DEFAULT_BLOCK})"
    )
    p.add_argument(
        "--width",
        type=functools.partial(cli.number, what="bucket width"),
        default=500.0,
        help="bucket width (default 500)",
    )
    p.add_argument(
        "--backend",
        default="gpu",
        choices=("gpu", "cpu"),
        help="gpu (default): the kernels; cpu: the CPU histogram, as a scaling table over MPI ranks",
    )


@dataclasses.dataclass(frozen=True)
class SdhBenchRequest:
    """``bench sdh``'s arguments as parsed (``add_arguments``, and --json and --baseline of the command)."""

    scene: str  # "sdh"
    count: list[int]
    kernel: list[str] | None
    block: list[int] | None
    width: float
    backend: str
    json: str | None
    baseline: dict | None

    @property
    def gpu_kernels(self) -> list[str]:
        """--kernel as ``check_arguments`` fills it in for the GPU."""
        if self.kernel is None:
            raise ValueError("the GPU kernels are filled in by check_arguments")
        return self.kernel

    @property
    def gpu_blocks(self) -> list[int]:
        """--block as ``check_arguments`` fills it in for the GPU."""
        if self.block is None:
            raise ValueError("the GPU block sizes are filled in by check_arguments")
        return self.block


def check_arguments(request: SdhBenchRequest) -> SdhBenchRequest:
    """Every value checked before looking for a GPU; the request with the GPU options' defaults filled in."""
    from sim.sdh import data
    from sim.sdh.kernels import KERNELS

    data.bucket_count(request.width)  # WidthError (a UsageError): not positive, or too many buckets
    if request.backend == "cpu":
        given = [name for name in ("kernel", "block", "baseline") if getattr(request, name) is not None]
        if given:
            names = " and ".join(f"--{name}" for name in given)
            raise UsageError(
                f"{names} appl{'ies' if len(given) == 1 else 'y'} to the GPU kernels; --backend cpu "
                f"times the CPU histogram: leave {'it' if len(given) == 1 else 'them'} out"
            )
        return request
    request = dataclasses.replace(request, kernel=request.kernel or ["all"], block=request.block or [DEFAULT_BLOCK])
    cli.choices(request.gpu_kernels, KERNELS, "kernel")
    for block in request.gpu_blocks:
        if not 1 <= block <= 1024:
            raise UsageError(f"block size must be 1..1024, got {block}")
    return request


def run(request: SdhBenchRequest) -> int:
    from sim.cmdline import bench, bench_report

    request = check_arguments(request)
    if request.backend == "cpu":  # the CPU histogram's scaling table: the one-rank row in one process
        return bands_bench.run(request)
    from sim.gpu.backend import BackendUnavailable, gpu_status
    from sim.sdh import SPEC, data
    from sim.sdh.cli import histogram_estimate
    from sim.sdh.kernels import KERNELS

    kernels = cli.choices(request.gpu_kernels, KERNELS, "kernel")
    buckets = data.bucket_count(request.width)
    runs = RUNS * len(request.gpu_blocks)
    resources.check_in_turn(
        [histogram_estimate(n, buckets, "gpu", kernels, runs=runs, label="bench sdh") for n in request.count],
        f"bench sdh: {len(request.count)} sizes x {len(kernels)} kernels",
    )
    if not gpu_status().available:
        raise BackendUnavailable(f"the sdh benchmark times GPU kernels: {gpu_status().reason}")
    from sim.sdh import gpu

    records, failed = [], False
    for n in request.count:
        points = data.atoms(n)
        reference = None
        for kernel, block in ((k, b) for k in kernels for b in request.gpu_blocks):
            interrupts.check()
            try:
                counts, timing = gpu.measured_histogram(points, request.width, buckets, kernel, block)
            except gpu.KernelError as exc:
                raise UsageError(str(exc)) from None
            reference = counts if reference is None else reference
            exact = bool(np.array_equal(counts, reference) and counts.sum() == data.pair_count(n))
            if not exact:  # timed all the same; the run fails at the end
                print(f"kernel {kernel} block {block} disagrees at n={n}", file=sys.stderr)
                failed = True
            pairs, ms = data.pair_count(n), timing.median
            records.append(
                {
                    "n": n,
                    "w": request.width,
                    "backend": "gpu",
                    "kernel": kernel,
                    "block": block,
                    **timing.fields("kernel_ms"),
                    "pairs_per_s": pairs / (ms * 1e-3),
                    "exact": exact,
                    "speed_of_light": bench.speed_of_light(
                        SPEC, Setup(n, 1.0, kernel, block, stats={"buckets": buckets}), {"histogram": ms}, True
                    ),
                }
            )
            print(
                f"n={n:,} {kernel} block {block}: {timing.text()} ms, {pairs / (ms * 1e-3):.4g} pairs/s",
                file=sys.stderr,
                flush=True,
            )
        del points
        bench.release_memory()
    report = bench_report.report("sdh", records)
    bench_report.publish(report, table(report), request.json, request.baseline)
    return 1 if failed else 0


def table(rep: dict) -> str:
    lines = [
        f"sdh on {rep['device']} (commit {rep['commit']}, {rep['date']}); CUDA-event kernel times, "
        "median ± 95% error (runs)",
        f"{'n':>10} {'w':>7} {'kernel':>11} {'block':>5} {'kernel ms':>26} {'pairs/s':>12}",
    ]
    for r in rep["results"]:
        lines.append(
            f"{r['n']:>10} {r['w']:>7g} {r['kernel']:>11} {r['block']:>5} "
            f"{measure.figure_text(r, 'kernel_ms'):>26} {r['pairs_per_s']:>12.4g}"
            + ("" if r.get("exact", True) else "  WRONG COUNTS")
        )
        lines += [f"{'':>10} {line}" for line in record_lines(r)]
    return "\n".join(lines)


def scaling(request: SdhBenchRequest, spec: SceneSpec) -> int:
    """Strong and weak scaling over MPI ranks (``BENCH.over_ranks``)."""
    return bands_bench.run(check_arguments(request))


# the sdh scene's benchmark: its kernels in one process, the scaling tables over MPI ranks
BENCH = Bench(own_bench_arguments(add_arguments), SdhBenchRequest, run, over_ranks=scaling)
