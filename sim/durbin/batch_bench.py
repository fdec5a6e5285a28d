"""The durbin bench's batch: many short systems (LPC-like) per batched kernel and block size beside the CPU
twin, scipy's batched solve_toeplitz and the yardstick's CuPy loop vectorised across the batch."""

from __future__ import annotations

import numpy as np

from sim.durbin import inputs
from sim.durbin.bench_timing import seconds, timed
from sim.gpu import measure


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
    records.append({**base, "backend": "cpu", "method": "cpu-twin", **seconds(s)})
    try:
        s, _ = timed(lambda: scipy.linalg.solve_toeplitz(inputs.toeplitz_column(rb), -rb[..., None]),
                     measure.HostClock())
        records.append({**base, "backend": "cpu", "method": "scipy-batched", **seconds(s), "scipy": scipy.__version__})
    except (ValueError, TypeError) as exc:  # SciPy < 1.17 has no batched solve_toeplitz
        records.append({**base, "backend": "cpu", "method": "scipy-batched", "skipped": str(exc)})
    log(f"batch {systems}x{order}: " + ", ".join(f"{r['method']} {r.get('s', 0):.4f} s" for r in records))
    R = cupy.asarray(rb)
    s, Y = timed(lambda: cupy_vectorised(R), measure.EventClock(), flush=measure.l2_flush(4 * R.nbytes))
    records.append({**base, "backend": "gpu", "method": "cupy-vectorised", **seconds(s),
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
            record.update(**seconds(s), max_abs_err=float(np.max(np.abs(y - exact))),
                          bit_exact=bool(np.array_equal(y, exact)))
            records.append(record)
            log(f"batch batched-{group} block {block}: {s.scaled(1e3).text()} ms, "
                f"max abs err {record['max_abs_err']:.2e}")
    return records
