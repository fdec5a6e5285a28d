"""The scenes' replaceable stages on a GPU, through the sandbox: each template is right on every default size,
and each planted kernel is caught with the right items named (tests/data/user_kernels)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_user_stages import DATA, STAGES, adapter_of

from sim.gpu import cuda
from sim.registry import SCENES


def run_file(scene: str, stage: str, path: Path, size: int, seed: int = 1):
    from sim.userkernel.sandbox import Sandbox
    from sim.userkernel.source import load

    adapter = adapter_of(scene, stage)
    inputs = adapter.inputs(size, seed)
    box = Sandbox()
    try:
        result = box.run(load(path, SCENES[scene], stage), inputs, adapter.default_block())
    finally:
        box.close()
    expected = adapter.expected(inputs)
    return adapter.compare(inputs, expected, result.outputs), result, expected


@pytest.mark.gpu
@pytest.mark.parametrize(("scene", "stage"), STAGES)
def test_template_is_correct_on_every_default_size(scene, stage):
    declared = SCENES[scene].user_stage(stage)
    for size in adapter_of(scene, stage).sizes():
        found, result, _ = run_file(scene, stage, cuda.source_path(declared.template), size)
        assert found.correct, (size, found.worst[:3])
        assert result.overflow == []


@pytest.mark.gpu
def test_sdh_wrong_bucket_is_caught_at_the_shifted_bins():
    found, _, expected = run_file("sdh", "histogram", DATA / "sdh_wrong_bucket.cu", 1001)
    want = expected["hist"].astype(np.int64)
    shifted = np.concatenate([[0], want[:-1]])
    shifted[-1] += want[-1]
    assert np.flatnonzero(found.mismatch).tolist() == np.flatnonzero(shifted != want).tolist()
    assert found.worst and all(w.label == f"bin {w.index}" for w in found.worst)


@pytest.mark.gpu
def test_sdh_race_loses_counts():
    found, result, expected = run_file("sdh", "histogram", DATA / "sdh_race.cu", 20_000)
    assert found.mismatches > 0
    assert int(result.outputs["hist"].astype(np.int64).sum()) < int(expected["hist"].astype(np.int64).sum())


@pytest.mark.gpu
@pytest.mark.parametrize("planted", ["durbin_wrong_sign.cu", "durbin_missing_term.cu"])
def test_durbin_planted_kernels_are_caught_in_every_system_from_step_one(planted):
    found, _, _ = run_file("durbin", "batched", DATA / planted, 65)
    assert found.mismatch.all() and found.mismatches == 65
    assert found.worst and all(w.label.startswith(f"system {w.index} ") for w in found.worst)
    assert not any(w.label.endswith(" alpha 0") for w in found.worst)  # step 0 (alpha = -r[0]) is right in both


@pytest.mark.gpu
def test_particles_missing_column_is_caught_at_the_particles_it_misses():
    from sim.particles import user_stage
    from sim.particles.world import CUTOFF, MASS, MIN_R

    found, _, _ = run_file("particles", "forces", DATA / "particles_missing_column.cu", 1001)
    adapter = adapter_of("particles", "forces")
    inputs = adapter.inputs(1001, 1)
    x, y, column, nb = inputs["x"], inputs["y"], inputs["bin"] % inputs["nb"], int(inputs["nb"])
    missed = np.zeros((2, x.size))  # the force of the neighbours in the bin column on the right
    for i in range(x.size):
        dx, dy = x - x[i], y - y[i]
        r2 = dx * dx + dy * dy
        right = (column == column[i] + 1) & (np.abs(inputs["bin"] // nb - inputs["bin"][i] // nb) <= 1)
        near = right & (r2 <= CUTOFF * CUTOFF)
        r2c = np.maximum(r2[near], MIN_R * MIN_R)
        coef = (1 - CUTOFF / np.sqrt(r2c)) / r2c / MASS
        missed[:, i] = (coef * dx[near]).sum(), (coef * dy[near]).sum()
    wrong = (np.abs(missed) > user_stage.tolerance(float(inputs["size"]))).any(axis=0)
    assert wrong.sum() > 5
    assert np.flatnonzero(found.mismatch).tolist() == np.flatnonzero(wrong).tolist()
    assert all(w.label.startswith(f"particle {w.index} (") for w in found.worst)


@pytest.mark.gpu
def test_particles_scene_on_the_gpu_takes_the_users_step_and_steps_on():
    from sim.particles import pipeline_cpu
    from sim.particles.scene import ParticlesScene

    scene = ParticlesScene(n=400, backend="gpu")
    scene.advance(20)
    adapter = adapter_of("particles", "forces")
    inputs = scene.user_stage_inputs("forces")
    before = scene.gpu.host_state()
    expected = adapter.expected(inputs)
    scene.apply_user_stage("forces", inputs, expected, None)
    twin = pipeline_cpu.stepped_copy(*before, scene.size, scene.nbins)
    after = scene.gpu.host_state()
    np.testing.assert_array_equal(after[0], twin.x)
    np.testing.assert_array_equal(after[3], twin.vy)
    scene.advance(1)  # the built-in step goes on from the loaded state
    assert scene.n == 400 and np.isfinite(scene.gpu.host_state()[0]).all()


@pytest.mark.gpu
def test_balls_missing_edge_is_caught_at_the_lowest_ball_and_its_partners():
    seed = 2  # the lowest ball in z_max order has partners (seed 1's has none: nothing to miss)
    found, _, expected = run_file("balls", "proximity", DATA / "balls_missing_edge.cu", 1001, seed)
    adapter = adapter_of("balls", "proximity")
    inputs = adapter.inputs(1001, seed)
    order, k = inputs["order"], int(inputs["k"])
    lowest = expected["partners"].reshape(-1, k)[0, : expected["count"][0]]
    assert lowest.size  # the lowest ball has partners to lose
    want = sorted(int(order[s]) for s in [0, *lowest.tolist()])
    assert np.flatnonzero(found.mismatch).tolist() == want
