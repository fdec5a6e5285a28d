"""The CPU twin (numba): both PolyBench versions, bit-identical to the C code.

One vector y updated in place stands for 3.2's 2D ``y[i][k]`` (column k from column k-1) and for
4.x's ``z`` copy: each pair ``y[i], y[k-1-i]`` is updated from the same two old values, which is
exactly what the C code computes. The dot product is summed in C order (increasing i, 3.2 starting
from r[k], 4.x from 0.0), without fused multiply-adds (numba fuses nothing unless asked).

``DurbinCpu`` steps the recursion (one k, a few, or all) in chunks short enough that Ctrl-C
interrupts a long run within a fraction of a second; ``solve`` runs it whole; ``batched`` solves many
independent systems (rows), in parallel over rows, each row bit-identical to ``solve``.
"""

from __future__ import annotations

from typing import Literal

import numba
import numpy as np
from numba import prange

from sim.cmdline import interrupts

CHUNK_WORK = 30_000_000  # multiply-adds per numba call (~0.05 s): Ctrl-C is seen between calls


@numba.njit(cache=True)
def _steps(r, y, alphas, betas, k0, k1, v32):
    """Steps k0..k1-1; y[0..k0-1], alphas[k0-1] and betas[k0-1] hold the state before step k0."""
    alpha = alphas[k0 - 1]
    beta = betas[k0 - 1]
    for k in range(k0, k1):
        if v32:  # beta[k] = beta[k-1] - alpha[k-1]*alpha[k-1]*beta[k-1]; sum[0][k] = r[k]; alpha = -sum*beta
            beta = beta - alpha * alpha * beta
            s = r[k]
            for i in range(k):
                s = s + r[k - i - 1] * y[i]
            alpha = -s * beta
        else:  # Golub & Van Loan 4.7.1 as PolyBench 4.x writes it
            beta = (1.0 - alpha * alpha) * beta
            s = 0.0
            for i in range(k):
                s += r[k - i - 1] * y[i]
            alpha = -(r[k] + s) / beta
        h = k // 2
        for i in range(h):
            j = k - 1 - i
            yi = y[i]
            yj = y[j]
            y[i] = yi + alpha * yj
            y[j] = yj + alpha * yi
        if k & 1:
            y[h] = y[h] + alpha * y[h]
        y[k] = alpha
        alphas[k] = alpha
        betas[k] = beta


def first_alpha(r0: float, version: str) -> float:
    """y[0] = alpha[0]: r[0] in 3.2, -r[0] in 4.x."""
    return float(r0) if version == "3.2" else -float(r0)


class DurbinCpu:
    """The recursion on the host, a step at a time or all at once.

    After ``k`` steps (``k`` counts the entries done: y[0..k-1] is the solution of the leading k x k
    system), ``y[:k]``, ``alphas[:k]`` and ``betas[:k]`` hold the state; ``step(m)`` advances m
    steps, ``run()`` to the end. The same attributes as ``sim.durbin.gpu.DurbinGpu``.
    """

    backend: Literal["cpu"] = "cpu"  # tells the two solvers apart
    kernel = "cpu"
    path = "numba, C summation order"

    def __init__(self, r, version: str = "4"):
        r = np.ascontiguousarray(r, dtype=np.float64)
        if r.ndim != 1 or r.size < 1:
            raise ValueError("r must be a non-empty vector")
        if version not in ("3.2", "4"):
            raise ValueError(f"unknown PolyBench version {version!r}")
        self.r, self.n, self.version = r, r.size, version
        self.y = np.empty(self.n)
        self.alphas = np.empty(self.n)
        self.betas = np.empty(self.n)
        self.reset()

    def reset(self) -> None:
        self.y.fill(np.nan)
        self.alphas.fill(np.nan)
        self.betas.fill(np.nan)
        a0 = first_alpha(self.r[0], self.version)
        self.y[0] = self.alphas[0] = a0
        self.betas[0] = 1.0
        self.k = 1

    @property
    def done(self) -> bool:
        return self.k >= self.n

    def step(self, count: int = 1, progress=None) -> None:
        """Advance ``count`` steps (fewer at the end), in interruptible chunks; ``progress(steps)`` after each
        chunk with the steps it did."""
        end = min(self.n, self.k + max(0, int(count)))
        v32 = self.version == "3.2"
        while self.k < end:
            stop = min(end, chunk_end(self.k, end))
            _steps(self.r, self.y, self.alphas, self.betas, self.k, stop, v32)
            if progress is not None:
                progress(stop - self.k)
            self.k = stop
            interrupts.check()

    def run(self, progress=None) -> np.ndarray:
        self.step(self.n, progress)
        return self.y

    def owners(self, k: int | None = None) -> np.ndarray:
        """Every entry of step k is updated by the one host thread (block 0)."""
        k = self.k - 1 if k is None else k
        return np.zeros(k + 1, np.int32)


def chunk_end(k: int, end: int) -> int:
    """The step after a chunk from step k of about CHUNK_WORK multiply-adds (each step k costs ~2k)."""
    # steps k..m-1 cost about m^2 - k^2: m = sqrt(k^2 + CHUNK_WORK)
    return max(k + 1, min(end, int((k * k + CHUNK_WORK) ** 0.5)))


def solve(r, version: str = "4") -> np.ndarray:
    """y of the whole recursion (PolyBench's output array)."""
    return DurbinCpu(r, version).run()


@numba.njit(cache=True, parallel=True)
def _batched(r, y, alphas, betas, v32):
    for s in prange(r.shape[0]):
        a0 = r[s, 0] if v32 else -r[s, 0]
        y[s, 0] = a0
        alphas[s, 0] = a0
        betas[s, 0] = 1.0
        _steps(r[s], y[s], alphas[s], betas[s], 1, r.shape[1], v32)


def batched(r, version: str = "4") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y, alphas, beta) for every row of r (systems, order): y and alphas (systems, order), beta the
    final normalised prediction error per system."""
    r = np.ascontiguousarray(r, dtype=np.float64)
    if r.ndim != 2 or r.shape[1] < 1:
        raise ValueError("r must be a (systems, order) array")
    y = np.empty_like(r)
    alphas = np.empty_like(r)
    betas = np.empty_like(r)
    if r.shape[0]:
        _batched(r, y, alphas, betas, version == "3.2")
    return y, alphas, betas[:, -1].copy()
