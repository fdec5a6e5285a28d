"""The durbin bench's single systems: the whole recursion of one long system per kernel and block size beside
scipy's solve_toeplitz, and probes of the persistent kernels' exchange latency on a small system."""

from __future__ import annotations

import numpy as np

from sim.cmdline import interrupts
from sim.durbin import inputs
from sim.durbin.bench_timing import seconds, timed
from sim.gpu import measure

SCIPY_CAP = 20_000  # scipy is O(N^2): timed up to here, extrapolated (marked) beyond
BENCH_KERNELS = ("two-kernel", "persistent-cluster", "persistent-grid")
PROBE_N = 4096  # tiny work per step: the time per step is the exchange's latency


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
    timing = measure.measure(solver.run, measure.EventClock(solver.stream), setup=solver.reset, flush=flush,
                             between=interrupts.check)
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
            records.append({"kind": "single", "backend": "cpu", "n": n, "method": "scipy", **seconds(s, n - 1),
                            "extrapolated": False})
        else:
            cap = max([m for m in scipy_s] or [SCIPY_CAP])
            if cap not in scipy_s:
                scipy_s[cap] = _scipy_single(cap)[0]
            s = scipy_s[cap].scaled((n / cap) ** 2)
            records.append({"kind": "single", "backend": "cpu", "n": n, "method": "scipy", **seconds(s, n - 1),
                            "extrapolated": True, "from_n": cap})
        scipy_time = s.median
        log(f"n={n:,} scipy {s.text()} s{' (extrapolated)' if n > SCIPY_CAP else ''}")
        for name in kernels:
            kernel, path = kernel_and_path(name)
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
                              **seconds(s, n - 1), speedup_vs_scipy=scipy_time / s.median)
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
        records.append({**record, "path": solver.path, **seconds(s, PROBE_N - 1)})
        log(f"probe {path} {blocks} blocks: {records[-1]['us_per_step']:.3f} us/step")
    return records

