"""The balls GPU backend against its CPU twins (run with pytest -m gpu on a GPU machine)."""

import pathlib

import numpy as np
import pytest
from test_balls_proximity import all_pairs_brute_force as brute_force_pairs
from test_balls_proximity import fast_cloud, splashed_cloud

from sim import create_scene
from sim.balls import grid_cpu, grid_setup_cpu, proximity_cpu, world
from sim.balls.kernels import grid_max_cells
from sim.gpu import cuda
from sim.pairs import differing_items as _differing_balls
from sim.pairs import lists_from_pairs as _lists_from_pairs

pytestmark = pytest.mark.gpu

T = world.PAIR_LIFETIME
M = world.PROXIMITY_MARGIN


def random_cloud(rng, n, box, speed=30.0):
    pos = np.empty((n, 4), np.float32)
    pos[:, :3] = rng.uniform(-box, box, (n, 3))
    pos[:, 3] = rng.uniform(0.5, 1.5, n)
    vel = np.zeros((n, 4), np.float32)
    vel[:, :3] = rng.normal(0.0, speed, (n, 3))
    return pos, vel


def gpu_pass(pos, vel, variant, block):
    """Run one GPU pass on fresh device state with poisoned outputs; return its state and lists."""
    import cupy

    from sim.balls.gpu import BallsGpu

    gpu = BallsGpu(pos, vel, np.zeros_like(pos), variant, block, fallen_y=-1e30)
    gpu.partners.fill(-7)
    gpu.count.fill(12345)
    result = gpu.proximity_pass(_NoTimer())
    cupy.cuda.Device().synchronize()
    state = gpu.host_state()
    count, slots = gpu.host_lists()
    assert (count != 12345).all(), "every ball's count written"
    listed = slots[np.arange(slots.shape[1])[None, :] < count[:, None]]
    assert ((listed >= 0) & (listed < gpu.n)).all(), "every listed partner written and in range"
    return gpu, result, state, count, slots


class _NoTimer:
    from contextlib import nullcontext as _null

    def stage(self, name):
        return self._null()


VARIANT_BLOCKS = [(v, b) for v in world.PROXIMITY_VARIANTS for b in (32, 96, 128, 256, 1024)]


@pytest.mark.parametrize("variant, block", VARIANT_BLOCKS)
@pytest.mark.parametrize("n, box", [(1, 1.0), (777, 8.0), (3001, 25.0)])
def test_variant_equals_its_cpu_twin_on_random_clouds(variant, block, n, box):
    rng = np.random.default_rng()
    pos, vel = random_cloud(rng, n, box)
    gpu, result, (spos, svel, _), count, slots = gpu_pass(pos, vel, variant, block)
    if variant == "grid":
        twin, tests, found = grid_cpu.grid_pass(spos, svel, T, M)
        expected = brute_force_pairs(spos, svel)
        assert found == expected.shape[0], "the grid twin finds the brute-force answer"
    else:
        twin, tests, found = proximity_cpu.proximity_pass(spos, svel, T, M)
        assert result.tests == tests, "z-sweep: same windows, same tests"
    cpu_count, cpu_slots = _lists_from_pairs(twin, gpu.n)
    assert not _differing_balls(count, slots, cpu_count, cpu_slots).any()
    assert result.pairs == found
    assert np.sort(spos[:, 0]).tolist() == np.sort(pos[:, 0]).tolist(), "reorder moved every ball once"


@pytest.mark.parametrize("variant", world.PROXIMITY_VARIANTS)
@pytest.mark.parametrize("preset, tests, pairs", [("T", 29155, 1666), ("t", 746025, 15190)])
def test_lattice_first_pass_is_exact(variant, preset, tests, pairs):
    scene = create_scene("balls", preset=preset, backend="gpu", variant=variant, block=64)
    scene.run_frame(1)
    assert scene.pass_log[0][1] == pairs
    if variant != "grid":
        assert scene.pass_log[0][0] == tests


def splashed_and_fast(rng, heap, far_pairs, fast):
    pos, vel = splashed_cloud(rng, heap, far_pairs)
    fast_pos, fast_vel = fast_cloud(rng, heap // 4, fast)
    return np.concatenate([pos, fast_pos]), np.concatenate([vel, fast_vel])


CLOUDS = {
    "splashed": lambda rng: splashed_cloud(rng, 3000, 12),
    "splashed, strided sample": lambda rng: splashed_cloud(rng, 9000, 40),
    "fast": lambda rng: fast_cloud(rng, 3000, 8),
    "fast, strided sample": lambda rng: fast_cloud(rng, 12000, 20),  # ~7 fast in the sample: at most 256
    "fast in a dense heap": lambda rng: fast_cloud(rng, 2500, 8, box=5.0),  # ~100 partners: the lists overflow
    "splashed and fast": lambda rng: splashed_and_fast(rng, 6000, 20, 12),
}


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_grid_is_its_twins_and_lists_every_pair(cloud):
    """Balls flung far from the heap, a few much faster than the rest, or both: the GPU chooses the grid its
    twin chooses (the same sample: every ball below 4096, a stride above), box, cells and split, and lists
    every pair the twin finds: slow with slow in the fine cells, every pair with a fast ball through the
    coarse ones."""
    rng = np.random.default_rng()
    pos, vel = CLOUDS[cloud](rng)
    gpu, result, (spos, svel, _), count, slots = gpu_pass(pos, vel, "grid", 128)
    grid = gpu.grid.get()
    floats = grid.view(np.float32)
    shape = grid_setup_cpu.grid_shape(pos, vel, T, M, grid_max_cells(len(pos)))
    assert floats[[0, 1, 2, 3, 10, 11]].tolist() == [*shape.origin.tolist(), shape.cell, shape.fast2, shape.coarse]
    assert grid[4:7].tolist() == shape.dims.tolist() and grid[12:15].tolist() == shape.coarse_dims.tolist()
    assert shape.split == ("fast" in cloud), "split where a few balls are fast"
    assert (shape.origin > pos[:, :3].min(axis=0)).all() == ("splashed" in cloud), "trimmed where splashed"
    twin, tests, found = grid_cpu.grid_pass(spos, svel, T, M)
    cpu_count, cpu_slots = _lists_from_pairs(twin, gpu.n)
    assert not _differing_balls(count, slots, cpu_count, cpu_slots).any()
    assert result.pairs == found
    if "dense" in cloud:
        assert gpu.capacity >= count.max() > 16, "the lists overflowed and were searched again"


def test_overflowing_lists_still_hold_every_pair():
    rng = np.random.default_rng()
    pos, vel = random_cloud(rng, 2500, 5.0, speed=1.0)  # ~100 partners per ball, capacity starts at 16
    for variant in world.PROXIMITY_VARIANTS:
        gpu, result, (spos, svel, _), count, slots = gpu_pass(pos, vel, variant, 128)
        assert gpu.capacity >= count.max() > 16
        expected = (
            brute_force_pairs(spos, svel) if variant == "grid" else proximity_cpu.proximity_pass(spos, svel, T, M)[0]
        )
        cpu_count, cpu_slots = _lists_from_pairs(expected, gpu.n)
        assert not _differing_balls(count, slots, cpu_count, cpu_slots).any(), variant


def test_verification_catches_a_planted_wrong_margin():
    good = create_scene("balls", preset="t", backend="gpu")
    good.checks.set_on(True)
    good.run_frame(1)
    assert good.checks.verification.differing == 0 and good.checks.verification.passes_checked == 1
    with cuda.planted("sim/balls/proximity.cu", "-DPLANT_MARGIN=1.0f"):
        planted = create_scene("balls", preset="t", backend="gpu")
    planted.checks.set_on(True)
    planted.run_frame(1)
    report = planted.checks.verification
    assert report.differing > 1000 and report.passes_mismatched == 1
    assert report.details["pairs on the GPU"] < report.details["pairs on the CPU"]
    np.testing.assert_array_equal(planted.view("speed").mask, planted.checks.mismatch)  # drawn red


def test_verification_on_the_cpu_backend_with_cuda_proximity():
    scene = create_scene("balls", preset="T", backend="cpu", variant="shared")
    assert scene.gpu_kernels_run()
    scene.checks.set_on(True)
    for _ in range(3):
        scene.advance_frame()
    assert scene.checks.verification.passes_checked == 3 and scene.checks.verification.differing == 0


def test_trajectories_agree():
    """Same state, 36 steps (six passes) on each backend: positions agree to a tolerance.

    Both integrate the same float32 model without fused multiply-adds; they differ only in the
    summation order of contact forces (pair order on the CPU, per ball on the GPU), i.e. relative
    rounding of ~1e-7 per step, which contacts amplify. 1e-3 of a radius is far above
    that and far below any real disagreement (a missed contact moves a ball by ~0.1 r).
    """
    cpu = create_scene("balls", preset="t")
    for _ in range(40):  # into the landing, where contacts are many
        cpu.advance_frame()
    pos, vel, omega = cpu.state()
    gpu = create_scene("balls", preset="t", backend="gpu")
    for scene in (cpu, gpu):
        scene.set_state(pos, vel)
    for _ in range(6):
        cpu.advance_frame()
        gpu.advance_frame()
    assert cpu.n == gpu.n == pos.shape[0]
    on_gpu = np.empty_like(pos)
    on_gpu[gpu.gpu.ids.get()] = gpu.state()[0]  # the GPU reorders balls; ids say where each went
    error = np.abs(cpu.state()[0][:, :3] - on_gpu[:, :3]).max()
    assert error < 1e-3 * world.BENCH_RADIUS, error


def test_backend_switch_keeps_the_state():
    scene = create_scene("balls", preset="T")
    for _ in range(10):
        scene.advance_frame()
    before = scene.state()[0]
    scene.set_backend("gpu")
    assert scene.backend == "gpu" and scene.steps == 60
    np.testing.assert_array_equal(scene.state()[0], before)
    for _ in range(10):
        scene.advance_frame()
    assert np.isfinite(scene.positions()).all()
    moved = scene.state()[0]
    scene.set_backend("cpu")
    np.testing.assert_array_equal(scene.pos, moved)
    scene.advance_frame()
    assert scene.steps == 126


@pytest.mark.parametrize("preset", ["drip", "T", "t", "block"])
def test_presets_run_on_the_gpu(preset):
    scene = create_scene("balls", preset=preset, backend="gpu", n=3000 if preset in ("drip", "block") else None)
    for _ in range(30):
        scene.advance_frame()
    assert scene.n > 0 and np.isfinite(scene.positions()).all()
    scene.timer.flush()
    assert scene.timer.median("forces+integrate") > 0


def test_block_colours_follow_the_block_size():
    scene = create_scene("balls", preset="T", backend="gpu", block=32)
    scene.run_frame(1)
    small = scene.view("block").host()[1]
    scene.knobs.set_block(256)
    scene.run_frame(1)
    large = scene.view("block").host()[1]
    assert len(np.unique(small[:256])) == 8, "eight blocks of 32 in the first 256 balls"
    assert len(np.unique(large[:256])) == 1, "one block of 256"


def test_too_many_balls_keeps_the_scene(monkeypatch):
    import sim.balls.gpu as gpu_module

    scene = create_scene("balls", preset="T", backend="gpu")
    monkeypatch.setattr(gpu_module, "BYTES_PER_BALL", 10**9)
    with pytest.raises(MemoryError, match="GPU memory"):
        scene.load_preset("block", 100_000)
    assert scene.preset == "T" and scene.n == 1715
    scene.advance_frame()


def test_a_kernel_that_does_not_compile_disables_the_gpu_not_the_scene():
    from sim.gpu.backend import BackendUnavailable

    scene = create_scene("balls", preset="T")
    with (
        cuda.planted("sim/balls/proximity.cu", "-DPLANT_MARGIN=("),
        pytest.raises(BackendUnavailable, match=r"sim/balls/proximity\.cu\(\d+\)"),
    ):
        scene.set_backend("gpu")
    assert scene.backend == "cpu" and "gpu" not in scene.supported_backends
    assert "proximity.cu" in scene.gpu_reason
    scene.advance_frame()
    assert scene.steps == 6


def test_a_failed_compile_on_the_gpu_moves_the_state_to_the_cpu():
    from sim.gpu.backend import BackendUnavailable

    scene = create_scene("balls", preset="T", backend="gpu")
    for _ in range(5):
        scene.advance_frame()
    before = scene.state()[0]
    broken = pathlib.Path(__file__).parent / "data" / "proximity.cu"
    with (
        cuda.replaced_source("sim/balls/proximity.cu", broken),
        pytest.raises(BackendUnavailable, match=r"tests/data/proximity\.cu\(\d+\)"),
    ):
        scene.knobs.set_variant("shared")
    assert scene.backend == "cpu" and scene.gpu_reason
    np.testing.assert_array_equal(np.sort(scene.pos, axis=0), np.sort(before, axis=0))
    scene.advance_frame()
    assert scene.n == 1715


@pytest.mark.parametrize("mode", ["speed", "height", "pairs", "uniform", "block"])
def test_points_kernel_matches_its_numpy_twin(mode):
    """render.cu writes positions and the quantity of each mode as sim.framework.points and render_cpu.py do."""
    import cupy

    scene = create_scene("balls", preset="t", backend="gpu", block=64)
    for _ in range(20):
        scene.advance_frame()
    view = scene.view(mode)
    dtype = cupy.int32 if view.categorical else cupy.float32
    pos = cupy.full((scene.n, 4), np.nan, cupy.float32)
    quantity = cupy.full(scene.n, -1, dtype)
    view.write(pos, quantity)
    expected = cupy.empty(scene.n, dtype)
    scene.fill_quantity(mode, cupy, expected)
    np.testing.assert_array_equal(pos.get(), scene.gpu.pos[: scene.n].get())
    np.testing.assert_array_equal(quantity.get(), expected.get())
