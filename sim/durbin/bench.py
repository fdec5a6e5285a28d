"""The durbin benchmark: single long systems per kernel and block size beside scipy, and many short
systems (LPC-like) per batched kernel beside scipy's batched call and a CuPy loop vectorised across
the batch. Inputs: the yardstick's AR(6) autocorrelation (and damped variants of it for the batch).

  python -m sim.durbin.bench --sizes 4000,20000,200000 --kernel all --batch 100000x32 --json F
  python main.py bench durbin --sizes 4000,20000,200000 --kernel all --batch 100000x32 --json F

Report: {"device", "commit", "date", "workload": "durbin", "results": [record, ...]}; a record has
"kind" (single, probe, batch), the method or kernel, seconds, and per single system us_per_step and
its error against scipy (rel_err) or, above the scipy cap, the FFT residual (residual).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from sim import baseline, interrupts, measure
from sim.cli import Command, count_text
from sim.durbin import inputs
from sim.roofline import Setup, record_lines

SCIPY_CAP = 20_000  # scipy is O(N^2): timed up to here, extrapolated (marked) beyond
BENCH_KERNELS = ("two-kernel", "persistent-cluster", "persistent-grid")
PROBE_N = 4096  # tiny work per step: the time per step is the exchange's latency


def timed(fn, clock, **options) -> tuple[measure.Timing, object]:
    """(``sim.measure``'s timing of ``fn`` in seconds, what its last call returned), stopping on Ctrl-C."""
    timing, last = measure.measure_returning(fn, clock, between=interrupts.check, **options)
    return timing.scaled(1e-3), last


def _scipy_single(n: int) -> tuple[measure.Timing, np.ndarray]:
    import scipy.linalg

    r = inputs.ar_autocorr(n, inputs.PEER_KAPPAS)
    return timed(lambda: scipy.linalg.solve_toeplitz(inputs.toeplitz_column(r), -r), measure.HostClock())


def _seconds(timing: measure.Timing, steps: int | None = None) -> dict:
    """A record's seconds (s, s_err, repeats) and, for ``steps`` steps, its us_per_step (and error)."""
    fields = timing.fields("s")
    if steps:
        fields.update(timing.scaled(1e6 / steps).fields("us_per_step", repeats=None))
    return fields


def _kernel(name: str) -> tuple[str, str | None]:
    if name == "two-kernel":
        return name, None
    if name in ("persistent", "persistent-cluster", "persistent-grid"):
        return "persistent", (name.split("-")[1] if "-" in name else None)
    raise ValueError(f"unknown kernel {name!r} (choose from {', '.join(BENCH_KERNELS)}, persistent or all)")


def time_solver(r, kernel: str, path, block: int, precision: str, blocks=None):
    """(``sim.measure``'s timing in seconds by CUDA events, y on the host, solver) for the whole recursion,
    warmed up, reset before each run; the L2 cache flushed between runs where the system fits in it."""
    from sim.durbin import SPEC, gpu

    solver = gpu.DurbinGpu(r, kernel, block=block, precision=precision, path=path, blocks=blocks)
    solver.prepare()
    solver.step(min(64, solver.n - 1))  # first launches (module load, cluster attributes) untimed
    solver.synchronize()
    flush = measure.l2_flush(SPEC.bytes_per_item[1] * solver.n, stream=solver.stream)
    timing = measure.measure(solver.run, measure.EventClock(solver.stream), setup=solver.reset, flush=flush,
                             between=interrupts.check)
    solver.synchronize()
    return timing.scaled(1e-3), solver.result().astype(np.float64), solver


def single_records(sizes, kernels, blocks, precision, log) -> list[dict]:
    import scipy.linalg

    records = []
    scipy_s: dict[int, float] = {}
    for n in sizes:
        r = inputs.ar_autocorr(n, inputs.PEER_KAPPAS)
        reference = None
        if n <= SCIPY_CAP:
            s, reference = _scipy_single(n)
            scipy_s[n] = s
            records.append({"kind": "single", "backend": "cpu", "n": n, "method": "scipy", **_seconds(s, n - 1),
                            "extrapolated": False})
        else:
            cap = max([m for m in scipy_s] or [SCIPY_CAP])
            if cap not in scipy_s:
                scipy_s[cap] = _scipy_single(cap)[0]
            s = scipy_s[cap].scaled((n / cap) ** 2)
            records.append({"kind": "single", "backend": "cpu", "n": n, "method": "scipy", **_seconds(s, n - 1),
                            "extrapolated": True, "from_n": cap})
        scipy_time = s.median
        log(f"n={n:,} scipy {s.text()} s{' (extrapolated)' if n > SCIPY_CAP else ''}")
        for name in kernels:
            kernel, path = _kernel(name)
            for block in blocks:
                interrupts.check()
                record = {"kind": "single", "backend": "gpu", "n": n, "method": name, "block": block,
                          "precision": precision}
                try:
                    s, y, solver = time_solver(r, kernel, path, block, precision)
                except Exception as exc:  # noqa: BLE001 - a configuration that cannot run is recorded, not fatal
                    records.append({**record, "skipped": f"{type(exc).__name__}: {exc}"})
                    log(f"n={n:,} {name} block {block}: skipped ({exc})")
                    continue
                record.update(path=solver.path, blocks=solver.blocks if kernel == "persistent" else None,
                              **_seconds(s, n - 1), speedup_vs_scipy=scipy_time / s.median)
                if reference is not None:
                    record["rel_err"] = float(np.max(np.abs(y - reference)) / np.max(np.abs(reference)))
                else:
                    residual = scipy.linalg.matmul_toeplitz(inputs.toeplitz_column(r), y) + r
                    record["residual"] = float(np.max(np.abs(residual)) / np.max(np.abs(r)))
                records.append(record)
                log(f"n={n:,} {name} block {block}: {s.text()} s, {record['us_per_step']:.3f} us/step ({solver.path})")
                del solver
    return records


def probe_records(precision, log) -> list[dict]:
    """Exchange latency: the persistent paths at the most blocks they take on a small N."""
    from sim.durbin import gpu

    records = []
    r = inputs.ar_autocorr(PROBE_N, inputs.PEER_KAPPAS)
    sms = gpu.device_properties(0)["multiProcessorCount"]
    for path, blocks in (("cluster", 1), ("cluster", 4), ("cluster", 16), ("grid", 16), ("grid", sms)):
        record = {"kind": "probe", "backend": "gpu", "n": PROBE_N, "method": f"persistent-{path}", "blocks": blocks,
                  "block": 256, "precision": precision}
        try:
            s, _, solver = time_solver(r, "persistent", path, 256, precision, blocks=blocks)
        except Exception as exc:  # noqa: BLE001 - recorded, not fatal
            records.append({**record, "skipped": f"{type(exc).__name__}: {exc}"})
            continue
        records.append({**record, "path": solver.path, **_seconds(s, PROBE_N - 1)})
        log(f"probe {path} {blocks} blocks: {records[-1]['us_per_step']:.3f} us/step")
    return records


def batch_input(systems: int, order: int, seed: int = 1) -> np.ndarray:
    """The yardstick's batch: damped variants of the AR(6) autocorrelation (still SPD)."""
    rng = np.random.default_rng(seed)
    base = inputs.ar_autocorr(order, inputs.PEER_KAPPAS)
    return base[None, :] * rng.uniform(0.5, 1.0, (systems, 1)) ** np.arange(1, order + 1)[None, :]


def cupy_vectorised(R):
    """The yardstick's CuPy loop over k, vectorised across the batch (device-resident input)."""
    import cupy

    b, p = R.shape
    Y = cupy.zeros((b, p))
    Y[:, 0] = -R[:, 0]
    alpha, beta = -R[:, 0], cupy.ones(b)
    for k in range(1, p):
        beta = (1 - alpha * alpha) * beta
        s = cupy.sum(R[:, k - 1::-1][:, :k] * Y[:, :k], axis=1)
        alpha = -(R[:, k] + s) / beta
        Y[:, :k] = Y[:, :k] + alpha[:, None] * Y[:, k - 1::-1][:, :k]
        Y[:, k] = alpha
    return Y


def batch_records(systems: int, order: int, precision: str, log) -> list[dict]:
    import cupy
    import scipy
    import scipy.linalg

    from sim.durbin import batched_gpu, durbin_cpu

    rb = batch_input(systems, order)
    records = []
    base = {"kind": "batch", "systems": systems, "order": order}
    durbin_cpu.batched(rb[:2])  # numba's compile stays out of the time
    s, (exact, *_) = timed(lambda: durbin_cpu.batched(rb), measure.HostClock())
    records.append({**base, "backend": "cpu", "method": "cpu-twin", **_seconds(s)})
    try:
        s, _ = timed(lambda: scipy.linalg.solve_toeplitz(inputs.toeplitz_column(rb), -rb[..., None]),
                     measure.HostClock())
        records.append({**base, "backend": "cpu", "method": "scipy-batched", **_seconds(s), "scipy": scipy.__version__})
    except (ValueError, TypeError) as exc:  # SciPy < 1.17 has no batched solve_toeplitz
        records.append({**base, "backend": "cpu", "method": "scipy-batched", "skipped": str(exc)})
    log(f"batch {systems}x{order}: " + ", ".join(f"{r['method']} {r.get('s', 0):.4f} s" for r in records))
    R = cupy.asarray(rb)
    s, Y = timed(lambda: cupy_vectorised(R), measure.EventClock(), flush=measure.l2_flush(4 * R.nbytes))
    records.append({**base, "backend": "gpu", "method": "cupy-vectorised", **_seconds(s),
                    "max_abs_err": float(cupy.max(cupy.abs(Y - cupy.asarray(exact))))})
    log(f"batch cupy-vectorised {s.scaled(1e3).text()} ms")
    Rp = R.astype(np.float32 if precision == "fp32" else np.float64)  # r and the outputs, for every solve
    out = (cupy.empty_like(Rp), cupy.empty_like(Rp), cupy.empty(Rp.shape[0], Rp.dtype))
    for group, block_list in (("register", (32, 64, 128, 256)), ("thread", (32, 64, 128)), ("warp", (64, 128, 256)),
                              ("block", (64, 128, 256))):
        for block in block_list:
            record = {**base, "backend": "gpu", "method": f"batched-{group}", "block": block, "precision": precision}
            try:
                def solve(g=group, b=block, o=out, x=Rp):
                    return batched_gpu.batched(x, g, b, precision, out=o)

                s, (y, _, _) = timed(solve, measure.EventClock(), flush=measure.l2_flush(4 * R.nbytes))
            except Exception as exc:  # noqa: BLE001 - recorded, not fatal
                records.append({**record, "skipped": f"{type(exc).__name__}: {exc}"})
                continue
            y = cupy.asnumpy(y).astype(np.float64)
            record.update(**_seconds(s), max_abs_err=float(np.max(np.abs(y - exact))),
                          bit_exact=bool(np.array_equal(y, exact)))
            records.append(record)
            log(f"batch batched-{group} block {block}: {s.scaled(1e3).text()} ms, "
                f"max abs err {record['max_abs_err']:.2e}")
    return records


def run(sizes, kernels=BENCH_KERNELS, blocks=(256,), batch=None, precision="fp64", probe=True, log=None) -> dict:
    """The report for single systems of ``sizes`` (each kernel x block) and, with ``batch`` = (systems,
    order), the batched solvers."""
    from sim import bench

    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    kernels = list(BENCH_KERNELS) if list(kernels) == ["all"] else list(kernels)
    for name in kernels:
        _kernel(name)
    records = single_records(sizes, kernels, blocks, precision, log)
    if probe:
        records += probe_records(precision, log)
    if batch:
        records += batch_records(*batch, precision, log)
    for record in records:
        add_speed_of_light(record)
    return bench.report("durbin", records)


def add_speed_of_light(record: dict) -> None:
    """The roofline figures of the product's GPU solves (a single system's whole recursion, a batch's solve);
    scipy and the peer's CuPy loop are not the models' kernels."""
    from sim import bench
    from sim.durbin import SPEC

    if record["backend"] != "gpu" or "skipped" in record or record["method"] == "cupy-vectorised":
        return
    options = {"precision": record.get("precision", "fp64")}
    if record["kind"] == "batch":
        setup = Setup(record["systems"] * record["order"], 1.0, "", record.get("block"), options, "lpc",
                      {"frames": record["systems"]})
    else:  # all n - 1 steps of one system, k = n at the end
        n = record["n"]
        setup = Setup(n, float(n), record["method"], record.get("block"), options, "ar", {"entries": n})
    record["speed_of_light"] = bench.speed_of_light(SPEC, setup, {"recursion": record["s"] * 1e3}, True)


def table(report: dict) -> str:
    lines = [f"durbin on {report['device']} (commit {report['commit']}, {report['date']})",
             f"{'kind':>6} {'n / batch':>14} {'method':>19} {'block':>5} {'seconds ± error (runs)':>28} "
             f"{'us/step':>9}  note"]
    for r in report["results"]:
        size = f"{r['systems']}x{r['order']}" if r["kind"] == "batch" else f"{r['n']:,}"
        if "skipped" in r:
            lines.append(f"{r['kind']:>6} {size:>14} {r['method']:>19} {str(r.get('block', '-')):>5} {'-':>28} "
                         f"{'-':>9}  skipped: {r['skipped'][:60]}")
            continue
        note = []
        if r.get("extrapolated"):
            note.append(f"extrapolated from n={r['from_n']:,} (O(n^2))")
        for key, fmt in (("rel_err", "rel err {:.1e}"), ("residual", "residual {:.1e}"),
                         ("max_abs_err", "max abs err {:.1e}"), ("path", "{}")):
            if r.get(key) is not None:
                note.append(fmt.format(r[key]))
        if r.get("bit_exact"):
            note.append("bit-exact vs CPU")
        per_step = f"{r['us_per_step']:.3f}" if "us_per_step" in r else "-"
        lines.append(f"{r['kind']:>6} {size:>14} {r['method']:>19} {str(r.get('block', '-')):>5} "
                     f"{measure.figure_text(r, 's'):>28} "
                     f"{per_step:>9}  {'; '.join(note)}")
        lines += [f"{'':>6} {line}" for line in record_lines(r)]
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from sim.cli import blocks, counts, items, size

    p.add_argument("--sizes", type=lambda text: counts(text, 2, "N"), default=[4000, 20000, 200000],
                   help="comma-separated N (>= 2) of the single systems (default 4000,20000,200000)")
    p.add_argument("--kernel", type=items, default=["all"],
                   help=f"comma-separated kernels: {', '.join(BENCH_KERNELS)}, persistent (auto path), or all")
    p.add_argument("--block", type=blocks, default=[256],
                   help="comma-separated block sizes, multiples of 32 in 32..1024 (default 256)")
    p.add_argument("--batch", type=lambda s: size(s, 2, 1 << 30, "--batch"),
                   help="SYSTEMSxORDER, e.g. 100000x32: the batched solvers too")
    p.add_argument("--precision", default="fp64", choices=("fp64", "fp32"))


def check_arguments(args) -> None:
    """Every value checked before looking for a GPU: a bad one is named (exit 2), not reported as "no GPU"."""
    from sim.cli import UsageError, block_text

    for name in [] if args.kernel == ["all"] else args.kernel:
        try:
            _kernel(name)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    for block in args.block:
        if isinstance(block, tuple) or not (32 <= block <= 1024 and block % 32 == 0):
            raise UsageError(f"--block must be a multiple of 32 in 32..1024, got {block_text(block)}")
def check_resources(args) -> None:
    """Refuse (exit 2) runs that cannot fit or could not finish (``sim.resources``), at the durbin scene's pace
    and memory per entry: scipy up to SCIPY_CAP, each kernel and block's untimed and timed runs, the batch."""
    from sim import resources
    from sim.durbin import SPEC
    from sim.durbin.cli import solve_seconds

    cpu_pace = SPEC.pace[0]
    host, device = SPEC.bytes_per_item
    kernels = len(BENCH_KERNELS) if list(args.kernel) == ["all"] else len(args.kernel)
    each = []
    for n in args.sizes:
        runs = kernels * len(args.block) * 2  # sim.measure's warm-up and first timed run; more within its budget
        each.append(resources.Estimate(f"bench durbin: N = {count_text(n)} x {runs} runs on the GPU",
                                       memory=host * n, gpu_memory=device * n,
                                       seconds=min(n, SCIPY_CAP) ** 2 / cpu_pace + runs * solve_seconds(n, True)))
    if args.batch:
        systems, order = args.batch
        each.append(resources.Estimate(f"bench durbin: a batch of {systems:,} systems of order {order:,}",
                                       memory=host * systems * order, gpu_memory=device * systems * order,
                                       seconds=2 * systems * order * order / cpu_pace))  # the CPU twin, scipy
    resources.check_in_turn(each, f"bench durbin: {len(each)} sizes")


def run_command(args) -> int:
    """``bench durbin``: the report of ``run`` as a table (and JSON with --json); the kernels need a GPU.
    Sizes whose estimate exceeds this machine's memory or a week are refused first (exit 2)."""
    from sim import bench
    from sim.backend import BackendUnavailable, gpu_status
    from sim.cli import UsageError

    check_arguments(args)
    check_resources(args)
    status = gpu_status()
    if not status.available:
        raise BackendUnavailable(f"the durbin benchmark times GPU kernels: {status.reason}")
    try:
        report = run(args.sizes, args.kernel, args.block, args.batch, args.precision)
    except ValueError as exc:  # an unknown kernel, a block or size a kernel cannot take
        raise UsageError(str(exc)) from None
    bench.publish(report, table(report), args.json, getattr(args, "baseline", None))
    return 0


BENCH = Command("bench durbin", "time the recursion's kernels (single systems, probes, batched) beside scipy",
                add_arguments, run_command)


def main(argv=None) -> int:
    from sim.writer import check_target

    p = argparse.ArgumentParser(prog="python -m sim.durbin.bench", description=__doc__.splitlines()[0])
    add_arguments(p)
    p.add_argument("--json", metavar="FILE")
    baseline.add_option(p)
    args = p.parse_args(argv)
    from sim.backend import BackendUnavailable
    from sim.cli import EXIT_USAGE, UsageError
    from sim.writer import OutputError

    try:
        if args.json and args.json != "-":
            check_target(args.json, "JSON file")
        return run_command(args)
    except (UsageError, BackendUnavailable, OutputError) as exc:
        print(f"{p.prog}: {exc}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, UsageError) else 1


if __name__ == "__main__":
    sys.exit(main())
