"""The scenes' replaceable stages (sdh histogram, durbin batched, particles forces): each template and
planted wrong kernel compiles with NVRTC; each adapter's inputs, CPU twin, launch and comparison; the
live scene's hand-over; on a GPU (through the sandbox), the template is right on every default size
and each planted kernel is caught with the right items named."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

from sim import cuda
from sim.registry import SCENES
from sim.user_stages import Values, comparison, differences

DATA = Path(__file__).parent / "data" / "user_kernels"
STAGES = [("sdh", "histogram"), ("durbin", "batched")]  # (scene, stage)
PLANTED = {("sdh", "histogram"): ("sdh_wrong_bucket.cu", "sdh_race.cu"),
           ("durbin", "batched"): ("durbin_wrong_sign.cu", "durbin_missing_term.cu")}


def adapter_of(scene: str, stage: str):
    path = SCENES[scene].user_stage(stage).adapter
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)()


def small_sizes(adapter) -> tuple[int, ...]:
    """The grader's sizes short of the large one (the CPU twin takes a while there)."""
    return adapter.sizes()[:-1]


# --- NVRTC: the template and every planted kernel compile with the reference build's options -----------------
@pytest.mark.parametrize(("scene", "stage"), STAGES)
def test_template_and_planted_kernels_compile(scene, stage):
    compile_cubin = pytest.importorskip("test_cuda_sources").compile_cubin
    declared = SCENES[scene].user_stage(stage)
    adapter = adapter_of(scene, stage)
    files = [cuda.source_path(declared.template)] + [DATA / name for name in PLANTED[scene, stage]]
    for path in files:
        cubin = compile_cubin(path.read_text(), path.name, (*adapter.reference.all_options(), "-lineinfo"))
        assert declared.entry.encode() + b"\0" in cubin, f"{path.name} defines no kernel {declared.entry}"


@pytest.mark.parametrize(("scene", "stage"), STAGES)
def test_the_template_is_built_with_the_product(scene, stage):
    """tests/test_cuda_sources.py compiles it on every CI run with the reference build's options."""
    from sim.registry import all_builds

    declared = SCENES[scene].user_stage(stage)
    reference = adapter_of(scene, stage).reference
    assert any(b.source == declared.template and b.options == reference.options for b in all_builds())


# --- inputs, the CPU twin, the launch rule ----------------------------------------------------------------
@pytest.mark.parametrize(("scene", "stage"), STAGES)
def test_inputs_are_reproducible_per_seed_and_never_all_zero(scene, stage):
    adapter = adapter_of(scene, stage)
    for size in small_sizes(adapter):
        a, b, other = adapter.inputs(size, 3), adapter.inputs(size, 3), adapter.inputs(size, 4)
        assert a.keys() == b.keys()
        arrays = [k for k, v in a.items() if isinstance(v, np.ndarray) and v.ndim]
        assert arrays
        for key in arrays:
            assert a[key].shape[0] == size, key
            np.testing.assert_array_equal(a[key], b[key])
            assert np.any(a[key] != 0), key
        assert any(not np.array_equal(a[k], other[k]) for k in arrays)


@pytest.mark.parametrize(("scene", "stage"), STAGES)
def test_launch_covers_every_item_once_per_thread(scene, stage):
    adapter = adapter_of(scene, stage)
    block = adapter.default_block()
    for size in adapter.sizes():
        grid, threads, _ = adapter.launch(adapter.inputs(size, 1), block)
        total = int(np.prod(grid)) * int(np.prod(threads))
        assert total >= size and total - int(np.prod(threads)) < size, (size, grid, threads)


def test_sdh_expected_is_every_pair_counted():
    adapter = adapter_of("sdh", "histogram")
    inputs = adapter.inputs(257, 5)
    p = np.stack([inputs["x"], inputs["y"], inputs["z"]], axis=1)
    i, j = np.triu_indices(p.shape[0], 1)
    d = p[i] - p[j]
    bins = np.minimum((np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2]) / float(inputs["w"]))
                      .astype(np.int64), int(inputs["nb"]) - 1)
    want = np.bincount(bins, minlength=int(inputs["nb"]))
    got = adapter.expected(inputs)["hist"]
    assert got.dtype == np.uint64 and got.shape == (int(inputs["nb"]),)
    np.testing.assert_array_equal(got.astype(np.int64), want)
    assert adapter.outputs(inputs)["hist"].start == "zero"


# --- comparisons: exactly the damaged items, the worst first ------------------------------------------------
def test_sdh_compare_names_exactly_the_damaged_bins():
    adapter = adapter_of("sdh", "histogram")
    inputs = adapter.inputs(255, 2)
    expected = adapter.expected(inputs)
    got = expected["hist"].copy()
    got[3] += 1
    got[40] -= 7
    result = adapter.compare(inputs, expected, {"hist": got})
    assert not result.correct and result.mismatches == 2
    assert np.flatnonzero(result.mismatch).tolist() == [3, 40]
    assert [(w.index, w.label, w.difference) for w in result.worst] == [(40, "bin 40", -7.0), (3, "bin 3", 1.0)]
    assert result.max_abs == 7.0 and result.rule == "exact"
    assert adapter.compare(inputs, expected, {"hist": expected["hist"].copy()}).correct


def test_comparison_folds_values_onto_items_and_orders_the_worst():
    expected = np.array([1.0, 2.0, 3.0, np.nan, 5.0, 6.0])
    got = np.array([1.0, 2.5, 3.0, np.nan, np.nan, 4.0])
    wrong = np.array([False, True, False, False, True, True])
    values = Values(expected, got, wrong, np.array([0, 0, 1, 1, 2, 2]), lambda k: f"value {k}")
    result = comparison([values], 3, "exact")
    assert result.mismatch.tolist() == [True, False, True]
    assert [w.label for w in result.worst] == ["value 4", "value 5", "value 1"]  # NaN (inf) first
    assert result.max_abs == np.inf
    assert differences(np.array([np.nan, 1.0]), np.array([np.nan, 1.0])).tolist() == [0.0, 0.0]


# --- the live scene: its state in, the user's result back ------------------------------------------------
def test_sdh_scene_takes_the_users_counts_and_marks_the_wrong_bins():
    from sim.sdh.scene import HistogramScene

    scene = HistogramScene(n=300)
    adapter = adapter_of("sdh", "histogram")
    inputs = adapter.scene_inputs(scene)
    assert int(inputs["n"]) == 300 and int(inputs["nb"]) == scene.buckets
    np.testing.assert_array_equal(inputs["y"], scene.points[:, 1])
    expected = adapter.expected(inputs)
    got = expected["hist"].copy()
    got[5] += 2
    result = adapter.compare(inputs, expected, {"hist": got})
    adapter.apply(scene, {"hist": got}, result)
    assert scene.counts.dtype == np.int64 and scene.counts[5] == int(expected["hist"][5]) + 2
    assert np.flatnonzero(scene.mismatch).tolist() == [5]
    assert scene.verification.unit == "buckets" and scene.verification.differing == 1


def test_durbin_expected_is_the_twin_and_solves_each_system():
    import scipy.linalg

    from sim.durbin import durbin_cpu
    from sim.durbin.inputs import toeplitz_column

    adapter = adapter_of("durbin", "batched")
    inputs = adapter.inputs(65, 3)
    r = inputs["r"]
    assert r.shape == (65, int(inputs["order"])) and int(inputs["systems"]) == 65
    expected = adapter.expected(inputs)
    for s in (0, 31, 64):
        twin = durbin_cpu.DurbinCpu(r[s])
        twin.run()
        np.testing.assert_array_equal(expected["y"][s], twin.y)
        np.testing.assert_array_equal(expected["alphas"][s], twin.alphas)
        assert expected["betas"][s] == twin.betas[-1]
        np.testing.assert_allclose(expected["y"][s], scipy.linalg.solve_toeplitz(toeplitz_column(r[s]), -r[s]),
                                   rtol=0, atol=1e-10)
    assert np.all(expected["y"] != 0) and np.all(expected["alphas"] != 0)
    assert {o.start for o in adapter.outputs(inputs).values()} == {"poison"}


def test_durbin_compare_names_the_system_and_coefficient():
    adapter = adapter_of("durbin", "batched")
    inputs = adapter.inputs(9, 1)
    expected = adapter.expected(inputs)
    got = {name: value.copy() for name, value in expected.items()}
    got["y"][4, 7] += 1e-3
    got["alphas"][6, 2] = -got["alphas"][6, 2]
    got["betas"][2] = np.nan
    result = adapter.compare(inputs, expected, got)
    assert np.flatnonzero(result.mismatch).tolist() == [2, 4, 6]
    labels = [w.label for w in result.worst]
    assert labels == ["system 2 beta", "system 6 alpha 2", "system 4 coefficient 7"]
    assert [w.index for w in result.worst] == [2, 6, 4]
    assert abs(result.worst[2].difference - 1e-3) < 1e-12
    assert adapter.compare(inputs, expected, {k: v.copy() for k, v in expected.items()}).correct
    almost = {k: v.copy() for k, v in expected.items()}
    almost["y"][0, 0] = np.nextafter(almost["y"][0, 0], 1.0)  # one ulp off: exact means exact
    assert np.flatnonzero(adapter.compare(inputs, expected, almost).mismatch).tolist() == [0]


def test_durbin_scene_solves_its_frames_with_the_users_result():
    from sim import create_scene

    adapter = adapter_of("durbin", "batched")
    with pytest.raises(ValueError, match="lpc preset"):
        adapter.scene_inputs(create_scene("durbin", preset="ar"))
    scene = create_scene("durbin", preset="lpc")
    inputs = adapter.scene_inputs(scene)
    assert inputs["r"].shape == (scene.lpc.frames, scene.lpc.order)
    expected = adapter.expected(inputs)
    got = {k: v.copy() for k, v in expected.items()}
    got["y"][3, 1] = 0.0
    result = adapter.compare(inputs, expected, got)
    adapter.apply(scene, got, result)
    assert scene.lpc.y[3, 1] == 0.0 and scene.checked == {}
    assert np.flatnonzero(scene.mismatch).tolist() == [3] and scene.verification.unit == "frames"


# --- on the GPU, through the sandbox: the template is right, the planted kernels are caught ------------------
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
