"""The tensor kernels' method on the CPU (sim/sdh/squares.py): exact against the course's histogram,
and its error bound (sdh/tensor.cuh) checked in exact rational arithmetic."""

from fractions import Fraction
from math import isqrt

import numpy as np
import pytest

from sim.sdh import data, sdh_cpu, squares

U = 2.0**-53


def edge_pairs(m, width, rng, ulps=3):
    """m pairs whose distance is a whole number of buckets give or take a few float64 ulps, and pairs
    exactly on an edge (3-4-5 triangles of whole buckets from whole-numbered corners)."""
    centre = rng.uniform(5000, 18000, (m, 3))
    u = rng.normal(size=(m, 3))
    u /= np.linalg.norm(u, axis=1)[:, None]
    edge = width * rng.integers(1, 20, m)
    d = edge * (1 + rng.integers(-ulps, ulps + 1, m) * 2.0**-52)
    corner = np.floor(rng.uniform(0, 10, (m, 3))) * width
    exact = corner + np.array([3.0, 4.0, 0.0]) * width * rng.integers(1, 4, m)[:, None]
    return np.concatenate([centre, centre + u * d[:, None], corner, exact])


@pytest.mark.parametrize(
    "n, width, source",
    [
        (2, 500.0, "course"),
        (3000, 500.0, "course"),
        (2500, 500.0, "corners"),
        (2500, 137.5, "corners"),
        (2000, 50.0, "random"),
    ],
)
def test_twin_equals_the_course(n, width, source):
    rng = np.random.default_rng()
    points = data.atoms(n) if source == "course" else rng.uniform(0, 23000, (n, 3))
    if source == "corners":  # far-corner pairs past the course's last bucket, and coincident pairs
        points[:4] = [[0, 0, 0], [23000, 23000, 23000], [23000, 23000, 23000], [0, 23000, 0]]
    buckets = data.bucket_count(width)
    counts, _ = squares.histogram(points, width, buckets)
    np.testing.assert_array_equal(counts, sdh_cpu.histogram(points, width, buckets))


def test_pairs_on_and_beside_edges_are_rechecked_and_exact():
    rng = np.random.default_rng()
    m = 1500
    points = edge_pairs(m, 500.0, rng)
    buckets = data.bucket_count(500.0)
    assert squares.one_add(squares.inputs(points, 500.0)[3])  # the kernels' -DONE_ADD test
    counts, rechecked = squares.histogram(points, 500.0, buckets)
    np.testing.assert_array_equal(counts, sdh_cpu.histogram(points, 500.0, buckets))
    assert rechecked >= 2 * m  # every planted pair (and a few more: coincident corners)


def test_course_atoms_are_practically_never_rechecked():
    counts, rechecked = squares.histogram(data.atoms(4000), 500.0, data.bucket_count(500.0))
    assert counts.sum() == 4000 * 3999 // 2 and rechecked <= 2


def exact_d2(a, b, width):
    return sum((Fraction(float(x)) - Fraction(float(y))) ** 2 for x, y in zip(a, b, strict=True)) / Fraction(width) ** 2


@pytest.mark.parametrize("width", [500.0, 137.5, 3.0])
def test_error_bound_holds_in_exact_arithmetic(width):
    """|s - (D - E + 1)| <= 77 u (R^2 + 1) for the rounded inputs' s, and the course's bucket is floor(sqrt D)
    whenever D is farther than 72 u (R^2 + 1) from a square (the two halves of the kernel's bound)."""
    rng = np.random.default_rng()
    points = np.concatenate([rng.uniform(0, 23000, (300, 3)), edge_pairs(150, width, rng)])
    qa, qb, cj, e, _ = squares.inputs(points, width)
    r2 = float(qa[:, 3].max())
    ours, course = 77 * U * (r2 + 1), 72 * U * (r2 + 1)
    assert ours + course < e  # strictly inside (s, s + 2E)
    i = rng.integers(0, len(points), 600)
    j = rng.integers(0, len(points), 600)
    worst = 0.0
    for a, b in zip(i, j, strict=True):
        if a == b:
            continue
        s = float(qa[a] @ qb[b] + cj[b])
        d2 = exact_d2(points[a], points[b], width)
        worst = max(worst, abs(float(Fraction(s) - (d2 - Fraction(e) + 1))))
        root = isqrt(int(d2))
        if min(abs(d2 - root * root), abs(d2 - (root + 1) ** 2)) > course:
            bucket = squares.course_buckets(points, np.array([a]), np.array([b]), width, 10**9)[0]
            assert bucket == root
    assert worst <= ours


def test_fold_gives_each_square_root_its_bucket():
    fine = np.arange(30, dtype=np.int64)  # k counted k times: squared distance k - 1
    counts = squares.fold(fine, 4)
    assert counts.tolist() == [1, sum(range(2, 5)), sum(range(5, 10)), sum(range(10, 30))]


@pytest.mark.parametrize("width, one", [(500.0, True), (300.0, False), (137.5, False)])
def test_one_add_test_where_the_bound_allows_it(width, one):
    _, _, _, e, _ = squares.inputs(data.atoms(1000), width)
    assert squares.one_add(e) is one


def add_rounded_down(a, b):
    t = a + b
    return np.nextafter(t, -np.inf) if Fraction(t) > Fraction(a) + Fraction(b) else t


def test_the_kernels_bit_tests_read_floor_and_fraction():
    """sdh/tensor.cuh: 2^20 + s rounded down has floor(s) in its high word (less 0x41300000) and s's first
    32 fraction bits in its low word (-DONE_ADD); 2^52 + v rounded down has floor(v) in its low word."""
    import struct

    rng = np.random.default_rng()
    values = [
        *rng.uniform(0, 7000, 500),
        *(k + 1 - 2.0**-33 for k in range(40)),
        *(k + 1 - 2.0**-31 for k in range(40)),
        1.0 - 1e-10,
        1.0,
        6349.9999999999,
    ]
    for s in values:
        lo, hi = struct.unpack("<ii", struct.pack("<d", add_rounded_down(2.0**20, float(s))))
        assert hi - 0x41300000 == int(np.floor(s))
        assert (lo == -1) == (Fraction(float(s)) - int(np.floor(s)) >= 1 - Fraction(1, 2**32))
        lo52, _ = struct.unpack("<ii", struct.pack("<d", add_rounded_down(2.0**52, float(s))))
        assert lo52 == int(np.floor(s))


def tensor_pairs(n: int, block: int, blocks: int | None = None) -> np.ndarray:
    """How often sdh/tensor.cuh's indexing visits each pair (i, j) of n atoms with ``blocks`` blocks (all
    its rows without): block rows 8 * ROW_GROUPS * warps, A rows first_i + 8 g (first_i = base + warp * 8 *
    ROW_GROUPS + lane / 4), D columns tile + c + 2 (lane % 4) + e, the check in the tiles that reach the
    block's rows or n."""
    from sim.sdh.kernels import TENSOR_ROWS, rows_per_block

    groups = TENSOR_ROWS // 8
    rows = rows_per_block("tensor", block)
    seen = np.zeros((n, n), np.int64)
    lane = np.arange(32)
    for base in range(0, n if blocks is None else blocks * rows, rows):
        for tile in range(base, n, block):
            checked = tile < base + rows or tile + block > n
            for warp in range(block // 32):
                first_i = base + warp * TENSOR_ROWS + (lane >> 2)
                for c in range(0, block, 8):
                    for g in range(groups):
                        for e in range(2):
                            i, j = first_i + 8 * g, tile + c + 2 * (lane & 3) + e
                            take = (i < j) & (j < n) if checked else np.ones(32, bool)
                            assert ((i < j) & (j < n))[take].all()
                            np.add.at(seen, (i[take], j[take]), 1)
    return seen


@pytest.mark.parametrize("n, block", [(2, 32), (77, 32), (300, 32), (1000, 64), (700, 96)])
def test_the_kernels_blocks_lanes_and_tiles_count_every_pair_once(n, block):
    np.testing.assert_array_equal(tensor_pairs(n, block), np.triu(np.ones((n, n), np.int64), 1))
