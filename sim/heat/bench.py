"""``bench heat``: every heat variant x block shape (x k) timed with CUDA events on the DLI's field,
beside the single-sweep bandwidth floor measured in the same run and the seed's Tesla T4 times.

The floor is 8 bytes per cell update (one read, one write) at the device-to-device copy rate:
no kernel that re-reads the field once a step beats it; the temporal kernel (k steps a launch) is
meant to. Each configuration runs once untimed (compilation, clocks), then at least ``repeats`` timed runs
from the initial field through ``sim.gpu.measure`` (more until the median is known to 1% or its time budget
ends); the median counts, with its error. Every result is compared bit for bit with the first
configuration of its size (the builds without --fma are all exact).

  python -m sim.heat.bench --sizes 10000 --steps 400 --kernel all --block all --k all --json out.json
"""

from __future__ import annotations

import argparse
import functools
import sys
from dataclasses import dataclass

from sim.cmdline import baseline, cli, interrupts
from sim.cmdline.arguments import own_bench_arguments
from sim.cmdline.cli import UsageError, count_text
from sim.contract import Bench
from sim.gpu import measure
from sim.gpu.roofline import Setup, record_lines
from sim.heat import course
from sim.heat.kernels import BLOCK_SHAPES, K_MAX, KERNELS

SEED_N, SEED_STEPS = 10000, 5000
SEED_T4_S = {"global": 21.75, "shared": 32.24, "pitched": 30.20}  # the seed's Tesla T4, 10000^2 x 5000 steps
COPY_BYTES = 1 << 30  # each buffer of the copy that measures the floor


def copy_rate(device: int = 0, repeats: int = 10) -> float:
    """Device-to-device copy rate in bytes/s, counting bytes read and written (the median of at least
    ``repeats`` copies, through ``sim.gpu.measure``)."""
    import cupy

    with cupy.cuda.Device(device):
        a = cupy.empty(COPY_BYTES // 4, cupy.float32)
        a.fill(1.0)
        b = cupy.empty_like(a)
        timing = measure.measure(functools.partial(cupy.copyto, b, a), measure.EventClock(), min_repeats=repeats)
        del a, b
        cupy.get_default_memory_pool().free_all_blocks()
    return 2 * COPY_BYTES / (timing.median * 1e-3)


def configurations(kernels, blocks, ks) -> list[tuple[str, tuple[int, int], int | None]]:
    return [
        (kernel, tuple(block), k)
        for kernel in kernels
        for block in blocks
        for k in (ks if kernel == "temporal" else [None])
    ]


def run(
    sizes,
    steps: int,
    kernels=KERNELS,
    blocks=BLOCK_SHAPES,
    ks=(8,),
    fma: bool = False,
    progress: bool = True,
    repeats: int = 3,
    device: int = 0,
) -> dict:
    """Time every configuration on n x n grids for each n in ``sizes``; the report of
    ``sim.cmdline.bench_report.report`` with the copy rate added. KernelError (ValueError) before any timing
    for a shape a variant cannot run."""
    import cupy

    from sim.cmdline import bench, bench_report
    from sim.heat import SPEC, gpu

    configs = configurations(kernels, blocks, ks)
    for kernel, block, k in configs:
        gpu.check_launch(kernel, block, k or 1, device)
    rate = copy_rate(device)
    results: list[dict] = []
    total = len(configs) * len(sizes)
    for n in sizes:
        field = course.initial_field(n, n)
        floor_ms = 8 * n * n / rate * 1e3
        with cupy.cuda.Device(device):
            start_field = cupy.asarray(field)
            heat = gpu.HeatGpu(start_field, device, configs[0][0], configs[0][1], configs[0][2] or 1, fma)
            reference = None
            for kernel, block, k in configs:
                interrupts.check()
                heat.configure(kernel, block, k or 1, fma)
                label = f"[{len(results) + 1}/{total}] n={n} {kernel} {block[0]}x{block[1]}" + (f" k={k}" if k else "")
                if progress:
                    print(f"{label} ...", file=sys.stderr, flush=True)
                timing = measure.measure(
                    functools.partial(heat.step, steps),
                    measure.EventClock(),  # warm-up compiles
                    setup=functools.partial(heat.load, start_field),
                    min_repeats=repeats,
                    flush=measure.l2_flush(12 * n * n, device),
                    between=interrupts.check,
                )
                if reference is None:
                    reference = heat.field.copy()
                exact = bool(cupy.array_equal(heat.field, reference))
                record = record_for(n, steps, kernel, block, k, fma, timing, floor_ms, rate, exact, heat.launch_info())
                record["speed_of_light"] = bench.speed_of_light(
                    SPEC,
                    Setup(n * n, 1.0, kernel, block, {"k": str(k or 1)}),
                    {"step": record["ms_per_step"]},
                    True,
                    device,
                )
                results.append(record)
                if progress:
                    print(
                        f"{label}: {timing.scaled(1 / max(steps, 1)).text()} ms/step, {record['gcells_per_s']:.1f} G "
                        f"cell-updates/s, {record['floor_ratio']:.2f} x floor" + ("" if exact else ", NOT EXACT"),
                        file=sys.stderr,
                        flush=True,
                    )
            del heat, start_field, reference
        bench.release_memory()
    report = bench_report.report("heat", results)
    report["copy_TBps"] = rate / 1e12
    return report


def record_for(n, steps, kernel, block, k, fma, timing, floor_ms, rate, exact, info) -> dict:
    step = timing.scaled(1 / max(steps, 1))
    per_step = step.median
    return {
        "n": n,
        "ni": n,
        "nj": n,
        "steps": steps,
        "backend": "gpu",
        "kernel": kernel,
        "block": f"{block[0]}x{block[1]}",
        "k": k,
        "fma": fma,
        **timing.fields("run_ms"),
        "runs_ms": list(timing.samples),
        **step.fields("ms_per_step"),
        "gcells_per_s": (n - 2) ** 2 / (per_step * 1e-3) / 1e9 if steps else 0.0,
        "floor_ms_per_step": floor_ms,
        "copy_TBps": rate / 1e12,
        "floor_ratio": floor_ms / per_step if steps else 0.0,  # > 1: faster than one sweep a step at the copy rate
        "seed_run_s": per_step * SEED_STEPS / 1e3,  # this grid at the seed's 5000 steps
        "seed_t4_s": SEED_T4_S.get(kernel) if n == SEED_N else None,
        "exact": exact,
        **info,
    }


def table(report: dict) -> str:
    lines = [
        f"heat on {report['device']} (commit {report['commit']}, {report['date']}); CUDA events, median ± 95% "
        "error (runs); "
        f"copy {report.get('copy_TBps', 0):.2f} TB/s, floor = 8 bytes/update at that rate",
        f"{'n':>6} {'steps':>5} {'kernel':>8} {'block':>6} {'k':>2} {'ms/step':>24} {'run s':>8} {'Gcell/s':>8} "
        f"{'floor ms':>8} {'x floor':>7} {'5000 st s':>9} {'T4 s':>6} {'regs':>4} {'rows':>5} exact",
    ]
    for r in report["results"]:
        t4 = f"{r['seed_t4_s']:.2f}" if r["seed_t4_s"] else "-"
        lines.append(
            f"{r['n']:>6} {r['steps']:>5} {r['kernel']:>8} {r['block']:>6} {r['k'] or '-':>2} "
            f"{measure.figure_text(r, 'ms_per_step'):>24} {r['run_ms'] / 1e3:>8.3f} {r['gcells_per_s']:>8.1f} "
            f"{r['floor_ms_per_step']:>8.4f} {r['floor_ratio']:>7.2f} {r['seed_run_s']:>9.3f} {t4:>6} "
            f"{r['registers']:>4} {r['rows'] or '-':>5} {'yes' if r['exact'] else 'NO'}"
        )
        lines += [f"{'':>6} {line}" for line in record_lines(r)]
    for n in sorted({r["n"] for r in report["results"]}):
        for kernel in KERNELS:
            rows = [r for r in report["results"] if r["n"] == n and r["kernel"] == kernel]
            if rows:
                best = min(rows, key=lambda r: r["ms_per_step"])
                lines.append(
                    f"best {kernel:>8} n={n}: {best['block']}"
                    + (f" k={best['k']}" if best["k"] else "")
                    + f" {best['ms_per_step']:.4f} ms/step, {best['gcells_per_s']:.1f} G cell-updates/s, "
                    f"{best['floor_ratio']:.2f} x floor, {best['seed_run_s']:.3f} s for 5000 steps"
                )
    return "\n".join(lines)


# --- the command ------------------------------------------------------------------------------------
def blocks_arg(text: str) -> list[tuple[int, int]]:
    if text == "all":
        return list(BLOCK_SHAPES)
    shapes = []
    for shape in cli.blocks(text):
        if not isinstance(shape, tuple):
            raise argparse.ArgumentTypeError(f"a heat block is a 2D shape such as 32x8, got {shape}")
        shapes.append(shape)
    return shapes


def ks_arg(text: str) -> list[int]:
    return list(range(1, K_MAX + 1)) if text == "all" else cli.counts(text)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--sizes",
        "-n",
        "--count",
        dest="sizes",
        type=cli.counts,
        default=[SEED_N],
        help=f"comma-separated grid sides n (n x n cells; default {SEED_N})",
    )
    p.add_argument("--steps", type=cli.positive_int, default=500, help="timed steps per run (default 500)")
    p.add_argument("--kernel", default="all", help=f"comma-separated kernels ({', '.join(KERNELS)}) or all (default)")
    p.add_argument(
        "--block",
        type=blocks_arg,
        default=[(32, 4)],
        help="comma-separated block shapes WxH, or all (the panel's shapes; default 32x4)",
    )
    p.add_argument(
        "--k",
        type=ks_arg,
        default=[8],
        help=f"temporal steps per launch, comma-separated or all (1..{K_MAX}; default 8)",
    )
    p.add_argument("--fma", action="store_true", help="time the --fmad=true builds")
    p.add_argument(
        "--repeats",
        type=cli.positive_int,
        default=1,
        help="at least this many timed runs per configuration (default 1; more until the median is "
        "known to 1%% or the time budget ends)",
    )
    p.add_argument("--backend", default="gpu", choices=("gpu",), help="the kernels run on the GPU")


@dataclass(frozen=True)
class HeatBenchRequest:
    """``bench heat``'s arguments as parsed (``add_arguments``, and --json and --baseline of the command)."""

    scene: str  # "heat"
    sizes: list[int]
    steps: int
    kernel: str
    block: list[tuple[int, int]]
    k: list[int]
    fma: bool
    repeats: int
    backend: str
    json: str | None
    baseline: dict | None


def check_resources(request: HeatBenchRequest, kernels: list[str]) -> None:
    """Refuse (exit 2) grids that cannot fit or runs that could not finish (``sim.cmdline.resources``, at the heat
    scene's pace): every configuration's untimed and timed runs on each grid; the initial field while
    glibc rand() is drawn, the device's buffers."""
    from sim.cmdline import resources
    from sim.heat import SPEC

    runs = len(configurations(kernels, request.block, request.k)) * (1 + request.repeats)
    each = [
        resources.Estimate(
            f"bench heat: a {count_text(n)}x{count_text(n)} grid x "
            f"{count_text(request.steps)} steps x {runs} runs on the GPU",
            memory=course.INIT_BYTES_PER_CELL * n * n,
            gpu_memory=12 * n * n,  # 2 buffers, start
            seconds=runs * request.steps * (n * n / SPEC.pace[1] + resources.STEP_SECONDS),
        )
        for n in request.sizes
    ]
    resources.check_in_turn(each, f"bench heat: {len(each)} grid sizes")


def run_command(request: HeatBenchRequest) -> int:
    from sim.cmdline import bench_report
    from sim.gpu.backend import BackendUnavailable, gpu_status

    kernels = cli.choices(cli.items(request.kernel), KERNELS, "kernel")
    bad = [k for k in request.k if not 1 <= k <= K_MAX]
    if bad:
        raise UsageError(f"--k must be 1..{K_MAX}, got {bad[0]}")
    if min(request.sizes) < 3:
        raise UsageError(f"grid sides must be >= 3, got {min(request.sizes)}")
    for width, height in request.block:
        if width * height > 1024:
            raise UsageError(f"block {width}x{height} has {width * height} threads: at most 1024")
    if request.json and request.json != "-":
        from sim.cmdline.writer import check_target

        check_target(request.json, "JSON file")
    check_resources(request, kernels)
    if not gpu_status().available:
        raise BackendUnavailable(f"the heat benchmark times GPU kernels: {gpu_status().reason}")
    from sim.heat.gpu import KernelError

    try:
        report = run(
            request.sizes, request.steps, kernels, request.block, request.k, request.fma, True, request.repeats
        )
    except KernelError as exc:
        raise UsageError(str(exc)) from None
    bench_report.publish(report, table(report), request.json, request.baseline)
    return 0 if all(r["exact"] for r in report["results"]) or request.fma else 1


BENCH = Bench(own_bench_arguments(add_arguments), HeatBenchRequest, run_command)  # the heat scene's benchmark


def main(argv=None) -> int:
    """``python -m sim.heat.bench``: the same options plus --json."""
    parser = argparse.ArgumentParser(prog="python -m sim.heat.bench", description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON to FILE, or - for stdout")
    baseline.add_option(parser)
    request = cli.parsed(HeatBenchRequest, parser.parse_args(argv), scene="heat")
    from sim.gpu.backend import BackendUnavailable

    try:
        return run_command(request)
    except UsageError as exc:
        print(f"bench heat: error: {exc}", file=sys.stderr)
        return cli.EXIT_USAGE
    except BackendUnavailable as exc:
        print(f"bench heat: {exc}", file=sys.stderr)
        return cli.EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
