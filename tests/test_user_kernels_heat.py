"""Heat's step as the stage a user's kernel replaces (sim.heat.user_stage): grids laid out nearest 4:3,
fresh random inputs, the expected step in float32, the launch, a bit-for-bit comparison naming the worst cells,
the template and the planted kernels compiling, the scene taking a step from outside; GPU tests (marked
``gpu``) run the template and the planted kernels in the sandbox."""

from __future__ import annotations

import time

import numpy as np
import pytest
from test_user_kernels import heat_source

from sim.heat import user_stage as heat_stage
from sim.heat.scene import HeatScene
from sim.heat.user_stage import StepStage
from sim.userkernel import guard
from sim.userkernel import source as user_source
from sim.userkernel.sandbox import Sandbox, SandboxError

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")


@pytest.mark.parametrize(
    "size, grid",
    [
        (9, (3, 3)),
        (37 * 29, (37, 29)),
        (100 * 70, (100, 70)),
        (2000 * 1500, (2000, 1500)),
        (12, (4, 3)),
        (1009, (36, 28)),
    ],
)
def test_a_cell_count_is_laid_out_nearest_4_3(size, grid):
    assert heat_stage.shape(size) == grid


def test_fewer_than_3x3_cells_are_refused():
    with pytest.raises(ValueError, match="at least 3x3 = 9 cells, got 8"):
        StepStage().inputs(8, 0)


def test_the_default_sizes_are_the_edge_cases_and_a_large_grid():
    assert [heat_stage.shape(s) for s in StepStage().sizes()] == [(3, 3), (37, 29), (100, 70), (2000, 1500)]


def test_inputs_are_fresh_random_fields_reproducible_from_the_seed():
    stage = StepStage()
    a, b, c = stage.inputs(1073, 1), stage.inputs(1073, 1), stage.inputs(1073, 2)
    assert a["tin"].shape == (29, 37) and a["tin"].dtype == np.float32 and (a["tin"] > 0).all()
    assert np.array_equal(a["tin"], b["tin"]) and a["tfac"] == b["tfac"]
    assert not np.array_equal(a["tin"], c["tin"])
    assert 0 < a["tfac"] < 0.25 and isinstance(a["tfac"], np.float32)


def test_expected_is_the_course_step_in_float32_with_the_ring_held():
    stage = StepStage()
    inputs = stage.inputs(37 * 29, 3)
    t, f = inputs["tin"], inputs["tfac"]
    want = t.copy()
    c = t[1:-1, 1:-1]
    want[1:-1, 1:-1] = c + f * (
        (t[1:-1, :-2] - np.float32(2) * c + t[1:-1, 2:]) + (t[:-2, 1:-1] - np.float32(2) * c + t[2:, 1:-1])
    )
    got = stage.expected(inputs)["tout"]
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def test_the_launch_covers_every_cell_one_thread_each():
    stage = StepStage()
    grid, block, shared = stage.launch(stage.inputs(100 * 70, 0), (32, 8))
    assert (grid, block, shared) == ((4, 9), (32, 8, 1), 0)
    inputs = stage.inputs(100 * 70, 0)
    args = stage.args(inputs, {"tin": "tin", "tout": "tout"})
    assert args == (100, 70, 100, inputs["tfac"], "tin", "tout")
    assert [type(a) for a in args[:4]] == [np.int32, np.int32, np.int64, np.float32]


def test_compare_is_bit_for_bit_and_names_the_worst_cells():
    stage = StepStage()
    inputs = stage.inputs(37 * 29, 0)
    expected = stage.expected(inputs)
    assert stage.compare(inputs, expected, expected).correct
    got = {"tout": expected["tout"].copy()}
    got["tout"][5, 7] = np.nextafter(got["tout"][5, 7], np.float32(np.inf))  # one ulp
    got["tout"][0, 36] += 3.0
    got["tout"][28, 0] = guard.sentinel(np.float32)  # never written
    comparison = stage.compare(inputs, expected, got)
    assert comparison.mismatches == 3 and comparison.max_abs == np.inf
    assert [w.label for w in comparison.worst] == ["cell (0, 28)", "cell (36, 0)", "cell (7, 5)"]
    assert [w.index for w in comparison.worst] == [28 * 37, 36, 5 * 37 + 7]
    assert comparison.worst[1].difference == pytest.approx(3.0, abs=1e-4)
    assert np.flatnonzero(comparison.mismatch).tolist() == [36, 5 * 37 + 7, 28 * 37]


def test_the_template_and_every_planted_heat_kernel_compile(tmp_path):
    for name in (
        "template",
        "edge_column",
        "no_boundary",
        "wrong_factor",
        "past_end",
        "never_returns",
        "illegal_address",
        "tile_race",
    ):
        assert user_source.compile_check(heat_source(name)) == [], name


def test_the_scene_takes_a_step_from_outside_and_marks_the_cells_it_got_wrong():
    scene = HeatScene(preset="seed", n=37 * 29, backend="cpu")
    stage = StepStage()
    inputs = scene.user_stage_inputs("step")
    assert np.array_equal(inputs["tin"], scene.cpu.field) and inputs["tfac"] == scene.cpu.tfac
    expected = stage.expected(inputs)
    got = {"tout": expected["tout"].copy()}
    got["tout"][3, 4] += 1.0
    scene.checks.on = True  # what the viewer turns on for a user's kernel
    scene.apply_user_stage("step", inputs, got, stage.compare(inputs, expected, got))
    assert np.array_equal(scene.cpu.field, got["tout"])
    assert scene.checks.verification.differing == 1 and scene.inspector.is_marked(3 * scene.ni + 4)
    shown = scene.host_field()
    assert np.isnan(shown[3, 4]) and np.isnan(shown).sum() == 1
    scene.advance(1)  # the twin carries on from the user's field, both buffers (the ring) alike
    assert scene.cpu.field[0, 0] == got["tout"][0, 0]


# --- on the GPU: the sandbox with heat's template and planted kernels ---------------------------------------
@pytest.fixture(scope="module")
def gpu_box():
    pytest.importorskip("cupy")
    with Sandbox(time_limit_s=2.0) as box:
        yield box


def run_heat(box, name: str, size: int = 100 * 70, **kwargs):
    stage = StepStage()
    inputs = stage.inputs(size, 0)
    result = box.run(heat_source(name), inputs, (32, 8), **kwargs)
    return result, stage.compare(inputs, stage.expected(inputs), result.outputs)


@pytest.mark.gpu
def test_the_template_runs_correct_in_the_sandbox_and_is_timed_beside_the_builtins(gpu_box):
    result, comparison = run_heat(gpu_box, "template", repeats=5, builtin=StepStage.builtin)
    assert comparison.correct and result.overflow == []
    assert len(result.ms) == 5 and all(ms > 0 for ms in result.ms) and result.checked_ms > 0
    assert set(result.builtin_ms) == {"global", "shared", "temporal"}
    assert all(len(ms) == 5 for ms in result.builtin_ms.values())
    assert result.device


@pytest.mark.gpu
def test_a_kernel_that_never_returns_is_stopped_within_the_limit_and_the_next_run_works(gpu_box):
    started = time.monotonic()
    with pytest.raises(SandboxError) as caught:
        run_heat(gpu_box, "never_returns")
    assert caught.value.kind == "timeout" and "did not return within 2 s" in str(caught.value)
    assert time.monotonic() - started < 60  # the worker's start and compile, then 2 s
    assert run_heat(gpu_box, "template")[1].correct


@pytest.mark.gpu
def test_a_write_past_the_end_is_reported_with_the_buffer_and_the_count(gpu_box):
    result, _ = run_heat(gpu_box, "past_end")
    assert result.overflow == ["wrote 12 values past the end of `tout`"]


@pytest.mark.gpu
@pytest.mark.gpu_fault
def test_an_illegal_address_is_a_fault_and_the_next_run_works(gpu_box):
    with pytest.raises(SandboxError) as caught:
        run_heat(gpu_box, "illegal_address")
    assert caught.value.kind == "fault" and "illegal" in str(caught.value).lower()
    assert run_heat(gpu_box, "template")[1].correct
