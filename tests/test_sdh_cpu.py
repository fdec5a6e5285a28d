"""The distance histogram: the course's generator and printout, the CPU histogram, the CLI."""

import ctypes

import numpy as np
import pytest

from sim import crand
from sim.sdh import data, sdh_cpu
from sim.sdh.output import format_histogram


def test_generator_starts_like_glibc():
    assert crand.glibc_rand(1, 4).tolist() == [1804289383, 846930886, 1681692777, 1714636915]
    assert crand.glibc_rand(0, 3).tolist() == crand.glibc_rand(1, 3).tolist(), "srand(0) is srand(1)"


@pytest.mark.parametrize("seed", [1, 2, 12345, 2**31 - 1, 3_000_000_000])
def test_generator_equals_this_machines_glibc(seed):
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "srand"):
        pytest.skip("no C library rand() here")
    libc.srand(ctypes.c_uint(seed))
    expected = [libc.rand() for _ in range(1000)]
    assert crand.glibc_rand(seed, 1000).tolist() == expected


def test_atoms_in_the_course_order():
    p = data.atoms(2)
    r = crand.glibc_rand(1, 6)
    np.testing.assert_array_equal(p.ravel(), r / 2147483647 * 23000.0)


def test_printout_is_the_courses():
    text = format_histogram(np.array([1, 22, 333, 4444, 55555, 6], np.int64))
    expected = (
        "\n00: " + "".join(f"{c:15d} | " for c in (1, 22, 333, 4444, 55555)).rstrip("| ") + " | "
        "\n05: " + f"{6:15d} " + "\n T:60361 \n"
    )
    assert text == expected
    assert format_histogram(np.array([7], np.int64)) == "\n00: " + f"{7:15d} " + "\n T:7 \n"


def brute_force(points, width, buckets):
    i, j = np.triu_indices(len(points), 1)
    d = points[i] - points[j]
    dist = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2])
    return np.bincount(np.minimum((dist / width).astype(np.int64), buckets - 1), minlength=buckets)


@pytest.mark.parametrize("n, width", [(2, 500.0), (300, 500.0), (777, 123.4), (1000, 2000.0), (640, 7.5)])
def test_cpu_equals_brute_force(n, width):
    points = data.atoms(n) if n != 777 else np.random.default_rng().uniform(0, 23000, (n, 3))
    buckets = data.bucket_count(width)
    counts = sdh_cpu.histogram(points, width, buckets)
    np.testing.assert_array_equal(counts, brute_force(points, width, buckets))
    assert counts.sum() == n * (n - 1) // 2


def test_far_corner_pair_lands_in_the_last_bucket():
    width = 1.0  # 23000 * sqrt 3 = 39837.2 lies past the course's last bucket, (int)(23000 * 1.732) = 39836
    buckets = data.bucket_count(width)
    points = np.array([[0.0, 0.0, 0.0], [23000.0, 23000.0, 23000.0], [1.0, 0.0, 0.0]])
    counts = sdh_cpu.histogram(points, width, buckets)
    assert counts[buckets - 1] == 2 and counts[1] == 1 and counts.sum() == 3


def test_cli_prints_time_and_histogram(cli):
    out = cli("sdh", "1000", "500")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Running time for CPU version: ")
    assert out.stdout.endswith("\n T:499500 \n")
    expected = sdh_cpu.histogram(data.atoms(1000), 500.0, data.bucket_count(500.0))
    assert format_histogram(expected) in out.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["sdh", "1", "500"], "atoms must be at least 2"),
        (["sdh", "100", "0"], "must be positive"),
        (["sdh", "100", "-3"], "must be positive"),
        (["sdh", "100", "500", "0", "--backend", "gpu"], "block size must be positive"),
        (["sdh", "100", "500", "2048", "--backend", "gpu"], "1..1024"),
        (["sdh", "abc", "500"], "atoms: expected a whole number"),
    ],
)
def test_cli_bad_input_exits_2(cli, args, message):
    out = cli(*args)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
