"""The scenes' replaceable stages, every one the registry declares: each template and planted wrong kernel
compiles with NVRTC; each adapter's inputs and launch; sdh's CPU twin and comparison, and how a comparison
folds values onto items. Each scene's twin, comparison and live hand-over: test_user_stages_scenes.py; on a
GPU, through the sandbox: test_user_stages_gpu.py."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

from sim.framework.user_stages import Values, comparison, differences
from sim.gpu import cuda
from sim.registry import SCENES

DATA = Path(__file__).parent / "data" / "user_kernels"  # planted wrong kernels: <scene>_<what>.cu


def replaceable_stages() -> list[tuple[str, str]]:
    """Every replaceable stage the registry declares, (scene, stage), each adapter once (density's forces are
    the particles')."""
    stages, adapters = [], set()
    for spec in SCENES.values():
        for stage in spec.user_stages:
            if stage.adapter not in adapters:
                adapters.add(stage.adapter)
                stages.append((spec.name, stage.name))
    return stages


def planted(scene: str) -> list[Path]:
    """The wrong kernels planted for a scene's replaceable stage (tests/data/user_kernels/<scene>_*.cu)."""
    return sorted(DATA.glob(f"{scene}_*.cu"))


STAGES = replaceable_stages()


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
    files = [cuda.source_path(declared.template), *planted(scene)]
    for path in files:
        cubin = compile_cubin(path.read_text(), path.name, (*adapter.reference.all_options(), "-lineinfo"))
        assert declared.entry.encode() + b"\0" in cubin, f"{path.name} defines no kernel {declared.entry}"


def test_every_planted_kernel_belongs_to_a_replaceable_stage():
    scenes = [scene for scene, _ in STAGES]
    assert sorted(path for scene in scenes for path in planted(scene)) == sorted(DATA.glob("*.cu"))
    assert all(planted(scene) for scene in scenes), "each stage has a planted wrong kernel"
    assert len(set(scenes)) == len(scenes), "planted kernels name the scene: one replaceable stage a scene"


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
        for key, value in a.items():
            np.testing.assert_array_equal(value, b[key])
        data = [k for k, v in a.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]  # not index tables
        assert data
        for key in data:
            assert size in (a[key].shape[0], a[key].size), key  # an item a row, or a value (a field's cells)
            assert np.any(a[key] != 0), key
        assert any(not np.array_equal(a[k], other[k]) for k in data)


def item_extents(adapter, inputs, size: int, dims: int) -> tuple[int, ...]:
    """The items a launch of ``dims`` dimensions covers, x first: ``size`` in 1D; in 2D a field, the first
    output's rows x columns."""
    if dims == 1:
        return (size,)
    shape = next(iter(adapter.outputs(inputs).values())).shape
    assert int(np.prod(shape)) == size
    return tuple(reversed(shape))


@pytest.mark.parametrize(("scene", "stage"), STAGES)
def test_launch_covers_every_item_once_per_thread(scene, stage):
    adapter = adapter_of(scene, stage)
    block = adapter.default_block()
    for size in adapter.sizes():
        inputs = adapter.inputs(size, 1)
        grid, threads, _ = adapter.launch(inputs, block)
        for axis, extent in enumerate(item_extents(adapter, inputs, size, len(grid))):
            # every item has a thread, and less than a block is spare along each axis
            assert grid[axis] * threads[axis] >= extent > (grid[axis] - 1) * threads[axis], (size, grid, threads)


def test_sdh_expected_is_every_pair_counted():
    adapter = adapter_of("sdh", "histogram")
    inputs = adapter.inputs(257, 5)
    p = np.stack([inputs["x"], inputs["y"], inputs["z"]], axis=1)
    i, j = np.triu_indices(p.shape[0], 1)
    d = p[i] - p[j]
    bins = np.minimum(
        (np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2]) / float(inputs["w"])).astype(np.int64),
        int(inputs["nb"]) - 1,
    )
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
    values = Values(expected, got, wrong, np.array([0, 0, 1, 1, 2, 2]), lambda k: f"value {k}", "out")
    result = comparison([values], 3, "exact")
    assert result.mismatch.tolist() == [True, False, True]
    assert [w.label for w in result.worst] == ["value 4", "value 5", "value 1"]  # NaN (inf) first
    assert result.max_abs == np.inf
    assert differences(np.array([np.nan, 1.0]), np.array([np.nan, 1.0])).tolist() == [0.0, 0.0]
