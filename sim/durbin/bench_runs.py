"""The durbin bench's timed runs (sim/durbin/bench.py has the command, the report and its table): the whole
recursion of one long system per kernel and block size beside scipy's solve_toeplitz; probes of the persistent
kernels' exchange latency on a small system; and a batch of many short systems (LPC-like) per batched kernel and
block size beside the CPU twin, scipy's batched solve_toeplitz and the yardstick's CuPy loop vectorised across the
batch. Each run is timed through ``sim.gpu.measure`` and its seconds written into its record alike (``timed``,
``seconds``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np

from sim.cmdline import interrupts
from sim.durbin import inputs
from sim.gpu import measure

SCIPY_CAP = 20_000  # scipy is O(N^2): timed up to here, extrapolated (marked) beyond
BENCH_KERNELS = ("two-kernel", "persistent-cluster", "persistent-grid")
PROBE_N = 4096  # tiny work per step: the time per step is the exchange's latency
Result = TypeVar("Result")


def timed(fn: Callable[[], Result], clock, **options) -> tuple[measure.Timing, Result]:
    """(``sim.gpu.measure``'s timing of ``fn`` in seconds, what its last call returned), stopping on Ctrl-C."""
    timing, last = measure.measure_returning(fn, clock, between=interrupts.check, **options)
    return timing.scaled(1e-3), last


def seconds(timing: measure.Timing, steps: int | None = None) -> dict:
    """A record's seconds (s, s_err, repeats) and, for ``steps`` steps, its us_per_step (and error)."""
    fields = timing.fields("s")
    if steps:
        fields.update(timing.scaled(1e6 / steps).fields("us_per_step", repeats=None))
    return fields


# --- single systems and probes ----------------------------------------------------------------------------
def _scipy_single(n: int) -> tuple[measure.Timing, np.ndarray]:
    import scipy.linalg

    r = inputs.ar_autocorr(n, inputs.PEER_KAPPAS)
    return timed(lambda: scipy.linalg.solve_toeplitz(inputs.toeplitz_column(r), -r), measure.HostClock())


def kernel_and_path(name: str) -> tuple[str, str | None]:
    """The solver's kernel and persistent path (None: chosen by the solver) a bench kernel name stands for."""
    if name == "two-kernel":
        return name, None
    if name in ("persistent", "persistent-cluster", "persistent-grid"):
        return "persistent", (name.split("-")[1] if "-" in name else None)
    raise ValueError(f"unknown kernel {name!r} (choose from {', '.join(BENCH_KERNELS)}, persistent or all)")


def time_solver(r, kernel: str, path, block: int, precision: str, blocks=None):
    """(``sim.gpu.measure``'s timing in seconds by CUDA events, y on the host, solver) for the whole recursion,
    warmed up, reset before each run; the L2 cache flushed between runs where the system fits in it."""
    from sim.durbin import SPEC, gpu

    solver = gpu.DurbinGpu(r, kernel, block=block, precision=precision, path=path, blocks=blocks)
    solver.prepare()
    solver.step(min(64, solver.n - 1))  # first launches (module load, cluster attributes) untimed
    solver.synchronize()
    flush = measure.l2_flush(SPEC.bytes_per_item[1] * solver.n, stream=solver.stream)
    timing = measure.measure(
        solver.run, measure.EventClock(solver.stream), setup=solver.reset, flush=flush, between=interrupts.check
    )
    solver.synchronize()
    return timing.scaled(1e-3), solver.result().astype(np.float64), solver


def single_records(sizes, kernels, blocks, precision, log) -> list[dict]:
    import scipy.linalg

    records = []
    scipy_s: dict[int, measure.Timing] = {}
    for n in sizes:
        r = inputs.ar_autocorr(n, inputs.PEER_KAPPAS)
        reference = None
        if n <= SCIPY_CAP:
            s, reference = _scipy_single(n)
            scipy_s[n] = s
            records.append(
                {
                    "kind": "single",
                    "backend": "cpu",
                    "n": n,
                    "method": "scipy",
                    **seconds(s, n - 1),
                    "extrapolated": False,
                }
            )
        else:
            cap = max([m for m in scipy_s] or [SCIPY_CAP])
            if cap not in scipy_s:
                scipy_s[cap] = _scipy_single(cap)[0]
            s = scipy_s[cap].scaled((n / cap) ** 2)
            records.append(
                {
                    "kind": "single",
                    "backend": "cpu",
                    "n": n,
                    "method": "scipy",
                    **seconds(s, n - 1),
                    "extrapolated": True,
                    "from_n": cap,
                }
            )
        scipy_time = s.median
        log(f"n={n:,} scipy {s.text()} s{' (extrapolated)' if n > SCIPY_CAP else ''}")
        for name in kernels:
            kernel, path = kernel_and_path(name)
            for block in blocks:
                interrupts.check()
                record = {
                    "kind": "single",
                    "backend": "gpu",
                    "n": n,
                    "method": name,
                    "block": block,
                    "precision": precision,
                }
                try:
                    s, y, solver = time_solver(r, kernel, path, block, precision)
                except Exception as exc:  # noqa: BLE001 - a configuration that cannot run is recorded, not fatal
                    records.append({**record, "skipped": f"{type(exc).__name__}: {exc}"})
                    log(f"n={n:,} {name} block {block}: skipped ({exc})")
                    continue
                record.update(
                    path=solver.path,
                    blocks=solver.blocks if kernel == "persistent" else None,
                    **seconds(s, n - 1),
                    speedup_vs_scipy=scipy_time / s.median,
                )
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
        record = {
            "kind": "probe",
            "backend": "gpu",
            "n": PROBE_N,
            "method": f"persistent-{path}",
            "blocks": blocks,
            "block": 256,
            "precision": precision,
        }
        try:
            s, _, solver = time_solver(r, "persistent", path, 256, precision, blocks=blocks)
        except Exception as exc:  # noqa: BLE001 - recorded, not fatal
            records.append({**record, "skipped": f"{type(exc).__name__}: {exc}"})
            continue
        records.append({**record, "path": solver.path, **seconds(s, PROBE_N - 1)})
        log(f"probe {path} {blocks} blocks: {records[-1]['us_per_step']:.3f} us/step")
    return records


# --- the batch -------------------------------------------------------------------------------------------------
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
        s = cupy.sum(R[:, k - 1 :: -1][:, :k] * Y[:, :k], axis=1)
        alpha = -(R[:, k] + s) / beta
        Y[:, :k] = Y[:, :k] + alpha[:, None] * Y[:, k - 1 :: -1][:, :k]
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
    records.append({**base, "backend": "cpu", "method": "cpu-twin", **seconds(s)})
    try:
        s, _ = timed(
            lambda: scipy.linalg.solve_toeplitz(inputs.toeplitz_column(rb), -rb[..., None]), measure.HostClock()
        )
        records.append({**base, "backend": "cpu", "method": "scipy-batched", **seconds(s), "scipy": scipy.__version__})
    except (ValueError, TypeError) as exc:  # SciPy < 1.17 has no batched solve_toeplitz
        records.append({**base, "backend": "cpu", "method": "scipy-batched", "skipped": str(exc)})
    log(f"batch {systems}x{order}: " + ", ".join(f"{r['method']} {r.get('s', 0):.4f} s" for r in records))
    R = cupy.asarray(rb)
    s, Y = timed(lambda: cupy_vectorised(R), measure.EventClock(), flush=measure.l2_flush(4 * R.nbytes))
    records.append(
        {
            **base,
            "backend": "gpu",
            "method": "cupy-vectorised",
            **seconds(s),
            "max_abs_err": float(cupy.max(cupy.abs(Y - cupy.asarray(exact)))),
        }
    )
    log(f"batch cupy-vectorised {s.scaled(1e3).text()} ms")
    Rp = R.astype(np.float32 if precision == "fp32" else np.float64)  # r and the outputs, for every solve
    out = (cupy.empty_like(Rp), cupy.empty_like(Rp), cupy.empty(Rp.shape[0], Rp.dtype))
    for group, block_list in (
        ("register", (32, 64, 128, 256)),
        ("thread", (32, 64, 128)),
        ("warp", (64, 128, 256)),
        ("block", (64, 128, 256)),
    ):
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
            record.update(
                **seconds(s), max_abs_err=float(np.max(np.abs(y - exact))), bit_exact=bool(np.array_equal(y, exact))
            )
            records.append(record)
            log(
                f"batch batched-{group} block {block}: {s.scaled(1e3).text()} ms, "
                f"max abs err {record['max_abs_err']:.2e}"
            )
    return records
