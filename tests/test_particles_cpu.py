"""CS 267 particles on the CPU: the starters' initial states, the binned step against the O(n^2) starter."""

import pathlib
import shutil
import subprocess

import numba
import numpy as np
import pytest

from sim import create_scene
from sim.gpu.timing import NULL_TIMER
from sim.particles import binning_cpu, pipeline_cpu, world
from sim.particles.distances import DistanceStats
from sim.particles.init import init_2020, init_legacy
from sim.particles.pipeline_cpu import HostParticles

ROOT = pathlib.Path(__file__).resolve().parent.parent


@numba.njit(cache=True)
def starter_step(x, y, vx, vy, size):
    """The O(n^2) starter, as written: for each i, every j in increasing j, float64, then move."""
    n = x.shape[0]
    ax = np.zeros(n)
    ay = np.zeros(n)
    cutoff, min_r, mass, dt = world.CUTOFF, world.MIN_R, world.MASS, world.DT
    for i in range(n):
        for j in range(n):
            dx = x[j] - x[i]
            dy = y[j] - y[i]
            r2 = dx * dx + dy * dy
            if r2 > cutoff * cutoff:
                continue
            r2 = max(r2, min_r * min_r)
            r = np.sqrt(r2)
            coef = (1 - cutoff / r) / r2 / mass
            ax[i] += coef * dx
            ay[i] += coef * dy
    for i in range(n):
        vx[i] += ax[i] * dt
        vy[i] += ay[i] * dt
        x[i] += vx[i] * dt
        y[i] += vy[i] * dt
        while x[i] < 0 or x[i] > size:
            x[i] = -x[i] if x[i] < 0 else 2 * size - x[i]
            vx[i] = -vx[i]
        while y[i] < 0 or y[i] > size:
            y[i] = -y[i] if y[i] < 0 else 2 * size - y[i]
            vy[i] = -vy[i]


@pytest.mark.parametrize("n", [1000, 3000])
def test_binned_step_is_bit_identical_to_the_starter(n):
    scene = create_scene("particles", n=n, seed=int(np.random.default_rng().integers(1, 1 << 30)))
    x, y, vx, vy = (a.copy() for a in (scene.x, scene.y, scene.vx, scene.vy))
    for step in range(120):
        scene.run_frame(1)
        starter_step(x, y, vx, vy, scene.size)
        if step % 20 == 19:
            for ours, theirs in ((scene.x, x), (scene.y, y), (scene.vx, vx), (scene.vy, vy)):
                np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("n", [1, 500, 20_000])
def test_the_bins_are_a_stable_counting_sort(n):
    """Each particle's bin from its position (the last bin holds the far walls), each bin's members in index
    order, each bin's start after the ones before it, against numpy on fresh random positions."""
    rng = np.random.default_rng()
    size = world.box_size(n)
    x, y = rng.uniform(0, size, n), rng.uniform(0, size, n)
    x[: n // 50], y[n // 50 : n // 25] = size, 0.0  # on the walls
    nbins = binning_cpu.bin_count(size)
    bins, start, members = binning_cpu.sort_into_bins(x, y, size, nbins)
    width = size / nbins
    expected = np.minimum((y / width).astype(np.int64), nbins - 1) * nbins + np.minimum(
        (x / width).astype(np.int64), nbins - 1
    )
    np.testing.assert_array_equal(bins, expected)
    np.testing.assert_array_equal(members, np.argsort(expected, kind="stable"))
    counts = np.bincount(expected, minlength=nbins * nbins)
    np.testing.assert_array_equal(start, np.concatenate([[0], np.cumsum(counts)]))
    assert bins.dtype == start.dtype == members.dtype == np.int64


def test_distance_statistics_in_the_course_bands():
    scene = create_scene("particles", n=1000, seed=1)
    for _ in range(1000):
        scene.run_frame(1)
    stats = scene.stats_per_step
    assert 0.6 < stats.absmin < 0.9 and 0.9 < stats.absavg < 1.0
    assert stats.warnings() == []


def test_forces_off_control_trips_both_warnings():
    """The course's control run: the same particles stepped without their forces."""
    x, y, vx, vy = init_2020(1000, 1)
    particles, size = HostParticles(x, y, vx, vy), world.box_size(1000)
    stats = DistanceStats()
    for _ in range(1000):
        stats.add_step(*pipeline_cpu.step(particles, size, binning_cpu.bin_count(size), NULL_TIMER, forces=False))
    assert stats.absmin < 0.4 and stats.absavg < 0.8
    assert len(stats.warnings()) == 2


@pytest.mark.parametrize("argument", [{"forces": False}, {"stats": False}])
def test_the_scene_takes_only_its_contract_arguments(argument):
    """The statistics are the "statistics" toggle; no constructor switch besides the spec's options."""
    with pytest.raises(ValueError, match=f"particles has no option '{next(iter(argument))}'"):
        create_scene("particles", n=100, **argument)


@pytest.fixture(scope="module")
def starter_init(tmp_path_factory):
    """The C++ starters' init_particles (tests/data/starter_init.cpp), built with the machine's g++."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is needed to build the C++ starter's init")
    exe = tmp_path_factory.mktemp("starter") / "starter_init"
    subprocess.run(["g++", "-O0", "-o", str(exe), str(ROOT / "tests" / "data" / "starter_init.cpp")], check=True)
    return exe


def run_starter(exe, kind, n, seed):
    text = subprocess.run([str(exe), kind, str(n), str(seed)], capture_output=True, text=True, check=True).stdout
    return np.array([[float(v) for v in ln.split()] for ln in text.splitlines()])


def test_2020_init_matches_the_cpp_starter(starter_init):
    """n = 1000, seed 1: libstdc++'s uniform_int agrees across versions (see the spec)."""
    ours = np.column_stack(init_2020(1000, 1))
    np.testing.assert_array_equal(ours, run_starter(starter_init, "2020", 1000, 1))


@pytest.mark.parametrize("n, seed", [(1000, 1), (777, 12345), (5000, 7)])
def test_legacy_init_matches_the_c_starter(starter_init, n, seed):
    ours = np.column_stack(init_legacy(n, seed))
    np.testing.assert_array_equal(ours, run_starter(starter_init, "legacy", n, seed))


def test_mt19937_is_the_standard_engine():
    from sim.particles.init import mt19937_stream

    draws = mt19937_stream(5489).random_raw(10000)
    assert draws[0] == 3499211612 and draws[-1] == 4123659995  # the C++ standard's check value
