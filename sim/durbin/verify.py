"""Verification of the durbin scene's recursion: the GPU's state after a frame against the CPU twin
stepped from the same state, and against scipy (CuPy-free: everything here is on the host)."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from sim.durbin import durbin_cpu, inputs

SCIPY_DIRECT = 4096  # scipy solves the leading system up to this k (O(k^2)); beyond it, the residual (O(k log k))


def relative(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """|values - reference| per entry, relative to the reference's largest magnitude."""
    scale = max(float(np.abs(reference).max(initial=0.0)), np.finfo(float).tiny)
    return np.abs(values - reference) / scale


def recursion(r: np.ndarray, state: dict, before: dict | None, tolerance: float):
    """Check ``state`` (y, alphas, betas after k steps on the GPU) against the CPU twin stepped from
    ``before`` (the state the frame started from; None: no step to redo) and against scipy.

    Returns (entries beyond the tolerance over all N entries, figures, the values compared by name,
    the error against scipy: the largest relative difference, or beyond SCIPY_DIRECT the relative
    residual |T y + r| / |r|)."""
    y, alphas = state["y"], state["alphas"]
    k = y.shape[0]
    details: dict = {"tolerance": tolerance}
    beyond = np.zeros(r.size, bool)
    beyond[:k] = ~(np.isfinite(y) & np.isfinite(alphas))
    twin = twin_alphas = None
    if before is not None:
        replay = durbin_cpu.DurbinCpu(r)
        done = before["y"].shape[0]
        for name in ("y", "alphas", "betas"):
            getattr(replay, name)[:done] = before[name]
        replay.k = done
        replay.step(k - done)
        twin, twin_alphas = replay.y[:k].copy(), replay.alphas[:k].copy()
        to_twin = relative(y, twin)
        beyond[:k] |= (to_twin > tolerance) | (relative(alphas, twin_alphas) > tolerance)
        details["largest difference to the CPU twin"] = float(to_twin.max(initial=0.0))
    column = inputs.toeplitz_column(r[:k])
    reference = None
    if k <= SCIPY_DIRECT:
        reference = scipy.linalg.solve_toeplitz(column, -r[:k])
        to_scipy = relative(y, reference)
        beyond[:k] |= to_scipy > tolerance
        error = float(to_scipy.max(initial=0.0))
        details["largest difference to scipy"] = error
    else:
        residual = scipy.linalg.matmul_toeplitz(column, np.nan_to_num(y)) + r[:k]
        error = float(np.linalg.norm(residual) / np.linalg.norm(r[:k]))
        details["relative residual |T y + r| / |r|"] = error
    checked = {"gpu": y, "twin": twin, "gpu_alphas": alphas, "twin_alphas": twin_alphas, "scipy": reference}
    return beyond, details, checked, error
