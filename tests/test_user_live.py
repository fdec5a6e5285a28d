"""A user's own kernel in the live scene, sim side (sim.userkernel.live, sim.framework.knobs): the lockstep step,
hot reload with the state kept, the last good build through compile errors, the reference after a
sandbox error, the comparison the panel shows. A fake sandbox runs the CPU twin (tests/user_fakes.py);
the real one, with heat's template, runs on a GPU at the end."""

import time
from pathlib import Path

import numpy as np
import pytest
from user_fakes import BROKEN, BROKEN_LINE, FAULTS, GOOD, SPEC, WRONG, FakeSandbox, PretendGpuHeat, wait_for, write

from sim.heat.stencil_cpu import HeatCpu
from sim.userkernel import source as user_source
from sim.userkernel.live import STEP_TIME_LIMIT_S, LiveStage
from sim.userkernel.watch import Reload


def twin_steps(field, tfac, steps):
    twin = HeatCpu(field, tfac)
    twin.advance(steps)
    return twin.field


@pytest.fixture
def kernel_file(tmp_path):
    return write(tmp_path / "my_step.cu", GOOD)


def live_scene(path, sandbox=None, watch=False):
    """A pretend-GPU heat scene running the kernel at ``path``, verification on."""
    scene = PretendGpuHeat()
    live = LiveStage(scene, user_source.load(path, SPEC, "step"), sandbox or FakeSandbox())
    scene.knobs.use(live)
    scene.checks.set_on(True)
    if watch:
        live.watch()
    return scene, live


def reloaded(live, text):
    """Wait until the frame thread has taken in a look at the file whose text is ``text``."""
    return wait_for(lambda: live.refresh() is not None and live.source.text == text)


def test_a_save_while_the_scene_runs_swaps_the_kernel_and_keeps_the_state(kernel_file):
    scene, live = live_scene(kernel_file, watch=True)
    try:
        assert reloaded(live, GOOD) and live.build.text == GOOD
        start = scene.cpu.field.copy()
        assert scene.run_frame(3) == 3
        np.testing.assert_array_equal(scene.cpu.field, twin_steps(start, scene.cpu.tfac, 3))
        assert live.sandbox.runs == [GOOD] * 3 and live.comparison.correct
        kept, steps = scene.cpu.field.copy(), scene.steps
        write(kernel_file, WRONG)
        assert reloaded(live, WRONG), "the save was not taken in"
        assert live.build.text == WRONG and live.steps_run == 0
        assert scene.steps == steps and np.array_equal(scene.cpu.field, kept), "the swap must keep the state"
        scene.run_frame(1)
        assert live.sandbox.runs[-1] == WRONG and scene.steps == steps + 1
        assert live.comparison.mismatches == 1 and live.first_divergence == steps + 1
        assert scene.checks.marked(scene.n)[7] and scene.inspector.is_marked(7), "the wrong cell is marked red"
    finally:
        scene.knobs.drop()
    assert live.sandbox.closed and not live.watcher._thread.is_alive()


def test_a_compile_error_keeps_the_last_good_build_running(kernel_file):
    scene, live = live_scene(kernel_file, watch=True)
    try:
        assert reloaded(live, GOOD)
        write(kernel_file, BROKEN)
        assert reloaded(live, BROKEN)
        errors = [d for d in live.diagnostics if d.severity == "error"]
        assert errors and errors[0].line == BROKEN_LINE and errors[0].text == "x = 1;"
        assert errors[0].file.endswith("my_step.cu")
        assert live.build.text == GOOD and live.runs
        scene.run_frame(2)
        assert live.sandbox.runs == [GOOD] * 2, "the last good build runs on"
    finally:
        scene.knobs.drop()


def test_a_first_text_that_does_not_compile_leaves_the_reference_running(tmp_path):
    scene, live = live_scene(write(tmp_path / "my_step.cu", BROKEN))
    live.take(Reload(live.source, tuple(user_source.compile_check(live.source))))
    assert live.build is None and not scene.knobs.user_runs() and live.diagnostics
    start = scene.cpu.field.copy()
    scene.run_frame(2)
    assert live.sandbox.runs == [] and scene.steps == 2
    np.testing.assert_array_equal(scene.cpu.field, twin_steps(start, scene.cpu.tfac, 2))


def test_a_sandbox_error_falls_back_to_the_reference_until_the_file_changes(tmp_path):
    path = write(tmp_path / "my_step.cu", FAULTS)
    scene, live = live_scene(path)
    live.take(Reload(live.source))
    start = scene.cpu.field.copy()
    assert scene.run_frame(3) == 3 and scene.steps == 3
    assert "illegal memory access" in live.error and not live.runs
    np.testing.assert_array_equal(scene.cpu.field, twin_steps(start, scene.cpu.tfac, 3))
    scene.run_frame(2)
    assert len(live.sandbox.runs) == 1, "after the error the reference runs, not the kernel again"
    live.take(Reload(user_source.load(write(path, GOOD), SPEC, "step")))
    assert live.error is None and live.runs
    scene.run_frame(1)
    assert live.sandbox.runs[-1] == GOOD


def test_the_comparison_names_the_wrong_item_and_the_first_diverging_step(tmp_path):
    scene, live = live_scene(write(tmp_path / "my_step.cu", WRONG))
    live.take(Reload(live.source))
    scene.run_frame(2)
    comparison = live.comparison
    assert comparison.mismatches == 1 and comparison.max_abs == pytest.approx(1.0, rel=1e-6)
    worst = comparison.worst[0]
    assert worst.index == 7 and worst.difference == pytest.approx(1.0, rel=1e-6)
    assert live.first_divergence == 1, "the first step already differed"
    scene.run_frame(1)
    assert live.first_divergence == 1
    out = live.comparison.values[0]
    want, have = float(out.expected[7]), float(out.got[7])
    assert live.describe_check(7) == [("out", f"{have:.9g}", f"{want:.9g}", f"{have - want:+.3g}")]
    assert live.describe_check(8) == [] and live.describe_check(10**9) == []


def test_the_kernel_time_joins_the_stage_chart_under_the_stage_name(tmp_path):
    scene, live = live_scene(write(tmp_path / "my_step.cu", GOOD))
    live.take(Reload(live.source))
    scene.run_frame(4)
    assert scene.timer.history("step")[-1] == pytest.approx(4 * 0.25)
    assert live.ms == pytest.approx(0.25)
    assert live.sandbox.timed_repeats == [0] * 4, "a step launches the kernel once: the checked launch is timed"


def test_the_check_time_is_the_twin_and_the_comparison_not_the_kernel_or_the_scene(tmp_path, monkeypatch):
    from user_fakes import SLOW, StepStage

    def slowly(seconds, method):
        def run(self, *args):
            time.sleep(seconds)
            return method(self, *args)

        return run

    monkeypatch.setattr(StepStage, "expected", slowly(0.05, StepStage.expected))
    monkeypatch.setattr(StepStage, "compare", slowly(0.03, StepStage.compare))
    monkeypatch.setattr(PretendGpuHeat, "apply_user_stage", slowly(0.2, PretendGpuHeat.apply_user_stage))
    scene, live = live_scene(write(tmp_path / "my_step.cu", SLOW), FakeSandbox(slow_s=0.2))
    live.take(Reload(live.source))
    scene.run_frame(1)
    check_ms = scene.checks.verification.check_ms
    assert 80 <= check_ms < 250, "the CPU twin's 50 ms and the comparison's 30, without the 200s"
    assert live.comparison.check_ms == scene.checks.verification.check_ms


def test_without_verification_the_kernel_still_steps_the_scene(tmp_path):
    scene, live = live_scene(write(tmp_path / "my_step.cu", WRONG))
    scene.checks.set_on(False)
    live.take(Reload(live.source))
    start = scene.cpu.field.copy()
    scene.run_frame(1)
    expected = twin_steps(start, scene.cpu.tfac, 1)
    assert scene.cpu.field.reshape(-1)[7] == expected.reshape(-1)[7] + 1, "the state moves on with the user's result"
    assert live.comparison is None and live.first_divergence is None and scene.checks.verification is None


def test_the_kernel_is_a_variant_q_reaches_and_leaves(tmp_path):
    scene, live = live_scene(write(tmp_path / "my_step.cu", GOOD))
    live.take(Reload(live.source))
    knobs = scene.knobs
    assert knobs.variants == (*SPEC.gpu.variants, "my_step.cu") and knobs.chosen == "my_step.cu"
    scene.knobs.set_variant("global")
    assert knobs.chosen == "global" == scene.knobs.variant and not knobs.user_runs()
    scene.run_frame(1)
    assert live.sandbox.runs == [], "a built-in variant chosen: the scene's own kernel steps"
    scene.knobs.set_variant("my_step.cu")
    assert knobs.chosen == "my_step.cu" and scene.knobs.variant == "global", "the built-in one stays the reference"
    scene.run_frame(1)
    assert live.sandbox.runs == [GOOD]
    with pytest.raises(ValueError, match="my_step.cu"):
        scene.knobs.set_variant("mine.cu")
    scene.knobs.drop()
    assert knobs.variants == SPEC.gpu.variants and knobs.chosen == "global" and live.sandbox.closed


def test_the_kernel_runs_only_where_the_scenes_gpu_kernels_run(tmp_path):
    scene, live = live_scene(write(tmp_path / "my_step.cu", GOOD))
    live.take(Reload(live.source))
    scene.gpu_kernels_run = lambda: False  # e.g. physics on the CPU
    scene.run_frame(1)
    assert live.sandbox.runs == [] and scene.steps == 1


def test_a_removed_file_keeps_the_build_and_says_why(kernel_file):
    scene, live = live_scene(kernel_file, watch=True)
    try:
        assert reloaded(live, GOOD)
        kernel_file.unlink()
        assert wait_for(lambda: live.refresh() is not None and live.problem)
        assert "my_step.cu" in live.problem and "does not exist" in live.problem
        assert live.build.text == GOOD and live.runs
    finally:
        scene.knobs.drop()


# --- on a GPU: heat's template and planted kernels through the real sandbox -----------------------------
def gpu_heat_live(tmp_path, text: str):
    """A GPU heat scene running ``text`` as my_step.cu for heat's own step stage, compiled and verified."""
    from sim.heat import SPEC as HEAT
    from sim.registry import create_scene

    path = tmp_path / "my_step.cu"
    path.write_text(text)
    scene = create_scene("heat", backend="gpu", preset="seed", n=120_000)  # random: a mistake shows at once
    live = LiveStage(scene, user_source.load(path, HEAT, "step"))
    scene.knobs.use(live)
    scene.checks.set_on(True)
    live.take(Reload(live.source, tuple(user_source.compile_check(live.source))))
    assert live.build is not None, [str(d) for d in live.diagnostics]
    return scene, live


def heat_file(name: str) -> str:
    from sim.gpu.cuda import source_path
    from sim.heat import SPEC as HEAT

    if name == "template":
        return source_path(HEAT.user_stage("step").template).read_text()
    return (Path(__file__).parent / "data" / "user_kernels" / name).read_text()


@pytest.mark.gpu
def test_heat_template_runs_live_in_lockstep_with_the_cpu_twin(tmp_path):
    scene, live = gpu_heat_live(tmp_path, heat_file("template"))
    try:
        start = scene.gpu.get()
        assert scene.run_frame(3) == 3
        assert live.error is None and live.steps_run == 3 and live.ms > 0
        assert live.comparison.correct and live.first_divergence is None and live.overflow == []
        np.testing.assert_array_equal(scene.gpu.get(), twin_steps(start, scene.gpu.tfac, 3))
    finally:
        scene.knobs.drop()


@pytest.mark.gpu
def test_a_planted_mistake_is_marked_from_the_first_step(tmp_path):
    scene, live = gpu_heat_live(tmp_path, heat_file("heat_edge_column.cu"))
    try:
        scene.run_frame(2)
        assert live.error is None and live.comparison.mismatches > 0 and live.first_divergence == 1
        wrong = live.comparison.worst[0].index
        assert scene.inspector.is_marked(wrong) and live.describe_check(wrong)
    finally:
        scene.knobs.drop()


@pytest.mark.gpu
@pytest.mark.parametrize(
    "planted", ["heat_never_returns.cu", pytest.param("heat_illegal_address.cu", marks=pytest.mark.gpu_fault)]
)
def test_a_kernel_that_faults_or_never_returns_leaves_the_scene_on_its_own_kernel(tmp_path, planted):
    scene, live = gpu_heat_live(tmp_path, heat_file(planted))
    try:
        start = scene.gpu.get()
        began = time.perf_counter()
        assert scene.run_frame(2) == 2
        assert live.error and not live.runs
        assert time.perf_counter() - began < STEP_TIME_LIMIT_S + 60, "the window is held for the time limit only"
        np.testing.assert_array_equal(scene.gpu.get(), twin_steps(start, scene.gpu.tfac, 2))
        live.source.path.write_text(heat_file("template"))
        live.take(Reload(user_source.load(live.source.path, scene.spec, "step")))
        scene.run_frame(1)
        assert live.error is None and live.steps_run == 1, "a save brings the kernel back, in a new worker"
    finally:
        scene.knobs.drop()
