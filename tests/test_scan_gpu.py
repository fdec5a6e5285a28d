"""common/scan.cuh's prefix sums (sim.gpu.scan.CountScan) against numpy's cumsum, the CPU twin, on fresh
random counts over poisoned outputs: every length class (within a round, a tile, many tiles, ragged
ends), with and without clearing the counts, and a length known only on the device (run with
pytest -m gpu)."""

import numpy as np
import pytest

from sim.gpu import cuda
from sim.gpu.scan import CountScan
from sim.particles import kernels

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("m", [1, 3, 1023, 4096, 4097, 3 * 4096 + 5, 1_000_003])
@pytest.mark.parametrize("clear", [False, True])
def test_count_scan_is_the_cumulative_sum(m, clear):
    import cupy

    rng = np.random.default_rng()
    counts = rng.poisson(0.8, m).astype(np.int32)
    counts[rng.integers(0, m, max(1, m // 1000))] = rng.integers(50, 500)  # a few crowded bins
    count = cupy.asarray(counts)
    start = cupy.full(m + 1, -7, cupy.int32)
    scan = CountScan(cuda.kernels(kernels.step("plain", "fp64", 128, False), 0), m)
    scan(count, start, clear=clear)
    np.testing.assert_array_equal(start.get(), np.concatenate([[0], np.cumsum(counts)]))
    np.testing.assert_array_equal(count.get(), 0 if clear else counts)


def test_count_scan_leaves_counts_past_m_alone():
    """A buffer longer than the scan (the balls' cell counts are kept between passes): nothing past m
    is read into the sums, cleared or written."""
    import cupy

    m = 5000
    count = cupy.arange(1, m + 101, dtype=cupy.int32)
    start = cupy.full(m + 101, -7, cupy.int32)
    CountScan(cuda.kernels(kernels.step("plain", "fp64", 128, False), 0), m)(count, start, clear=True)
    assert not count[:m].get().any()
    np.testing.assert_array_equal(count[m:].get(), np.arange(m + 1, m + 101))
    np.testing.assert_array_equal(start[: m + 1].get(), np.concatenate([[0], np.cumsum(np.arange(1, m + 1))]))
    assert (start[m + 1 :].get() == -7).all()


@pytest.mark.parametrize("used", [0, 1, 4095, 4096, 9000, 3 * 4096 + 5])
def test_count_scan_with_a_device_length_scans_that_prefix_only(used):
    """The balls' grid: the scan is sized for the most cells, the device knows how many are in use (0: one
    GPU's particles on a step that does not bin)."""
    import cupy

    rng = np.random.default_rng()
    m = 3 * 4096 + 5
    counts = rng.integers(1, 9, m).astype(np.int32)
    count = cupy.asarray(counts)
    start = cupy.full(m + 1, -7, cupy.int32)
    length = cupy.asarray([used, -3], cupy.int32)
    CountScan(cuda.kernels(kernels.step("plain", "fp64", 128, False), 0), m)(count, start, clear=True, length=length)
    np.testing.assert_array_equal(start[: used + 1].get(), np.concatenate([[0], np.cumsum(counts[:used])]))
    assert (start[used + 1 :].get() == -7).all()
    assert not count[:used].get().any()
    np.testing.assert_array_equal(count[used:].get(), counts[used:])


@pytest.mark.parametrize("m, used", [(5 * 4096 + 7, None), (1_000_003, None), (1_000_003, 9 * 4096 + 1)])
def test_a_grid_of_fewer_blocks_than_tiles_takes_the_tiles_in_turns(m, used):
    """Three blocks over 6 and 245 tiles (the default grid covers every tile below about 4M counts)."""
    import cupy

    rng = np.random.default_rng()
    counts = rng.poisson(1.3, m).astype(np.int32)
    count = cupy.asarray(counts)
    start = cupy.full(m + 1, -7, cupy.int32)
    scan = CountScan(cuda.kernels(kernels.step("plain", "fp64", 128, False), 0), m, blocks=3)
    assert scan.blocks == 3 < scan.tiles
    length = None if used is None else cupy.asarray([used], cupy.int32)
    scan(count, start, clear=True, length=length)
    k = m if used is None else used
    np.testing.assert_array_equal(start[: k + 1].get(), np.concatenate([[0], np.cumsum(counts[:k])]))
    assert (start[k + 1 :].get() == -7).all()
    assert not count[:k].get().any()
    np.testing.assert_array_equal(count[k:].get(), counts[k:])
