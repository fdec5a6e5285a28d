"""The starters' initial states, draw for draw.

2020+ (``init_2020``): ``std::mt19937`` seeded with ``seed`` (init_genrand), a shuffled lattice,
velocities U(-1, 1) drawn in float32 as libstdc++'s ``uniform_real_distribution<float>`` does.
2011-2019 (``init_legacy``): ``srand48(seed)``, ``lrand48() % (n - i)``, ``drand48() * 2 - 1``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from sim.particles.world import box_size


def mt19937_stream(seed: int):
    """Raw 32-bit outputs of std::mt19937(seed), in chunks, as a refillable buffer."""
    bits = np.random.MT19937()
    bits._legacy_seeding(seed)  # init_genrand: the standard's seeding
    return bits


@numba.njit(cache=True)
def _place(n, sx, sy, size, draws, x, y, vx, vy):
    """The 2020 starter's loop over pre-drawn raw outputs; returns how many it used (-1: ran out)."""
    shuffle = np.arange(n)
    used = 0
    scale = np.float32(4294967296.0)
    for i in range(n):
        # uniform_int(0, n - i - 1), divide-and-reject (libstdc++ before GCC 11)
        urange = np.uint64(n - i)
        scaling = np.uint64(0xFFFFFFFF) // urange
        past = urange * scaling
        while True:
            if used >= draws.shape[0]:
                return -1
            u = np.uint64(draws[used])
            used += 1
            if u < past:
                break
        j = np.int64(u // scaling)
        k = shuffle[j]
        shuffle[j] = shuffle[n - i - 1]
        x[i] = size * (1.0 + (k % sx)) / (1 + sx)
        y[i] = size * (1.0 + (k // sx)) / (1 + sy)
        for target in range(2):
            if used >= draws.shape[0]:
                return -1
            c = np.float32(draws[used]) / scale
            used += 1
            if c >= np.float32(1.0):
                c = np.float32(0.99999994)
            v = c * np.float32(2.0) + np.float32(-1.0)
            if target == 0:
                vx[i] = v
            else:
                vy[i] = v
    return used


def lattice_shape(n: int) -> tuple[int, int]:
    sx = math.ceil(math.sqrt(n))
    return sx, (n + sx - 1) // sx


def init_2020(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    sx, sy = lattice_shape(n)
    size = box_size(n)
    x, y, vx, vy = (np.empty(n, np.float64) for _ in range(4))
    bits = mt19937_stream(seed)
    draws = bits.random_raw(3 * n + 64).astype(np.uint32)
    while _place(n, sx, sy, size, draws, x, y, vx, vy) < 0:  # rejections used up the spare draws
        bits = mt19937_stream(seed)
        draws = bits.random_raw(2 * draws.shape[0]).astype(np.uint32)
    return x, y, vx, vy


@numba.njit(cache=True)
def _place_legacy(n, sx, sy, size, seed, x, y, vx, vy):
    state = (np.uint64(seed) << np.uint64(16)) + np.uint64(0x330E)  # srand48
    mask = np.uint64((1 << 48) - 1)
    a = np.uint64(0x5DEECE66D)
    shuffle = np.arange(n)
    for i in range(n):
        state = (a * state + np.uint64(0xB)) & mask
        j = np.int64(state >> np.uint64(17)) % (n - i)  # lrand48
        k = shuffle[j]
        shuffle[j] = shuffle[n - i - 1]
        x[i] = size * (1.0 + (k % sx)) / (1 + sx)
        y[i] = size * (1.0 + (k // sx)) / (1 + sy)
        state = (a * state + np.uint64(0xB)) & mask
        vx[i] = np.float64(state) / 281474976710656.0 * 2 - 1  # drand48
        state = (a * state + np.uint64(0xB)) & mask
        vy[i] = np.float64(state) / 281474976710656.0 * 2 - 1


def init_legacy(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    sx, sy = lattice_shape(n)
    x, y, vx, vy = (np.empty(n, np.float64) for _ in range(4))
    _place_legacy(n, sx, sy, box_size(n), seed & 0xFFFFFFFF, x, y, vx, vy)
    return x, y, vx, vy


INITS = {"2020": init_2020, "legacy": init_legacy}
