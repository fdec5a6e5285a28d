"""The balls grid search's prefilters (speed bound, squared-distance bound) and the step against
the CPU twins: the prefilters never drop a pair, the step (batched, eager first partners, registers
capped) takes the twin's step (run with pytest -m gpu)."""

import numpy as np
import pytest
from test_balls_gpu import _NoTimer, gpu_pass, random_cloud
from test_balls_proximity import all_pairs_brute_force as brute_force_pairs

from sim.balls import pipeline_cpu, world
from sim.pairs import differing_items, lists_from_pairs, pairs_from_lists

pytestmark = pytest.mark.gpu

T = world.PAIR_LIFETIME
M = world.PROXIMITY_MARGIN


def edge_pairs(rng, count, speed, radii=(0.5, 1.5)):
    """Pairs flying apart at the fastest relative speed (the prefilter's bound, less its slack), at
    distances within a few ulps of the predicate's edge: where a loose prefilter would drop a pair.
    Radii drawn from ``radii``; equal ends with no speed put the pairs at the distance bound's edge."""
    pos = np.empty((2 * count, 4), np.float32)
    vel = np.zeros((2 * count, 4), np.float32)
    centre = rng.uniform(-60.0, 60.0, (count, 3))
    axis = rng.normal(size=(count, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    radius = rng.uniform(*radii, (count, 2)).astype(np.float32)
    gap = M * (radius[:, 0] + radius[:, 1]) + T * 2 * speed
    gap *= 1 + rng.integers(-8, 9, count) * 6e-8  # a few float32 ulps either side of the edge
    pos[0::2, :3] = centre - 0.5 * gap[:, None] * axis
    pos[1::2, :3] = centre + 0.5 * gap[:, None] * axis
    pos[0::2, 3], pos[1::2, 3] = radius[:, 0], radius[:, 1]
    vel[0::2, :3] = -speed * axis
    vel[1::2, :3] = speed * axis
    return pos, vel


@pytest.mark.parametrize("block", [64, 128])
@pytest.mark.parametrize("cloud", ["slow", "fast", "one fast ball", "edge", "edge at rest, largest radius"])
def test_grid_prefilter_keeps_the_brute_force_pairs(block, cloud):
    rng = np.random.default_rng()
    if cloud == "edge":
        pos, vel = edge_pairs(rng, 2000, 7.0)
    elif cloud.startswith("edge at rest"):  # every pair at the squared-distance bound's edge (grid.cuh)
        pos, vel = edge_pairs(rng, 2000, 0.0, radii=(1.25, 1.25))
    else:
        pos, vel = random_cloud(rng, 3001, 14.0, speed={"slow": 0.5, "fast": 30.0}.get(cloud, 1.0))
        if cloud == "one fast ball":  # the bound is loose for every other pair, still exact
            vel[rng.integers(pos.shape[0]), :3] = 400.0
    gpu, result, (spos, svel, _), count, slots = gpu_pass(pos, vel, "grid", block)
    expected = brute_force_pairs(spos, svel)
    assert result.pairs == expected.shape[0]
    if cloud.startswith("edge"):
        assert 0 < expected.shape[0] < pos.shape[0] // 2, "some edge pairs in, some out"
    cpu_count, cpu_slots = lists_from_pairs(expected, gpu.n)
    assert not differing_items(count, slots, cpu_count, cpu_slots).any()


def test_grid_pass_drops_the_fallen_balls_and_keeps_every_live_pair():
    """Fallen balls go to the cell after the grid's, sorted last, then dropped; the live balls keep
    their state and every pair among them."""
    from sim.balls.gpu import BallsGpu

    rng = np.random.default_rng()
    pos, vel = random_cloud(rng, 3001, 14.0, speed=1.0)
    fallen_y = float(np.quantile(pos[:, 1], 0.1))
    gpu = BallsGpu(pos, vel, np.zeros_like(pos), "grid", 128, fallen_y=fallen_y)
    gpu.partners.fill(-7)
    gpu.count.fill(12345)
    result = gpu.proximity_pass(_NoTimer())
    live = pos[:, 1] >= fallen_y
    assert result.fallen == (~live).sum() > 0 and gpu.n == live.sum()
    spos, svel, _ = gpu.host_state()
    ids = gpu.ids[: gpu.n].get()
    np.testing.assert_array_equal(np.sort(ids), np.flatnonzero(live))
    np.testing.assert_array_equal(spos, pos[ids])
    count, slots = gpu.host_lists()
    cpu_count, cpu_slots = lists_from_pairs(brute_force_pairs(spos, svel), gpu.n)
    assert not differing_items(count, slots, cpu_count, cpu_slots).any()


def test_grid_keeps_every_pair_of_overflowing_lists():
    rng = np.random.default_rng()
    pos, vel = random_cloud(rng, 2500, 5.0, speed=1.0)  # ~100 partners per ball, capacity starts at 16
    gpu, _, (spos, svel, _), count, slots = gpu_pass(pos, vel, "grid", 64)
    assert count.max() > 16
    cpu_count, cpu_slots = lists_from_pairs(brute_force_pairs(spos, svel), gpu.n)
    assert not differing_items(count, slots, cpu_count, cpu_slots).any()


def test_step_matches_the_cpu_twin_from_a_crowded_state():
    """One step from a crowded state (many contacts, lists longer than a batch of partners, so the
    eagerly loaded first batch and the later ones both count; balls on the trough, some with their
    centres within rounding of its shell, where the contact's normal rests on the difference of two near
    numbers), every output written over poison, equals the CPU twin's bit for bit: the twin computes each
    contact with the same float32 operations, and given the pairs in the order of the grid's lists
    (ascending partners) it sums each ball's contacts in the GPU's order."""
    import cupy

    from sim.balls.gpu import BallsGpu

    rng = np.random.default_rng()
    pos, vel = random_cloud(rng, 4000, 15.0, speed=3.0)
    pos[:, 1] -= 26.0  # the lowest balls rest against the trough bottom (y = -40), or lie across its shell
    omega = np.zeros_like(pos)
    omega[:, :3] = rng.normal(0.0, 2.0, (pos.shape[0], 3))
    settings, trough = world.BallSettings(friction=0.5), world.TroughWalls()
    gpu = BallsGpu(pos, vel, omega, "grid", 128, fallen_y=-1e30)
    gpu.proximity_pass(_NoTimer())
    before = gpu.host_state()
    count, slots = gpu.host_lists()
    assert count.max() > 4, "some lists span several batches of partners"
    for spare in gpu._spare:
        spare.fill(np.nan)  # poison: every output written
    gpu.step(settings, trough, settings.zeta(), world.DT)
    cupy.cuda.Device().synchronize()
    got = gpu.host_state()
    # HostBalls takes float32 arrays as they are and the twin steps them in place: give it copies,
    # so that ``before`` stays the state the step started from
    host = pipeline_cpu.HostBalls(*(a.copy() for a in before))
    host.pairs = pairs_of(count, slots)
    pipeline_cpu.step(host, settings, trough, world.DT)
    free_fall = before[1][:, :3] + np.float32(world.DT) * np.array([0.0, -settings.gravity, 0.0], np.float32)
    kicked = np.abs(host.vel[:, :3] - free_fall).max(axis=1) > 0.01
    assert kicked.mean() > 0.5, "contacts change most balls' velocities"
    radial = np.hypot(before[0][:, 0], before[0][:, 1]).astype(np.float64)
    assert (np.abs(radial - trough.radius) < 0.05).any(), "some centres lie near the shell"
    for have, want in zip(got, (host.pos, host.vel, host.omega), strict=True):
        np.testing.assert_array_equal(have[:, :3], want[:, :3])


def pairs_of(count, slots):
    """The pass's lists as (item, partner) rows, each pair once (the CPU twin's pair list)."""
    mine, theirs = pairs_from_lists(count, slots)
    return np.column_stack([mine, theirs]).astype(np.int64)


def test_scene_runs_two_passes_from_a_landing_state_and_verifies():
    """A scene from a landing state (contacts everywhere), two passes with verification on: the
    the pass's pairs are the CPU's, nothing marked, every ball finite."""
    from sim import create_scene

    start = create_scene("balls", preset="t", backend="gpu")
    for _ in range(30):  # into the landing
        start.advance_frame()
    pos, vel, _ = start.state()
    scene = create_scene("balls", preset="t", backend="gpu")
    scene.set_state(pos, vel)
    scene.checks.set_on(True)
    for _ in range(2):
        scene.advance_frame()
    assert scene.checks.verification.passes_checked == 2 and scene.checks.verification.differing == 0
    for a in scene.state():
        assert np.isfinite(a).all()


def spun_cloud(rng, n):
    """A cloud with a random spin on every ball (the device keeps the spin's x in vel.w)."""
    pos, vel = random_cloud(rng, n, 12.0, speed=3.0)
    omega = np.zeros_like(pos)
    omega[:, :3] = rng.normal(0.0, 2.0, (n, 3))
    return pos, vel, omega


@pytest.mark.parametrize("variant", ["grid", "global"])
def test_the_40_byte_state_keeps_every_ball_through_a_reordering_pass(variant):
    """Loaded, reordered by a pass (grid_scatter or reorder) over poisoned spare buffers and read back,
    each ball (by its id) has its position, velocity and spin bit for bit."""
    from sim.balls.gpu import BallsGpu

    rng = np.random.default_rng()
    pos, vel, omega = spun_cloud(rng, 3000)
    gpu = BallsGpu(pos, vel, omega, variant, 128, fallen_y=-1e30)
    for have, want in zip(gpu.host_state(), (pos, vel, omega), strict=True):
        np.testing.assert_array_equal(have[:, :3], want[:, :3])
    for spare in gpu._spare:
        spare.fill(np.nan)
    gpu.proximity_pass(_NoTimer())
    ids = gpu.ids.get()
    assert not (ids == np.arange(ids.size)).all(), "the pass reordered the balls"
    got = gpu.host_state()
    np.testing.assert_array_equal(got[0], pos[ids])
    np.testing.assert_array_equal(got[1][:, :3], vel[ids, :3])
    np.testing.assert_array_equal(got[2][:, :3], omega[ids, :3])
    at = np.array([0, 17, ids.size - 1])
    for have, want in zip(gpu.rows(at), got, strict=True):
        np.testing.assert_array_equal(have, want[at])


def test_the_step_before_a_pass_takes_the_bounds_grid_bounds_would():
    """step(before_pass=True) leaves the bounds of the state it wrote (fallen balls left out) that
    grid_bounds computes from that state, int for int; the pass then uses them and finds the
    brute-force pairs."""
    from sim.balls.gpu import STEP_BLOCK, BallsGpu

    rng = np.random.default_rng()
    pos, vel, omega = spun_cloud(rng, 5000)
    pos[:, 1] -= 20.0
    fallen_y = float(np.quantile(pos[:, 1], 0.05))  # the lowest balls count as fallen
    settings, trough = world.BallSettings(friction=0.5), world.TroughWalls()
    gpu = BallsGpu(pos, vel, omega, "grid", 128, fallen_y=fallen_y)
    gpu.proximity_pass(_NoTimer())
    gpu.step(settings, trough, settings.zeta(), world.DT, before_pass=True)
    fused = gpu._bounds.get()
    reference = gpu._bounds_start.copy()
    gpu.kernels["grid_bounds"](
        (4,), (STEP_BLOCK,), (gpu.pos, gpu.vel, np.int32(gpu.n), np.float32(fallen_y), reference)
    )
    np.testing.assert_array_equal(fused, reference.get())
    assert gpu._bounds_of is gpu.pos
    gpu.proximity_pass(_NoTimer())
    assert gpu._bounds_of is None
    spos, svel, _ = gpu.host_state()
    count, slots = gpu.host_lists()
    want_count, want_slots = lists_from_pairs(brute_force_pairs(spos, svel), gpu.n)
    assert not differing_items(count, slots, want_count, want_slots).any()


def test_a_grid_pass_that_searches_twice_keeps_every_ball_and_pair():
    """The scatter moves the positions, the first search the velocities, spins and ids; lists that
    overflow are searched again over the sorted state. Every ball (by id) keeps its state bit for bit,
    over poisoned spare buffers, and the lists hold the brute-force pairs."""
    from sim.balls.gpu import BallsGpu

    rng = np.random.default_rng()
    pos, vel, omega = spun_cloud(rng, 2500)
    pos[:, :3] = rng.uniform(-5.0, 5.0, (pos.shape[0], 3))  # ~100 partners a ball: the lists overflow
    gpu = BallsGpu(pos, vel, omega, "grid", 64, fallen_y=-1e30)
    for spare in gpu._spare:
        spare.fill(np.nan)
    gpu.proximity_pass(_NoTimer())
    assert gpu.capacity > 16, "searched again with room"
    ids = gpu.ids.get()
    got = gpu.host_state()
    for have, want in zip(got, (pos, vel, omega), strict=True):
        np.testing.assert_array_equal(have[:, :3], want[ids, :3])
    count, slots = gpu.host_lists()
    want_count, want_slots = lists_from_pairs(brute_force_pairs(got[0], got[1]), gpu.n)
    assert not differing_items(count, slots, want_count, want_slots).any()
