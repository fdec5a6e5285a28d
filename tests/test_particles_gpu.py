"""CS 267 particles on the GPU against the CPU (run with pytest -m gpu on a GPU machine)."""

import io

import numpy as np
import pytest

from sim import create_scene
from sim.particles import binning_cpu, pipeline_cpu, world
from sim.particles.kernels import VARIANTS
from sim.particles.output import TrajectoryWriter, check
from sim.particles.world import SAVE_EVERY

pytestmark = pytest.mark.gpu


def trajectory(path, **kwargs):
    scene = create_scene("particles", n=1000, seed=1, **kwargs)
    with open(path, "w") as f:
        writer = TrajectoryWriter(f, scene.n, scene.size)
        for step in range(1000):
            scene.run_frame(1)
            if step % SAVE_EVERY == 0:
                writer.frame(*scene.host_positions())
    return path, scene


@pytest.fixture(scope="module")
def cpu_trajectory(tmp_path_factory):
    return trajectory(tmp_path_factory.mktemp("cpu") / "cpu.out")[0]


@pytest.mark.parametrize("variant", VARIANTS)
def test_course_check_passes_against_the_cpu(tmp_path, cpu_trajectory, variant):
    cpu = cpu_trajectory
    gpu, scene = trajectory(tmp_path / "gpu.out", backend="gpu", variant=variant)
    early, overall, passed = check(str(cpu), str(gpu))
    print(f"course check {variant}: early {early:.3g} overall {overall:.3g}")  # the margin, with -s
    assert passed, (early, overall)
    stats = scene.stats_per_step
    assert 0.6 < stats.absmin < 0.9 and 0.9 < stats.absavg < 1.0


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("n", [1, 777, 20_000])
def test_binning_keeps_every_particle_once_in_bin_order(variant, n):
    scene = create_scene("particles", n=n, seed=3, backend="gpu", variant=variant, block=128)
    for _ in range(7):
        scene.run_frame(1)
    g = scene.gpu
    g.load_state(*g.host_state())  # binned afresh: bin_order holds
    order = g.bin_order.get()
    assert sorted(order.tolist()) == list(range(n)), "each slot read exactly once"
    x, y, _, _, ids = (a.get()[order] for a in g.state)
    assert sorted(ids.tolist()) == list(range(n)), "each particle exactly once"
    bx = np.minimum((x * g.inv_width).astype(np.int64), g.nb - 1)
    by = np.minimum((y * g.inv_width).astype(np.int64), g.nb - 1)
    bins = by * g.nb + bx
    assert (np.diff(bins) >= 0).all(), "bins contiguous and in order"
    start = g.start.get()
    counts = np.bincount(bins, minlength=g.bins)
    np.testing.assert_array_equal(start, np.concatenate([[0], np.cumsum(counts)]))
    assert not g.count.get().any(), "the counts cleared for the next binning (by the scan)"


@pytest.mark.parametrize("block", [32, 128, 256, 1024])
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_follows_the_cpu_for_50_steps(variant, block):
    seed = int(np.random.default_rng().integers(1, 1 << 30))
    cpu = create_scene("particles", n=3000, seed=seed)
    gpu = create_scene("particles", n=3000, seed=seed, backend="gpu", variant=variant, block=block)
    for _ in range(5):
        cpu.advance_frame()
        gpu.advance_frame()
    gx, gy = gpu.host_positions()
    distance = np.hypot(cpu.x - gx, cpu.y - gy).mean()
    assert distance < 3e-7, distance


def test_fp32_stays_close_for_a_few_steps():
    cpu = create_scene("particles", n=3000, seed=5)
    gpu = create_scene("particles", n=3000, seed=5, backend="gpu", precision="fp32")
    for _ in range(10):
        cpu.run_frame(1)
        gpu.run_frame(1)
    gx, gy = gpu.host_positions()
    assert np.hypot(cpu.x - gx, cpu.y - gy).mean() < 1e-5


def test_backend_switch_keeps_the_particles():
    scene = create_scene("particles", n=2000, seed=9)
    for _ in range(5):
        scene.run_frame(1)
    before = (scene.x.copy(), scene.y.copy())
    scene.set_backend("gpu")
    np.testing.assert_array_equal(scene.host_positions()[0], before[0])
    scene.run_frame(1)
    scene.set_backend("cpu")
    assert scene.n == 2000 and np.isfinite(scene.x).all()


def test_output_file_is_written_in_particle_order(tmp_path):
    scene = create_scene("particles", n=500, seed=2, backend="gpu")
    buffer = io.StringIO()
    writer = TrajectoryWriter(buffer, scene.n, scene.size)
    writer.frame(*scene.host_positions())
    first = np.array([[float(v) for v in ln.split()] for ln in buffer.getvalue().splitlines()[1:501]])
    cpu = create_scene("particles", n=500, seed=2)
    np.testing.assert_allclose(first, np.column_stack([cpu.x, cpu.y]), rtol=1e-5)


@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_verification_agrees_with_a_correct_gpu_step(precision):
    scene = create_scene("particles", n=5000, seed=4, backend="gpu", precision=precision)
    scene.checks.set_on(True)
    for _ in range(3):
        scene.run_frame(1)
    report = scene.checks.verification
    assert report.differing == 0 and report.passes_checked == 3 and report.checked == 5000


def test_verification_catches_a_wrong_step():
    scene = create_scene("particles", n=5000, seed=4, backend="gpu")
    scene.checks.set_on(True)
    scene.run_frame(1)
    g = scene.gpu
    g.size = g.size * 0.9  # a planted fault: the kernel reflects off the wrong walls
    scene.run_frame(1)
    assert scene.checks.verification.differing > 0
    np.testing.assert_array_equal(scene.view("speed").mask, scene.checks.mismatch)  # drawn red


def test_a_frame_replayed_as_a_cuda_graph_steps_like_the_eager_frames():
    eager = create_scene("particles", n=20000, seed=6, backend="gpu")
    graphed = create_scene("particles", n=20000, seed=6, backend="gpu")
    graphed.controls.set_toggle("graph", True)
    for _ in range(4):
        eager.advance_frame()
        graphed.advance_frame()
    assert graphed._graph.replays == 3 and graphed.steps == eager.steps == 40
    for a, b in zip(eager.host_positions(), graphed.host_positions(), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * eager.size)
    assert graphed.stats()["absavg"] == pytest.approx(eager.stats()["absavg"], rel=1e-12)


def _poison(g) -> None:
    """Every array the next step writes, filled with values no correct step leaves behind."""
    other = g.buffers[1 - g.cur]
    other[0].fill(np.nan)
    other[1].fill(np.nan)
    g.bin.fill(-1)  # (written when the step bins afresh)
    g.offset.fill(-1)


# every variant at the default block, and plain at 128 (the 1M candidate the perf script measures)
@pytest.mark.parametrize("variant, block", [(v, 256) for v in VARIANTS] + [("plain", 128)])
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_each_step_equals_the_cpu_twin_from_fresh_random_states(variant, block, precision):
    """Random positions (clumped, so that many pairs interact, some closer than min_r) and velocities;
    each GPU step against binning_cpu's step from the same state, the GPU's outputs poisoned first."""
    from sim.gpu.timing import NULL_TIMER
    from sim.particles.gpu import ParticlesGpu

    rng = np.random.default_rng()
    n = int(rng.integers(2000, 6000))
    size = world.box_size(n)
    x = np.concatenate([rng.uniform(0, size, n - 200), rng.uniform(0.4, 0.42, 200) * size])
    y = np.concatenate([rng.uniform(0, size, n - 200), rng.uniform(0.6, 0.62, 200) * size])
    vx, vy = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    if precision == "fp32":
        x, y, vx, vy = (a.astype(np.float32).astype(np.float64) for a in (x, y, vx, vy))
    g = ParticlesGpu(x, y, vx, vy, size, variant, precision, block, stats=True)
    tolerance = (1e-12 if precision == "fp64" else 1e-5) * size  # as the scene's verification
    for _ in range(3):
        before = g.sorted_host_state()
        bx, by, bvx, bvy, ids = before
        cpu = pipeline_cpu.stepped_copy(bx, by, bvx, bvy, size, binning_cpu.bin_count(size))
        _poison(g)
        g.step(NULL_TIMER)
        ax, ay, avx, avy, aids = g.sorted_host_state()
        assert sorted(aids.tolist()) == list(range(n))
        expect = np.empty((4, n))
        expect[:, ids] = np.stack([cpu.x, cpu.y, cpu.vx, cpu.vy])
        got = np.empty((4, n))
        got[:, aids] = np.stack([ax, ay, avx, avy])
        assert np.isfinite(got).all()
        # a pair near min_r flings a particle across the box and off several walls in one step: its
        # position is then rounded at the size of the distance it travelled
        travelled = np.hypot(*expect[2:]) * world.DT
        assert (np.hypot(*(got[:2] - expect[:2])) < tolerance * np.maximum(1.0, travelled / size)).all()
        speed = np.abs(expect[2:]).max()
        np.testing.assert_allclose(got[2:], expect[2:], rtol=0, atol=(1e-9 if precision == "fp64" else 1e-3) * speed)


@pytest.mark.parametrize("block, stats", [(32, False), (128, False), (128, True), (1024, True)])
def test_tiled_steps_like_plain_when_it_copies_three_runs(block, stats):
    """200000 particles: a bin row holds about 500 slots, more than a block's copy holds whole, so each tiled
    block copies the three runs around its particles, one a bin row, and reads what lies outside from memory.
    The copy only caches what plain reads: each step, through the index and by row, leaves the state plain
    leaves, but for the order in which the binning's atomics put a bin's particles (the sums' order)."""
    from sim.gpu.timing import NULL_TIMER
    from sim.particles.gpu import ParticlesGpu
    from sim.particles.init import init_2020

    n = 200_000
    size = world.box_size(n)
    x, y, vx, vy = init_2020(n, int(np.random.default_rng().integers(1, 1 << 30)))
    plain, tiled = (
        ParticlesGpu(x, y, vx, vy, size, variant, "fp64", block, stats=stats) for variant in ("plain", "tiled")
    )
    for _ in range(25):  # two or three binnings
        _poison(tiled)
        plain.step(NULL_TIMER)
        tiled.step(NULL_TIMER)
        for a, b in zip(plain.host_state(), tiled.host_state(), strict=True):
            np.testing.assert_allclose(b, a, rtol=0, atol=1e-12 * size)
    assert not np.array_equal(tiled.host_state()[0], x), "the particles moved"


def test_texture_variant_names_the_texel_limit(monkeypatch):
    from sim.particles import gpu as particles_gpu

    monkeypatch.setattr(particles_gpu, "texture_limit", lambda device: 100)
    with pytest.raises(ValueError, match="at most 100 particles"):
        create_scene("particles", n=1000, seed=1, backend="gpu", variant="texture")
