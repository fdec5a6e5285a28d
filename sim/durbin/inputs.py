"""Right-hand sides r for the recursion: PolyBench's own inits, and meaningful ones.

PolyBench 3.2: ``r[i] = (i+1)/n/4.0`` with C integer division (so ``r = [0, ..., 0, 0.25]``);
PolyBench 4.x: ``r[i] = n + 1 - i``. Meaningful: the normalised autocorrelation of a stable AR(p)
process made from reflection coefficients kappa in (-1, 1) (Durbin run backwards for the first p
steps, then the AR recurrence): the Toeplitz matrix is SPD, Durbin (4.x) returns the kappas as its
first alphas and ``y[p:] = 0`` to rounding. AR(1): ``r_k = rho^(k+1)`` gives ``y = [-rho, 0, ...]``.
"""

from __future__ import annotations

import numpy as np

VERSIONS = ("3.2", "4")
INPUTS = ("polybench", "ar", "ar1")
PEER_KAPPAS = (0.6, -0.5, 0.4, -0.3, 0.2, -0.1)  # the yardstick's AR(6) (.peers/peer_durbin.py)
AR1_RHO = 0.5

# PolyBench's dataset sizes per version (3.2: the course's, with its own GIGA)
DATASETS = {
    "3.2": {"MINI": 32, "SMALL": 500, "STANDARD": 4000, "LARGE": 8000, "EXTRALARGE": 100000, "GIGA": 200000},
    "4": {"MINI": 40, "SMALL": 120, "MEDIUM": 400, "LARGE": 2000, "EXTRALARGE": 4000},
}
DEFAULT_DATASET = {"3.2": "STANDARD", "4": "LARGE"}  # each version's default build
ALIASES = {"3.2": {"MEDIUM": "STANDARD"}, "4": {"STANDARD": "MEDIUM"}}  # the middle size is named per version


def dataset_size(name: str, version: str) -> tuple[int, str]:
    """(N, how it was read) for a dataset name under a version; ValueError for an unknown name.

    STANDARD (3.2) and MEDIUM (4.x) are the same middle dataset; GIGA (the course's 200000) is
    accepted for 4.x too, as the course's size.
    """
    key = name.upper()
    table = DATASETS[version]
    if key in table:
        return table[key], f"PolyBench {version} {key}"
    if key in ALIASES[version]:
        real = ALIASES[version][key]
        return table[real], f"PolyBench {version} {real} (the name of {key} in this version)"
    if key == "GIGA":
        return DATASETS["3.2"]["GIGA"], "the course's GIGA (PolyBench 3.2 port)"
    known = sorted(set(table) | set(ALIASES[version]) | {"GIGA"})
    raise ValueError(f"unknown dataset {name!r} for PolyBench {version} (choose from {', '.join(known)})")


def polybench(n: int, version: str) -> np.ndarray:
    """PolyBench's init of r (float64), exactly as each version computes it."""
    i = np.arange(n, dtype=np.int64)
    if version == "3.2":
        return ((i + 1) // n).astype(np.float64) / 4.0
    if version == "4":
        return (n + 1 - i).astype(np.float64)
    raise ValueError(f"unknown PolyBench version {version!r} (choose from {', '.join(VERSIONS)})")


def ar_autocorr(n: int, kappas) -> np.ndarray:
    """r of length n whose Durbin alphas are ``kappas`` (each in (-1, 1)) and then zeros."""
    kappas = np.asarray(kappas, dtype=np.float64)
    if kappas.ndim != 1 or kappas.size == 0 or not np.all(np.abs(kappas) < 1):
        raise ValueError("reflection coefficients must be a non-empty list of values in (-1, 1)")
    from sim.durbin.autocorr_cpu import ar_autocorr_kernel  # compiled: the CLI's parser reads the tables alone

    return ar_autocorr_kernel(kappas, n)


def random_kappas(rng: np.random.Generator, p: int | None = None, bound: float = 0.7) -> np.ndarray:
    """p (default 1..8, random) reflection coefficients uniform in (-bound, bound): a well-conditioned AR(p)."""
    p = int(rng.integers(1, 9)) if p is None else p
    return rng.uniform(-bound, bound, p)


def ar1(n: int, rho: float = AR1_RHO) -> np.ndarray:
    """r_k = rho^(k+1): the solution is exactly [-rho, 0, 0, ...]."""
    return rho ** np.arange(1, n + 1, dtype=np.float64)


def make(kind: str, n: int, version: str) -> np.ndarray:
    """The CLI's inputs: PolyBench's init, the yardstick's AR(6), or AR(1) with rho = 0.5."""
    if kind == "polybench":
        return polybench(n, version)
    if kind == "ar":
        return ar_autocorr(n, PEER_KAPPAS)
    if kind == "ar1":
        return ar1(n)
    raise ValueError(f"unknown input {kind!r} (choose from {', '.join(INPUTS)})")


def toeplitz_column(r: np.ndarray) -> np.ndarray:
    """The first column of T in T y = -r (4.x): [1, r[0], ..., r[n-2]]."""
    r = np.asarray(r)
    return np.concatenate([np.ones(r.shape[:-1] + (1,), r.dtype), r[..., :-1]], axis=-1)
