"""The balls grid search's speed-bound prefilter and the step's designs against the CPU twins and
each other: the prefilter never drops a pair, every step design takes the same step bit for bit
(run with pytest -m gpu)."""

import numpy as np
import pytest
from test_balls_gpu import _NoTimer, gpu_pass, random_cloud
from test_balls_proximity import all_pairs_brute_force as brute_force_pairs

from sim.balls import pipeline_cpu, world
from sim.pairs import differing_items, lists_from_pairs, pairs_from_lists

pytestmark = pytest.mark.gpu

T = world.PAIR_LIFETIME
M = world.PROXIMITY_MARGIN


def edge_pairs(rng, count, speed):
    """Pairs flying apart at the fastest relative speed (the prefilter's bound, less its slack), at
    distances within a few ulps of the predicate's edge: where a loose prefilter would drop a pair."""
    pos = np.empty((2 * count, 4), np.float32)
    vel = np.zeros((2 * count, 4), np.float32)
    centre = rng.uniform(-60.0, 60.0, (count, 3))
    axis = rng.normal(size=(count, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    radius = rng.uniform(0.5, 1.5, (count, 2)).astype(np.float32)
    gap = M * (radius[:, 0] + radius[:, 1]) + T * 2 * speed
    gap *= 1 + rng.integers(-8, 9, count) * 6e-8  # a few float32 ulps either side of the edge
    pos[0::2, :3] = centre - 0.5 * gap[:, None] * axis
    pos[1::2, :3] = centre + 0.5 * gap[:, None] * axis
    pos[0::2, 3], pos[1::2, 3] = radius[:, 0], radius[:, 1]
    vel[0::2, :3] = -speed * axis
    vel[1::2, :3] = speed * axis
    return pos, vel


@pytest.mark.parametrize("block", [64, 128])
@pytest.mark.parametrize("cloud", ["slow", "fast", "one fast ball", "edge"])
def test_grid_prefilter_keeps_the_brute_force_pairs(block, cloud):
    rng = np.random.default_rng()
    if cloud == "edge":
        pos, vel = edge_pairs(rng, 2000, 7.0)
    else:
        pos, vel = random_cloud(rng, 3001, 14.0, speed={"slow": 0.5, "fast": 30.0}.get(cloud, 1.0))
        if cloud == "one fast ball":  # the bound is loose for every other pair, still exact
            vel[rng.integers(pos.shape[0]), :3] = 400.0
    gpu, result, (spos, svel, _), count, slots = gpu_pass(pos, vel, "grid", block)
    expected = brute_force_pairs(spos, svel)
    assert result.pairs == expected.shape[0]
    if cloud == "edge":
        assert 0 < expected.shape[0] < pos.shape[0] // 2, "some edge pairs in, some out"
    cpu_count, cpu_slots = lists_from_pairs(expected, gpu.n)
    assert not differing_items(count, slots, cpu_count, cpu_slots).any()


def test_grid_keeps_every_pair_of_overflowing_lists():
    rng = np.random.default_rng()
    pos, vel = random_cloud(rng, 2500, 5.0, speed=1.0)  # ~100 partners per ball, capacity starts at 16
    gpu, _, (spos, svel, _), count, slots = gpu_pass(pos, vel, "grid", 64)
    assert count.max() > 16
    cpu_count, cpu_slots = lists_from_pairs(brute_force_pairs(spos, svel), gpu.n)
    assert not differing_items(count, slots, cpu_count, cpu_slots).any()


def test_step_designs_agree_bit_for_bit_and_with_the_cpu_twin():
    """One step from a crowded state (many contacts, lists longer than a batch of partners, some
    balls on the trough), taken by every step design from the same lists: the same state bit for bit
    (same forces in the same order, --fmad=false everywhere), every output written over poison, and
    the CPU twin agrees to rounding (it sums each pair's forces in pair order)."""
    import cupy

    from sim.balls.pipeline_gpu import BallsGpu

    rng = np.random.default_rng()
    pos, vel = random_cloud(rng, 4000, 15.0, speed=3.0)
    pos[:, 1] -= 26.0  # the lowest balls rest against the trough bottom (y = -40)
    omega = np.zeros_like(pos)
    omega[:, :3] = rng.normal(0.0, 2.0, (pos.shape[0], 3))
    settings, trough = world.BallSettings(friction=0.5), world.Trough()
    step = (settings, trough, settings.zeta(), world.DT)
    gpu = BallsGpu(pos, vel, omega, "grid", 128, fallen_y=-1e30)
    gpu.proximity_pass(_NoTimer())
    before = gpu.host_state()
    count, slots = gpu.host_lists()
    assert count.max() > 4, "some lists span several batches of partners"
    lists = gpu.count.copy(), gpu.partners.copy(), gpu.capacity, gpu.stride
    states = {}
    for design in world.STEP_DESIGNS:
        gpu.set_step_design(design)
        gpu.load(*before)  # the pass's state and lists again
        gpu.count, gpu.partners, gpu.capacity, gpu.stride = lists
        for spare in gpu._spare:
            spare.fill(np.nan)  # poison: every output written
        gpu.step(*step)
        cupy.cuda.Device().synchronize()
        states[design] = gpu.host_state()
    first = states[world.STEP_DESIGNS[0]]
    for design, state in states.items():
        for got, want in zip(state, first, strict=True):
            assert np.isfinite(got).all(), design
            np.testing.assert_array_equal(got, want, err_msg=design)
    host = pipeline_cpu.HostBalls(*before)
    host.pairs = pairs_of(count, slots)
    mine, theirs = host.pairs[:, 0], host.pairs[:, 1]
    pipeline_cpu.step(host, settings, trough, world.DT)
    moved = np.abs(host.pos[:, :3] - before[0][:, :3]).max()
    assert moved > 1e-3, "contacts pushed balls apart"
    fair = ~at_contact_onset(before[0], mine, theirs, trough)
    assert fair.mean() > 0.99
    for got, want in zip(first, (host.pos, host.vel, host.omega), strict=True):
        scale = np.abs(want[:, :3]).max()
        np.testing.assert_allclose(got[fair, :3], want[fair, :3], rtol=0, atol=2e-5 * scale)


def pairs_of(count, slots):
    """The pass's lists as (item, partner) rows, each pair once (the CPU twin's pair list)."""
    mine, theirs = pairs_from_lists(count, slots)
    return np.column_stack([mine, theirs]).astype(np.int64)


def test_scenes_with_every_step_design_run_alike_and_verify():
    """Scenes from one landing state, one per step design: the same balls after two passes, bit for
    bit; verification finds nothing to mark."""
    from sim import create_scene

    start = create_scene("balls", preset="t", backend="gpu")
    for _ in range(30):  # into the landing
        start.advance_frame()
    pos, vel, _ = start.state()
    states = {}
    for design in world.STEP_DESIGNS:
        scene = create_scene("balls", preset="t", backend="gpu", step=design)
        assert scene.gpu.step_design == design
        scene.set_state(pos, vel)
        scene.set_verify(True)
        for _ in range(2):
            scene.advance_frame()
        assert scene.verification.passes_checked == 2 and scene.verification.differing == 0, design
        states[design] = scene.state()
    for design, state in states.items():
        for a, b in zip(state, states["plain"], strict=True):
            np.testing.assert_array_equal(a, b, err_msg=design)


def at_contact_onset(pos, mine, theirs, trough, within=1e-5):
    """Balls with a contact (ball or trough) within ``within`` of its onset. There the damped normal
    force jumps from 0 to 2 zeta w0 m |v_n|, so one rounding (an FMA on the GPU) may decide whether a
    contact acts at all: those balls are compared by the bit-for-bit check between designs only."""
    d = pos[mine, :3].astype(np.float64) - pos[theirs, :3]
    reach = pos[mine, 3].astype(np.float64) + pos[theirs, 3]
    edge = np.abs(np.sqrt((d * d).sum(axis=1)) / reach - 1) < within
    marked = np.zeros(pos.shape[0], bool)
    marked[mine[edge]] = marked[theirs[edge]] = True
    x, y, z = (pos[:, a].astype(np.float64) for a in range(3))
    below = y <= 0
    radial = np.hypot(x, y)
    to_shell = np.where(below, np.abs(radial - trough.radius), np.hypot(np.abs(x) - trough.radius, y))
    z_out = np.maximum(np.maximum(trough.z_min - z, z - trough.z_max), 0)
    to_shell = np.hypot(to_shell, z_out)
    return marked | (np.abs(to_shell / pos[:, 3] - 1) < within)
