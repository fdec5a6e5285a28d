"""CS 267 particles on the GPU against the CPU (run with pytest -m gpu on a GPU machine)."""

import io

import numpy as np
import pytest

from sim import create_scene
from sim.particles.output import TrajectoryWriter, check
from sim.particles.world import SAVE_EVERY

pytestmark = pytest.mark.gpu
VARIANTS = ["plain", "tiled", "blockscan"]


def trajectory(tmp_path, name, **kwargs):
    scene = create_scene("particles", n=1000, seed=1, **kwargs)
    path = tmp_path / name
    with open(path, "w") as f:
        writer = TrajectoryWriter(f, scene.n, scene.size)
        for step in range(1000):
            scene.step()
            if step % SAVE_EVERY == 0:
                writer.frame(*scene.host_positions())
    return path, scene


@pytest.mark.parametrize("variant", VARIANTS)
def test_course_check_passes_against_the_cpu(tmp_path, variant):
    cpu, _ = trajectory(tmp_path, "cpu.out")
    gpu, scene = trajectory(tmp_path, "gpu.out", backend="gpu", variant=variant)
    early, overall, passed = check(str(cpu), str(gpu))
    assert passed, (early, overall)
    stats = scene.stats_per_step
    assert 0.6 < stats.absmin < 0.9 and 0.9 < stats.absavg < 1.0


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("n", [1, 777, 20_000])
def test_binning_keeps_every_particle_once_in_bin_order(variant, n):
    scene = create_scene("particles", n=n, seed=3, backend="gpu", variant=variant, block=128)
    for _ in range(7):
        scene.step()
    g = scene.gpu
    x, y, _, _, ids = (a.get() for a in g.state)
    assert sorted(ids.tolist()) == list(range(n)), "each particle exactly once"
    bx = np.minimum((x * g.inv_width).astype(np.int64), g.nb - 1)
    by = np.minimum((y * g.inv_width).astype(np.int64), g.nb - 1)
    bins = by * g.nb + bx
    assert (np.diff(bins) >= 0).all(), "bins contiguous and in order"
    start = g.start.get()
    counts = np.bincount(bins, minlength=g.bins)
    np.testing.assert_array_equal(start, np.concatenate([[0], np.cumsum(counts)]))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("block", [32, 128, 256, 1024])
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
        cpu.step()
        gpu.step()
    gx, gy = gpu.host_positions()
    assert np.hypot(cpu.x - gx, cpu.y - gy).mean() < 1e-5


def test_backend_switch_keeps_the_particles():
    scene = create_scene("particles", n=2000, seed=9)
    for _ in range(5):
        scene.step()
    before = (scene.x.copy(), scene.y.copy())
    scene.set_backend("gpu")
    np.testing.assert_array_equal(scene.host_positions()[0], before[0])
    scene.step()
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
    scene.set_verify(True)
    for _ in range(3):
        scene.step()
    report = scene.verification
    assert report.differing == 0 and report.passes_checked == 3 and report.checked == 5000


def test_verification_catches_a_wrong_step():
    scene = create_scene("particles", n=5000, seed=4, backend="gpu")
    scene.set_verify(True)
    scene.step()
    g = scene.gpu
    g.size = g.size * 0.9  # a planted fault: the kernel reflects off the wrong walls
    scene.step()
    assert scene.verification.differing > 0
    red = (scene.colors("speed") == (1, 0, 0, 1)).all(axis=1)
    np.testing.assert_array_equal(red, scene.mismatch)


def test_a_frame_replayed_as_a_cuda_graph_steps_like_the_eager_frames():
    eager = create_scene("particles", n=20000, seed=6, backend="gpu")
    graphed = create_scene("particles", n=20000, seed=6, backend="gpu")
    graphed.set_toggle("graph", True)
    for _ in range(4):
        eager.advance_frame()
        graphed.advance_frame()
    assert graphed._graph.replays == 3 and graphed.steps == eager.steps == 40
    for a, b in zip(eager.host_positions(), graphed.host_positions(), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * eager.size)
    assert graphed.stats()["absavg"] == pytest.approx(eager.stats()["absavg"], rel=1e-12)
