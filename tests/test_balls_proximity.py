"""The z-sorted proximity pass against a brute-force scan and hand-derived lattice counts."""

import numpy as np
import pytest

from sim import create_scene
from sim.balls import grid_cpu, grid_setup_cpu, presets, proximity_cpu, world
from sim.balls.kernels import grid_max_cells

T = np.float32(world.PAIR_LIFETIME)
MARGIN = np.float32(world.PROXIMITY_MARGIN)


def brute_force(pos, vel):
    """Every ordered pair inside the same z window, predicate evaluated in float32, op by op."""
    z_max, z_min = proximity_cpu.compute_keys(pos, vel, world.PAIR_LIFETIME)
    rank = np.empty(len(pos), np.int64)
    rank[np.argsort(z_max, kind="stable")] = np.arange(len(pos))
    later, earlier = np.nonzero(rank[:, None] > rank[None, :])  # (ball of idx9, ball of idx1)
    in_window = z_max[earlier] >= z_min[later]
    b9, b1 = later[in_window], earlier[in_window]
    d = pos[b1, :3] - pos[b9, :3]
    u = vel[b1, :3] - vel[b9, :3]
    dist = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2])
    speed = np.sqrt(u[:, 0] * u[:, 0] + u[:, 1] * u[:, 1] + u[:, 2] * u[:, 2])
    near = dist - T * speed <= MARGIN * (pos[b9, 3] + pos[b1, 3])
    return {(int(a), int(b)) for a, b in zip(b9[near], b1[near], strict=True)}, int(in_window.sum())


def random_cloud(rng, n, box):
    pos = np.empty((n, 4), np.float32)
    pos[:, :3] = rng.uniform(-box, box, (n, 3))
    pos[:, 3] = rng.uniform(0.5, 1.5, n)
    vel = np.zeros((n, 4), np.float32)
    vel[:, :3] = rng.normal(0.0, 30.0, (n, 3))
    return pos, vel


@pytest.mark.parametrize("n, box", [(2, 1.0), (700, 10.0), (1500, 12.0), (2500, 30.0)])
def test_sweep_equals_brute_force_on_random_clouds(n, box):
    rng = np.random.default_rng()  # fresh inputs every run
    pos, vel = random_cloud(rng, n, box)
    pairs, tests, count = proximity_cpu.proximity_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN)
    expected, window = brute_force(pos, vel)
    found = {(int(a), int(b)) for a, b in pairs}
    assert len(found) == count == len(pairs), "no pair twice"
    assert found == expected
    assert tests == window
    assert count > 0 or n == 2


def test_sweep_finds_pairs_with_tied_keys():
    """Balls with equal z_max (a lattice layer) still pair up exactly once."""
    rng = np.random.default_rng()
    pos, vel = random_cloud(rng, 400, 6.0)
    pos[:, 2] = np.round(pos[:, 2])  # many ties
    pos[:, 3] = 1.0
    vel[:, 2] = 0.0
    pairs, tests, count = proximity_cpu.proximity_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN)
    expected, window = brute_force(pos, vel)
    assert {(int(a), int(b)) for a, b in pairs} == expected and tests == window


def lattice_counts(tiers):
    """First-pass counts derived from the lattice geometry (radius r = 1.08).

    Layers in z are 3r apart, so z windows [z - r, z + r] (vz = 0 at the start) of different
    layers never overlap and every ball tests exactly the balls of its own layer sorted before
    it: a layer of m balls makes m(m-1)/2 tests. Within a layer, x and y neighbours are
    2.1r = 2.268 apart and pass the predicate (2.268 - T|dv| <= 2.2r = 2.376), while diagonal
    (2.97r) and second neighbours (4.2r) do not, since T|dv| < 1/60 (|dv| < 1).
    """
    columns, layers = 35, 49  # x from -40 + dx/2 while < 40: 35 balls; z: 49 layers
    m = columns * tiers
    tests = layers * m * (m - 1) // 2
    pairs = layers * (tiers * (columns - 1) + columns * (tiers - 1))
    return tests, pairs


@pytest.mark.parametrize("preset, tiers", [("T", 1), ("t", 5)])
def test_lattice_first_pass_counts(preset, tiers):
    scene = create_scene("balls", preset=preset)
    assert scene.n == 1715 * tiers
    scene.run_frame(1)
    assert scene.pass_log[0] == lattice_counts(tiers)
    assert lattice_counts(1) == (29155, 1666) and lattice_counts(5) == (746025, 15190)


def test_lattice_is_built_in_float32_like_the_seed():
    pos, vel = presets.lattice(1)
    assert pos.dtype == np.float32 and pos.shape == (1715, 4)
    assert pos[0, 0] == np.float32(-40) + np.float32(2.1) * np.float32(1.08) / np.float32(2)
    assert (0.0 <= vel[:, 0]).all() and (vel[:, 0] < 1.0).all() and (vel[:, 1:] == 0).all()


def all_pairs_brute_force(pos, vel):
    """Every pair the predicate accepts, over all n(n-1)/2 pairs (no z window): (m, 2), larger index first."""
    a, b = np.triu_indices(len(pos), 1)
    d = pos[a, :3] - pos[b, :3]
    u = vel[a, :3] - vel[b, :3]
    dist = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2])
    speed = np.sqrt(u[:, 0] * u[:, 0] + u[:, 1] * u[:, 1] + u[:, 2] * u[:, 2])
    near = dist - T * speed <= MARGIN * (pos[a, 3] + pos[b, 3])
    return np.column_stack([b[near], a[near]])


@pytest.mark.parametrize("n, box, speed", [(1, 1.0, 1.0), (600, 5.0, 1.0), (2500, 20.0, 30.0), (3000, 60.0, 3.0)])
def test_grid_twin_finds_every_pair_the_predicate_accepts(n, box, speed):
    rng = np.random.default_rng()
    pos, vel = random_cloud(rng, n, box)
    vel[:, :3] *= speed / 30.0
    pairs, tests, count = grid_cpu.grid_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN)
    found = {(int(a), int(b)) for a, b in pairs}
    assert len(found) == count == len(pairs)
    assert found == {(int(i), int(j)) for i, j in all_pairs_brute_force(pos, vel)}
    assert tests >= 2 * count


def splashed_cloud(rng, heap: int, far_pairs: int, spread: float = 2000.0):
    """A heap of slow balls (as in a settled trough) and a few pairs flung far from it, each pair's balls close
    enough to be one: their box needs far more cells than two a ball."""
    pos = np.empty((heap + 2 * far_pairs, 4), np.float32)
    pos[:heap, :3] = rng.uniform(-10.0, 10.0, (heap, 3))
    centres = rng.uniform(-spread, spread, (far_pairs, 3))
    pos[heap::2, :3] = centres
    pos[heap + 1 :: 2, :3] = centres + rng.uniform(-0.9, 0.9, (far_pairs, 3))
    pos[:, 3] = rng.uniform(0.5, 1.0, len(pos))
    vel = np.zeros((len(pos), 4), np.float32)
    vel[:, :3] = rng.normal(0.0, 0.3, (len(pos), 3))
    return rng.permutation(pos), vel


def test_a_splashed_cloud_keeps_fine_cells_and_every_pair():
    """Balls far from the heap would make the bounding box's cells coarse (every ball testing hundreds): the
    grid trims them from its box instead, counts them in its boundary cells, and still finds every pair, the
    far pairs too."""
    rng = np.random.default_rng()
    pos, vel = splashed_cloud(rng, 3000, 12)
    n = len(pos)
    shape = grid_setup_cpu.grid_shape(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN, grid_max_cells(n))
    origin, cell, dims = shape[:3]
    assert not shape.split, "every ball slow: one grid"
    lo, hi = pos[:, :3].min(axis=0), pos[:, :3].max(axis=0)
    speed = np.sqrt((vel[:, :3] ** 2).sum(axis=1).max())
    reach = 2 * world.PROXIMITY_MARGIN * pos[:, 3].max() + 2 * world.PAIR_LIFETIME * speed
    assert cell == pytest.approx(reach * 1.01, rel=1e-4), "cells at the predicate's reach, not grown"
    assert (origin > lo).all() and (origin + cell * dims < hi).all(), "the far balls are outside the box"
    pairs, tests, count = grid_cpu.grid_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN)
    assert {(int(a), int(b)) for a, b in pairs} == {(int(i), int(j)) for i, j in all_pairs_brute_force(pos, vel)}
    assert count >= 12, "every far pair found"
    assert tests < 200 * n, f"{tests / n:.0f} tests a ball"


def fast_cloud(rng, heap: int, fast: int, box: float = 10.0):
    """A heap of slow balls and a few fast ones (a splash), half of them inside the heap, half around it, and
    half of those inside in close pairs: pairs of slow balls, of a slow and a fast one, of two fast ones."""
    pos = np.empty((heap + fast, 4), np.float32)
    pos[:heap, :3] = rng.uniform(-box, box, (heap, 3))
    pos[heap:, :3] = rng.uniform(-1.5 * box, 1.5 * box, (fast, 3))
    pos[heap : heap + fast // 2, :3] = rng.uniform(-0.5 * box, 0.5 * box, (fast // 2, 3))  # inside the heap
    pos[heap + 1 :: 2, :3][: fast // 4] = pos[heap::2, :3][: fast // 4] + rng.uniform(-1.0, 1.0, (fast // 4, 3))
    pos[:, 3] = rng.uniform(0.5, 1.0, len(pos))
    vel = np.zeros((len(pos), 4), np.float32)
    vel[:heap, :3] = rng.normal(0.0, 0.3, (heap, 3))
    way = rng.normal(0.0, 1.0, (fast, 3))
    vel[heap:, :3] = way / np.linalg.norm(way, axis=1)[:, None] * rng.uniform(40.0, 120.0, (fast, 1))
    order = rng.permutation(len(pos))
    return pos[order], vel[order]


def test_a_few_fast_balls_get_coarse_cells_of_their_own():
    """A few balls fast enough to set everyone's cells three times as wide: the slow balls' cells are sized
    by the slow balls' speed, the fast ones get coarse cells of the full reach; every pair is found."""
    rng = np.random.default_rng()
    pos, vel = fast_cloud(rng, 3000, 8)
    shape = grid_setup_cpu.grid_shape(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN, grid_max_cells(len(pos)))
    assert shape.split and shape.cell < 0.75 * shape.coarse
    speed2 = grid_setup_cpu.speed_squared(vel)
    assert (speed2 > shape.fast2).sum() == 8, "the fast balls, and only they, above the cut"
    assert (shape.coarse_dims <= shape.dims).all()
    pairs, tests, count = grid_cpu.grid_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN)
    expected = all_pairs_brute_force(pos, vel)
    assert {(int(a), int(b)) for a, b in pairs} == {(int(i), int(j)) for i, j in expected}
    fast = np.isin(expected, np.flatnonzero(speed2 > shape.fast2))
    assert fast.all(axis=1).sum() >= 2 and (fast.any(axis=1) & ~fast.all(axis=1)).sum() >= 10, "every kind of pair"


def test_grid_finds_pairs_the_z_window_misses():
    """A fast sideways pair: the predicate accepts it, its z intervals do not overlap."""
    pos = np.array([(0, 0, 0, 1), (0, 0, 2.3, 1)], np.float32)
    vel = np.array([(0, 0, 0, 0), (60, 0, 0, 0)], np.float32)
    zsweep = proximity_cpu.proximity_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN)
    grid = grid_cpu.grid_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN)
    assert zsweep[2] == 0 and grid[2] == 1


def test_vectorised_lattice_matches_the_seed_loops():
    f = np.float32
    r = f(world.BENCH_RADIUS)
    dx = dy = f(2.1) * r
    dz = f(3) * r
    rows = []
    z = f(-80) + dz / f(2)
    while z < f(80):
        x = f(-40) + dx / f(2)
        while x < f(40):
            y = f(0)
            while y < dy * f(5) - f(0.001):
                rows.append((x, y, z))
                y = f(y + dy)
            x = f(x + dx)
        z = f(z + dz)
    pos, _ = presets.lattice(5)
    np.testing.assert_array_equal(pos[:, :3], np.array(rows, np.float32))


def test_block_preset_widens_the_trough_past_sixteen_tiers():
    small = presets.block_trough(10_000)
    assert (small.radius, small.z_min, small.z_max) == (40.0, -80.0, 80.0)
    rng = np.random.default_rng(0)
    pos, _, trough = presets.block(200_000, rng)
    assert pos.shape == (200_000, 4) and trough.radius > 40.0
    tiers = len(np.unique(pos[:, 1]))
    assert 14 <= tiers <= 17, "a wide drop, not a tower"
    assert np.abs(pos[:, 0]).max() < trough.radius and trough.z_min < pos[:, 2].min()
