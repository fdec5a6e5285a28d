"""The tensor kernel's method (sdh/tensor.cuh) without a GPU: their inputs, prepared the same way for
numpy or CuPy, and a numpy twin that counts pairs by the integer part of the squared distance in bucket
units, rechecks pairs within the error bound of a whole number with the course's float64 arithmetic,
and folds the fine counts into buckets. The kernel's comment proves the bound; the tests check the
twin against the exact CPU histogram and the bound against exact rational arithmetic."""

from __future__ import annotations

import numpy as np

BOUND_SCALE = 2.0**-44  # E = BOUND_SCALE * (R^2 + 1), see sdh/tensor.cuh


def inputs(p, width: float, xp=np):
    """(qa, qb, cj, E, slots) for float64 points ``p`` (n, 3) of array module ``xp``: qa rows
    (qx, qy, qz, |q|^2), qb columns (-2qx, -2qy, -2qz, 1), cj = |q|^2 - E + 1, q = (p - centre) / width;
    fine counter floor(D) + 1 counts the pairs of squared distance D."""
    n = p.shape[0]
    q = (p - (p.min(axis=0) + p.max(axis=0)) * 0.5) / width
    norms = (q[:, 0] * q[:, 0] + q[:, 1] * q[:, 1]) + q[:, 2] * q[:, 2]
    r2 = float(norms.max()) if n else 0.0
    e = BOUND_SCALE * (r2 + 1.0)
    qa, qb = xp.empty((n, 4)), xp.empty((n, 4))
    qa[:, :3], qa[:, 3] = q, norms
    qb[:, :3], qb[:, 3] = -2.0 * q, 1.0
    slots = int(4.0 * r2 + 1.0) + 3  # no two points are farther apart than twice the largest norm
    return qa, qb, (norms - e) + 1.0, e, slots


def one_add(e: float) -> bool:
    """Whether the kernel may test for a whole D by the first 32 fraction bits of s (-DONE_ADD)."""
    return 2.0 * e <= 2.0**-32


def fold(fine: np.ndarray, buckets: int) -> np.ndarray:
    """Fine counter k belongs to bucket isqrt(k - 1) (the last bucket takes the rest)."""
    counts = np.zeros(buckets, np.int64)
    for b in range(buckets):
        lo, hi = b * b + 1, (len(fine) if b == buckets - 1 else (b + 1) * (b + 1) + 1)
        counts[b] = fine[lo:hi].sum() if lo < len(fine) else 0
    return counts


def course_buckets(p: np.ndarray, i: np.ndarray, j: np.ndarray, width: float, buckets: int) -> np.ndarray:
    d = p[i] - p[j]
    dist = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2])
    return np.minimum((dist / width).astype(np.int64), buckets - 1)


def histogram(
    points: np.ndarray, width: float, buckets: int, rows: int = 256, band: tuple[int, int] | None = None
) -> tuple[np.ndarray, int]:
    """(counts int64, pairs rechecked) by the tensor kernel's method, ``rows`` rows of pairs at a time: the
    pairs (i, j > i) of rows i in ``band`` [first, last) (every row without), inputs made from every point
    (as the ranks' bands, sim.sdh.bands)."""
    p = np.ascontiguousarray(points, np.float64)
    n = p.shape[0]
    qa, qb, cj, e, slots = inputs(p, width)
    fine = np.zeros(slots, np.int64)
    rechecked = 0
    lo, hi = band if band is not None else (0, n)
    for first in range(lo, min(hi, n - 1), rows):
        i = np.arange(first, min(n - 1, hi, first + rows))
        s = (qa[i] @ qb.T) + cj[None, :]  # D - E + 1: the MMA's result, summed in another order
        ii, jj = np.nonzero(np.arange(n)[None, :] > i[:, None])
        s = s[ii, jj]
        k = np.floor(s)
        if one_add(e):  # the first 32 bits of the fraction all ones
            near = s - k >= 1.0 - 2.0**-32
        else:
            near = k != np.floor(np.nextafter(s + 2.0 * e, np.inf))
        b = course_buckets(p, i[ii[near]], jj[near], width, buckets)
        k[near] = np.minimum(b * b + 1, slots - 1)
        rechecked += int(near.sum())
        fine += np.bincount(k.astype(np.int64), minlength=slots)
    return fold(fine, buckets), rechecked
