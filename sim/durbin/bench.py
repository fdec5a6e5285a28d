"""The durbin benchmark: single long systems per kernel and block size beside scipy, and many short
systems (LPC-like) per batched kernel beside scipy's batched call and a CuPy loop vectorised across
the batch. Inputs: the yardstick's AR(6) autocorrelation (and damped variants of it for the batch).

  python -m sim.durbin.bench --sizes 4000,20000,200000 --kernel all --batch 100000x32 --json F
  python main.py bench durbin --sizes 4000,20000,200000 --kernel all --batch 100000x32 --json F

Report: {"device", "commit", "date", "workload": "durbin", "results": [record, ...]}; a record has
"kind" (single, probe, batch), the method or kernel, seconds, and per single system us_per_step and
its error against scipy (rel_err) or, above the scipy cap, the FFT residual (residual).

The runs are timed in sim/durbin/bench_runs.py; here: the report, its table and the command (the scene's ``Bench``).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from sim.cmdline import baseline
from sim.cmdline.arguments import own_bench_arguments
from sim.cmdline.cli import count_text
from sim.contract import Bench
from sim.durbin.bench_runs import (
    BENCH_KERNELS,
    SCIPY_CAP,
    batch_records,
    kernel_and_path,
    probe_records,
    single_records,
)
from sim.gpu import measure
from sim.gpu.roofline import Setup, record_lines


def run(
    sizes,
    kernels=BENCH_KERNELS,
    blocks=(256,),
    batch: tuple[int, int] | None = None,
    precision="fp64",
    probe=True,
    log=None,
) -> dict:
    """The report for single systems of ``sizes`` (each kernel x block) and, with ``batch`` = (systems,
    order), the batched solvers."""
    from sim.cmdline import bench_report

    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    kernels = list(BENCH_KERNELS) if list(kernels) == ["all"] else list(kernels)
    for name in kernels:
        kernel_and_path(name)
    records = single_records(sizes, kernels, blocks, precision, log)
    if probe:
        records += probe_records(precision, log)
    if batch:
        records += batch_records(*batch, precision, log)
    for record in records:
        add_speed_of_light(record)
    return bench_report.report("durbin", records)


def add_speed_of_light(record: dict) -> None:
    """The roofline figures of the product's GPU solves (a single system's whole recursion, a batch's solve);
    scipy and the peer's CuPy loop are not the models' kernels."""
    from sim.cmdline import bench
    from sim.durbin import SPEC

    if record["backend"] != "gpu" or "skipped" in record or record["method"] == "cupy-vectorised":
        return
    options = {"precision": record.get("precision", "fp64")}
    if record["kind"] == "batch":
        setup = Setup(
            record["systems"] * record["order"],
            1.0,
            "",
            record.get("block"),
            options,
            "lpc",
            {"frames": record["systems"]},
        )
    else:  # all n - 1 steps of one system, k = n at the end
        n = record["n"]
        setup = Setup(n, float(n), record["method"], record.get("block"), options, "ar", {"entries": n})
    record["speed_of_light"] = bench.speed_of_light(SPEC, setup, {"recursion": record["s"] * 1e3}, True)


def table(report: dict) -> str:
    lines = [
        f"durbin on {report['device']} (commit {report['commit']}, {report['date']})",
        f"{'kind':>6} {'n / batch':>14} {'method':>19} {'block':>5} {'seconds ± error (runs)':>28} "
        f"{'us/step':>9}  note",
    ]
    for r in report["results"]:
        size = f"{r['systems']}x{r['order']}" if r["kind"] == "batch" else f"{r['n']:,}"
        if "skipped" in r:
            lines.append(
                f"{r['kind']:>6} {size:>14} {r['method']:>19} {str(r.get('block', '-')):>5} {'-':>28} "
                f"{'-':>9}  skipped: {r['skipped'][:60]}"
            )
            continue
        note = []
        if r.get("extrapolated"):
            note.append(f"extrapolated from n={r['from_n']:,} (O(n^2))")
        for key, fmt in (
            ("rel_err", "rel err {:.1e}"),
            ("residual", "residual {:.1e}"),
            ("max_abs_err", "max abs err {:.1e}"),
            ("path", "{}"),
        ):
            if r.get(key) is not None:
                note.append(fmt.format(r[key]))
        if r.get("bit_exact"):
            note.append("bit-exact vs CPU")
        per_step = f"{r['us_per_step']:.3f}" if "us_per_step" in r else "-"
        lines.append(
            f"{r['kind']:>6} {size:>14} {r['method']:>19} {str(r.get('block', '-')):>5} "
            f"{measure.figure_text(r, 's'):>28} "
            f"{per_step:>9}  {'; '.join(note)}"
        )
        lines += [f"{'':>6} {line}" for line in record_lines(r)]
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from sim.cmdline.cli import blocks, counts, items, size

    p.add_argument(
        "--sizes",
        type=lambda text: counts(text, 2, "N"),
        default=[4000, 20000, 200000],
        help="comma-separated N (>= 2) of the single systems (default 4000,20000,200000)",
    )
    p.add_argument(
        "--kernel",
        type=items,
        default=["all"],
        help=f"comma-separated kernels: {', '.join(BENCH_KERNELS)}, persistent (auto path), or all",
    )
    p.add_argument(
        "--block",
        type=blocks,
        default=[256],
        help="comma-separated block sizes, multiples of 32 in 32..1024 (default 256)",
    )
    p.add_argument(
        "--batch",
        type=lambda s: size(s, 2, 1 << 30, "--batch"),
        help="SYSTEMSxORDER, e.g. 100000x32: the batched solvers too",
    )
    p.add_argument("--precision", default="fp64", choices=("fp64", "fp32"))


@dataclass(frozen=True)
class DurbinBenchRequest:
    """``bench durbin``'s arguments as parsed (``add_arguments``, and --json and --baseline of the command)."""

    scene: str  # "durbin"
    sizes: list[int]
    kernel: list[str]
    block: list[int | tuple[int, int]]
    batch: tuple[int, int] | None
    precision: str
    json: str | None
    baseline: dict | None


def check_arguments(request: DurbinBenchRequest) -> None:
    """Every value checked before looking for a GPU: a bad one is named (exit 2), not reported as "no GPU"."""
    from sim.cmdline.cli import UsageError, block_text

    for name in [] if request.kernel == ["all"] else request.kernel:
        try:
            kernel_and_path(name)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    for block in request.block:
        if isinstance(block, tuple) or not (32 <= block <= 1024 and block % 32 == 0):
            raise UsageError(f"--block must be a multiple of 32 in 32..1024, got {block_text(block)}")


def check_resources(request: DurbinBenchRequest) -> None:
    """Refuse (exit 2) runs that cannot fit or could not finish (``sim.cmdline.resources``), at the durbin scene's pace
    and memory per entry: scipy up to SCIPY_CAP, each kernel and block's untimed and timed runs, the batch."""
    from sim.cmdline import resources
    from sim.durbin import SPEC
    from sim.durbin.cli import solve_seconds

    cpu_pace = SPEC.pace[0]
    host, device = SPEC.bytes_per_item
    kernels = len(BENCH_KERNELS) if list(request.kernel) == ["all"] else len(request.kernel)
    each = []
    for n in request.sizes:
        runs = kernels * len(request.block) * 2  # sim.gpu.measure's warm-up and first timed run; more within its budget
        each.append(
            resources.Estimate(
                f"bench durbin: N = {count_text(n)} x {runs} runs on the GPU",
                memory=host * n,
                gpu_memory=device * n,
                seconds=min(n, SCIPY_CAP) ** 2 / cpu_pace + runs * solve_seconds(n, True),
            )
        )
    if request.batch:
        systems, order = request.batch
        each.append(
            resources.Estimate(
                f"bench durbin: a batch of {systems:,} systems of order {order:,}",
                memory=host * systems * order,
                gpu_memory=device * systems * order,
                seconds=2 * systems * order * order / cpu_pace,
            )
        )  # the CPU twin, scipy
    resources.check_in_turn(each, f"bench durbin: {len(each)} sizes")


def run_command(request: DurbinBenchRequest) -> int:
    """``bench durbin``: the report of ``run`` as a table (and JSON with --json); the kernels need a GPU.
    Sizes whose estimate exceeds this machine's memory or a week are refused first (exit 2)."""
    from sim.cmdline import bench_report
    from sim.cmdline.cli import UsageError
    from sim.gpu.backend import BackendUnavailable, gpu_status

    check_arguments(request)
    check_resources(request)
    status = gpu_status()
    if not status.available:
        raise BackendUnavailable(f"the durbin benchmark times GPU kernels: {status.reason}")
    try:
        report = run(request.sizes, request.kernel, request.block, request.batch, request.precision)
    except ValueError as exc:  # an unknown kernel, a block or size a kernel cannot take
        raise UsageError(str(exc)) from None
    bench_report.publish(report, table(report), request.json, request.baseline)
    return 0


BENCH = Bench(own_bench_arguments(add_arguments), DurbinBenchRequest, run_command)  # the durbin scene's benchmark


def main(argv=None) -> int:
    from sim.cmdline.writer import check_target

    p = argparse.ArgumentParser(prog="python -m sim.durbin.bench", description=__doc__.splitlines()[0])
    add_arguments(p)
    p.add_argument("--json", metavar="FILE")
    baseline.add_option(p)
    from sim.cmdline.cli import parsed

    request = parsed(DurbinBenchRequest, p.parse_args(argv), scene="durbin")
    from sim.cmdline.cli import EXIT_USAGE, UsageError
    from sim.cmdline.writer import OutputError
    from sim.gpu.backend import BackendUnavailable

    try:
        if request.json and request.json != "-":
            check_target(request.json, "JSON file")
        return run_command(request)
    except (UsageError, BackendUnavailable, OutputError) as exc:
        print(f"{p.prog}: {exc}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, UsageError) else 1


if __name__ == "__main__":
    sys.exit(main())
