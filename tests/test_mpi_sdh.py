"""The distance histogram over MPI ranks: folded bands balanced by pair count, and exactly the one-process
printout for any rank count (CPU ranks here; the GPU tests run on a GPU machine)."""

from __future__ import annotations

import pathlib
import re
import sys

import numpy as np
import pytest
from mpi_support import run

from sim.gpu.cuda import ceil_div
from sim.sdh.bands import pairs_before, share_pairs, shares

ROOT = pathlib.Path(__file__).resolve().parent.parent
TIME = re.compile(r"Running time for (CPU|GPU) version[^:]*: .*\n")


def cli(*args, ranks: int = 1, timeout: int = 240, env=None):
    return run([sys.executable, ROOT / "main.py", *args], ranks if ranks > 1 else None, timeout, env)


@pytest.mark.parametrize(
    "n, parts, unit",
    [
        (10, 3, 1),
        (1000, 2, 1),
        (100_003, 4, 1024),
        (2_000_000, 8, 1024),
        (5000, 7, 128),
        (300, 4, 256),
        (2049, 2, 1024),
        (1, 1, 256),
    ],
)
def test_shares_cover_the_triangle_once_with_equal_pair_counts(n, parts, unit):
    parts_rows = shares(n, parts, unit)
    assert len(parts_rows) == parts
    bands = sorted(b for part in parts_rows for b in part)
    assert all(1 <= len(part) <= 2 for part in parts_rows if part)
    assert bands[0][0] == 0 and bands[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(bands, bands[1:], strict=False)), "every row once"
    assert all(first % unit == 0 and last > first for first, last in bands), "bands of whole blocks of rows"
    assert sum(share_pairs(n, part) for part in parts_rows) == n * (n - 1) // 2
    widest_unit = 2 * pairs_before(n, min(unit, n))  # a block row and its mirror
    for part in parts_rows:
        assert abs(share_pairs(n, part) - n * (n - 1) / 2 / parts) <= widest_unit


@pytest.mark.parametrize("n, parts, block", [(1000, 3, 32), (700, 2, 64), (515, 4, 32)])
def test_tensor_kernel_launched_on_bands_counts_every_pair_once(n, parts, block):
    """The ranks' launch of the tensor kernel (sim.sdh.bands): for each band, the atoms from its first row on
    (n - first of them) and the band's blocks only; its tile indexing (emulated) visits each pair of the band's
    rows once."""
    from sim.sdh.bands import rows_per_block
    from tests.test_sdh_squares import tensor_pairs

    rows = rows_per_block("tensor", block)
    seen = np.zeros((n, n), np.int64)
    for part in shares(n, parts, rows):
        for first, last in part:
            seen[first:, first:] += tensor_pairs(n - first, block, ceil_div(last - first, rows))
    np.testing.assert_array_equal(seen, np.triu(np.ones((n, n), np.int64), 1))


def test_tensor_twin_on_bands_adds_up_to_the_exact_histogram():
    """The tensor kernel's numpy twin over the bands of 3 ranks, its inputs from every atom (as GpuShare's),
    sums to the course's exact histogram."""
    from sim.sdh import data, sdh_cpu, squares
    from sim.sdh.bands import rows_per_block

    n, width = 3000, 500.0
    points, buckets = data.atoms(n), data.bucket_count(width)
    total = np.zeros(buckets, np.int64)
    for part in shares(n, 3, rows_per_block("tensor", 256)):
        for band in part:
            total += squares.histogram(points, width, buckets, band=band)[0]
    np.testing.assert_array_equal(total, sdh_cpu.histogram(points, width, buckets))


def test_shares_fold_long_rows_with_short_ones():
    first, second = shares(2_000_000, 2, 1024)
    assert len(first) == 2 and first[0][0] == 0 and first[1][1] == 2_000_000, "the front rows and the back rows"
    assert len(second) == 1, "the middle, in one band"
    (a, b), (c, d) = first
    assert (b - a) // 1024 == ceil_div(d - c, 1024), "as many blocks of long rows as of short ones"


@pytest.mark.parametrize("ranks, n, width", [(2, 3000, 500), (3, 4001, 97.3), (4, 2500, 20000)])
def test_ranks_print_the_one_process_histogram(ranks, n, width):
    one = cli("sdh", str(n), str(width))
    many = cli("sdh", str(n), str(width), ranks=ranks)
    assert one.returncode == 0 and many.returncode == 0, many.stderr
    assert TIME.sub("", many.stdout) == TIME.sub("", one.stdout)
    assert len(TIME.findall(many.stdout)) == 1, "printed once"
    assert f"{ranks} ranks on 1 host(s)" in many.stderr


def test_every_pair_counted_once_over_ranks():
    one = cli("sdh", "20000", "1000.5")
    many = cli("sdh", "20000", "1000.5", ranks=3)
    assert many.returncode == 0, many.stderr
    assert TIME.sub("", many.stdout) == TIME.sub("", one.stdout)
    total = int(re.search(r"T:(\d+)", many.stdout)[1])
    assert total == 20000 * 19999 // 2


def test_gpu_options_without_the_gpu_refused_once():
    done = cli("sdh", "1000", "500", "--kernel", "fast", ranks=2)
    assert done.returncode == 2 and done.stderr.count("GPU backend only") == 1


# --- GPU: the shares' launches of the existing kernels add up to the one-launch histogram ----------------------
@pytest.mark.gpu
@pytest.mark.parametrize(
    "kernel, block",
    [
        ("fast", 256),
        ("fast", 128),
        ("tiled-priv", 256),
        ("naive", 128),
        ("tiled", 64),
        ("naive-priv", 256),
        ("tensor", 256),
        ("tensor", 64),
    ],
)
def test_gpu_shares_sum_to_the_single_launch(kernel, block):
    from sim.sdh import data, gpu
    from sim.sdh.bands import GpuShare, rows_per_block

    n, width = 70_001, 250.0
    points = data.atoms(n)
    buckets = data.bucket_count(width)
    whole, _ = gpu.histogram(points, width, buckets, kernel, block)
    for parts in (2, 3, 5):
        total = np.zeros(buckets, np.int64)
        for part in shares(n, parts, rows_per_block(kernel, block)):
            job = GpuShare(points, width, buckets, kernel, block, part, 0)
            job.hist[:] = 12345  # poisoned: launch must clear it
            job.launch()
            total += job.hist.get().astype(np.int64)
        assert np.array_equal(total, whole), (kernel, block, parts)


@pytest.mark.gpu
def test_gpu_ranks_print_the_one_gpu_histogram():
    import cupy

    env = {"KERNEL_LAB_TRANSPORT": "host"} if cupy.cuda.runtime.getDeviceCount() < 2 else {}
    one = cli("sdh", "100000", "500", "--backend", "gpu", "--kernel", "all")
    many = cli("sdh", "100000", "500", "--backend", "gpu", "--kernel", "all", ranks=2, env=env)
    assert one.returncode == 0 and many.returncode == 0, many.stderr
    assert TIME.sub("", many.stdout) == TIME.sub("", one.stdout)
