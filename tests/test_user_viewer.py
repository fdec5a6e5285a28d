"""A user's own kernel in the viewer's controller, no window: the Load and reload messages, q reaching the
kernel, the "Your kernel" panel text (compile errors with file:line, the sandbox error, the mismatch table, the
first diverging step, warnings, where the kernel runs), the hover rows, the attempts' table, a machine without
a GPU, a scene switch and a bad path. ``view --kernel-file`` and the window: test_user_viewer_window.py. A fake
sandbox runs the CPU twin (tests/user_fakes.py)."""

import dataclasses

import pytest
from user_fakes import (
    BROKEN,
    BROKEN_LINE,
    FAULTS,
    GOOD,
    SPEC,
    WRONG,
    FakeSandbox,
    PretendGpuHeat,
    wait_for,
    write,
)

import sim.userkernel.live
from sim.userkernel.watch import Reload
from viewer.keys import KeyMap, key
from viewer.panel.user_kernel import kernel_lines, worst_rows
from viewer.pick.tooltip import report
from viewer.window.controller import Controller


@pytest.fixture
def fake_sandbox(monkeypatch):
    """Every live stage the viewer makes runs on a FakeSandbox; the list holds them."""
    made = []

    def make(time_limit_s):
        made.append(FakeSandbox())
        return made[-1]

    monkeypatch.setattr(sim.userkernel.live, "Sandbox", make)
    return made


@pytest.fixture
def ctl(fake_sandbox):
    ctl = Controller(PretendGpuHeat())
    ctl.scene.checks.set_on(True)
    yield ctl
    ctl.kernel.drop()


def loaded(ctl, path, text=None) -> bool:
    """Load ``path`` in the controller and wait, frame by frame, until its text ``text`` was taken in."""
    if ctl.kernel.live is None or str(ctl.kernel.live.source.path) != str(path):
        assert ctl.kernel.load(str(path)), ctl.message
    text = path.read_text() if text is None else text

    def taken() -> bool:
        ctl.watch_scene()
        live = ctl.kernel.live
        return live.source.text == text and not live.checking and "compiling" not in ctl.message

    return wait_for(taken)


def lines_text(ctl) -> str:
    return "\n".join(text for _, text in kernel_lines(ctl))


# --- the controller and the panel's text ----------------------------------------------------------------
def test_load_runs_the_kernel_as_a_variant_that_q_reaches(ctl, tmp_path):
    path = write(tmp_path / "my_step.cu", GOOD)
    assert loaded(ctl, path)
    assert ctl.message == "my_step.cu compiled: swapped in, the state kept"
    ctl.advance()
    assert ctl.scene.steps > 0 and ctl.kernel.live.steps_run == ctl.scene.steps
    assert "running: " in lines_text(ctl)
    cycled = [KeyMap(ctl).press(key.Q, 0) and ctl.message for _ in range(len(SPEC.gpu.variants) + 1)]
    assert cycled[0] == "q: stencil kernel global" and cycled[-1] == "q: stencil kernel my_step.cu"
    assert ctl.scene.knobs.user_runs()


def test_a_compile_error_shows_file_and_line_and_the_last_good_build_runs_on(ctl, tmp_path):
    path = write(tmp_path / "my_step.cu", GOOD)
    assert loaded(ctl, path)
    write(path, BROKEN)
    assert loaded(ctl, path, BROKEN)
    assert "my_step.cu does not compile" in ctl.message and f"my_step.cu:{BROKEN_LINE}" in ctl.message
    assert "the last good build runs on" in ctl.message
    lines = kernel_lines(ctl)
    error = next(text for kind, text in lines if kind == "error" and f"my_step.cu:{BROKEN_LINE}:" in text)
    assert 'identifier "x" is undefined' in error and "x = 1;" in error
    before = ctl.scene.steps
    ctl.advance()
    assert ctl.scene.steps > before and ctl.kernel.live.sandbox.runs[-1] == GOOD
    assert "running the last good build" in lines_text(ctl)


def test_a_first_text_that_does_not_compile_says_the_scene_runs_its_own_kernel(ctl, tmp_path):
    assert loaded(ctl, write(tmp_path / "my_step.cu", BROKEN))
    assert "does not compile" in ctl.message and "the scene runs its own kernel" in ctl.message
    ctl.advance()
    assert ctl.scene.steps > 0 and ctl.kernel.live.sandbox.runs == []
    assert "does not compile: the scene runs its own kernel (temporal)" in lines_text(ctl)


def test_a_sandbox_error_falls_back_to_the_reference_and_shows_the_message(ctl, tmp_path):
    assert loaded(ctl, write(tmp_path / "my_step.cu", FAULTS))
    steps = ctl.scene.frame_steps
    assert ctl.advance() and ctl.scene.steps == steps, "the frame is finished by the scene's own kernel"
    ctl.watch_scene()
    assert ctl.message.startswith("my_step.cu failed: the kernel faulted") and "until you save" in ctl.message
    text = lines_text(ctl)
    assert "sandbox: the kernel faulted: an illegal memory access" in text and "failed: the scene runs its own" in text
    ctl.advance()
    assert ctl.scene.steps == 2 * steps and len(ctl.kernel.live.sandbox.runs) == 1
    path = ctl.kernel.live.source.path
    assert loaded(ctl, write(path, BROKEN))
    assert ctl.message.startswith("my_step.cu does not compile"), "a save's news is not hidden by the old error"


def test_the_mismatch_table_and_the_first_diverging_step(ctl, tmp_path):
    assert loaded(ctl, write(tmp_path / "my_step.cu", WRONG))
    ctl.single_step()
    ctl.single_step()
    text = lines_text(ctl)
    assert f"1 of {ctl.scene.n:,} cells wrong (exact); max abs 1" in text
    assert "first diverged from the CPU twin at step 1" in text
    ((label, expected, got, difference),) = worst_rows(ctl.kernel.live.comparison)
    assert label == "cell 7" and float(got) - float(expected) == pytest.approx(1.0, rel=1e-6)
    assert difference == "+1"
    rows = report(ctl.scene, 7).check
    assert rows and rows[0][0] == "out" and rows[0][3] == "+1", "hovering the cell shows expected vs got"
    assert report(ctl.scene, 8).check == []


def timed_by_text(live, ms_by_text: dict, **reported):
    """The live stage's stand-in sandbox reports ``ms_by_text[text]`` as each step's kernel time (and the
    attributes ``reported`` on each result, as a sandbox that measures more would)."""
    run = live.sandbox.run

    def timed(build, *args, **kwargs):
        result = run(build, *args, **kwargs)
        result.checked_ms = ms_by_text[build.text]
        for name, value in reported.items():
            setattr(result, name, value)
        return result

    live.sandbox.run = timed


def test_every_attempt_is_a_row_and_a_point_newest_first(ctl, tmp_path):
    from viewer.panel.user_attempts import attempt_table

    faster = GOOD.replace("cell by cell", "cell by cell, again")
    path = write(tmp_path / "my_step.cu", GOOD)
    assert loaded(ctl, path)
    timed_by_text(ctl.kernel.live, {GOOD: 0.25, WRONG: 0.5, faster: 0.125})
    for text in (None, WRONG, BROKEN, faster):  # the first load, then three saves
        if text is not None:
            assert loaded(ctl, write(path, text), text)
        for _ in range(3):
            ctl.single_step()
    headings, rows = attempt_table(ctl.kernel.live.attempts)
    assert headings == ("#", "built", "correct", "ms", "registers"), "no limit column before the panel figures one"
    assert [(r[0], r[2], r[3]) for r in rows] == [
        ("4", "yes", "0.1250"),
        ("3", "does not compile", "-"),
        ("2", "no: 1 wrong", "0.5000"),
        ("1", "yes", "0.2500"),
    ]
    assert [r[4] == "-" for r in rows] == [False, True, False, False], "ptxas's registers for each build that ran"
    assert all(len(r[1]) == 8 and r[1].count(":") == 2 for r in rows), "built at HH:MM:SS"
    live = ctl.kernel.live
    assert [a.steps for a in live.attempts.items] == [3, 6, 0, 3], "the last good build ran on through the broken save"
    xs, ys = live.attempts.series()
    assert xs.tolist() == [1, 2, 4] and ys.tolist() == [0.25, 0.5, 0.125]


def test_the_attempt_table_shows_the_limit_and_the_registers_where_known(ctl, tmp_path):
    from sim.userkernel.footprint import Footprint
    from viewer.panel.user_attempts import attempt_table

    path = write(tmp_path / "my_step.cu", GOOD)
    assert loaded(ctl, path)
    live = ctl.kernel.live
    live.footprint = Footprint(registers=18, static_shared=0, stack_frame=0, spill_stores=0, spill_loads=0)
    timed_by_text(live, {GOOD: 0.25})
    ctl.single_step()
    live.attempts.note_limit(41.6)  # as the panel notes it while it figures the kernel's speed
    headings, rows = attempt_table(live.attempts)
    assert headings == ("#", "built", "correct", "ms", "% of limit", "registers")
    assert (rows[0][0], rows[0][2], rows[0][4], rows[0][5]) == ("1", "yes", "42%", "18")


def test_the_status_says_where_the_kernel_runs_and_what_q_does(ctl, tmp_path):
    path = write(tmp_path / "my_step.cu", GOOD)
    assert loaded(ctl, path)
    ctl.scene.gpu_kernels_run = lambda: False  # the physics on the CPU
    kind, text = kernel_lines(ctl)[1]
    assert kind == "note" and text.endswith("it runs where the scene's GPU kernels run: " + SPEC.gpu.kernels_run_hint)
    assert "verification off" not in lines_text(ctl), "nothing runs: no note on comparisons"
    write(path, BROKEN)
    assert loaded(ctl, path, BROKEN)
    assert kernel_lines(ctl)[1][1].startswith("the last good build compiled; it runs where")
    ctl.gpu.set_variant("global")
    assert kernel_lines(ctl)[1][1] == "the last good build compiled; choose my_step.cu (variant list, q) to run it"


def test_warnings_show_in_yellow_and_do_not_stop_the_swap(ctl, tmp_path):
    from sim.userkernel.source import Diagnostic

    assert loaded(ctl, write(tmp_path / "my_step.cu", GOOD))
    live = ctl.kernel.live
    warning = Diagnostic(
        str(live.source.path), 3, "warning", 'variable "spare" was declared but never referenced', "int spare;"
    )
    live.watcher.take()  # nothing pending: the next look is the one below
    live.watcher._post(Reload(dataclasses.replace(live.source, text=WRONG), (warning,)))
    ctl.watch_scene()
    assert ctl.message == "my_step.cu compiled with 1 warning: swapped in, the state kept"
    assert live.build.text == WRONG
    assert ("warning", str(warning)) in kernel_lines(ctl) and "my_step.cu:3: warning: variable" in str(warning)


class HeatWithoutAGpu(PretendGpuHeat):
    """A heat scene on a machine with no NVIDIA driver: the kernel compiles (NVRTC needs no GPU), nothing runs it."""

    @property
    def gpu_reason(self) -> str:
        return "no NVIDIA GPU driver on this machine (libcuda.so.1 not found): the GPU backend needs an NVIDIA GPU"

    def gpu_kernels_run(self) -> bool:
        return False


def test_a_kernel_compiled_without_a_gpu_says_it_needs_one_not_that_it_was_swapped_in(fake_sandbox, tmp_path):
    ctl = Controller(HeatWithoutAGpu())
    try:
        assert loaded(ctl, write(tmp_path / "my_step.cu", GOOD))
        assert ctl.message == (
            "my_step.cu compiled; it needs a GPU to run: no NVIDIA GPU driver on this machine "
            "(libcuda.so.1 not found): the GPU backend needs an NVIDIA GPU"
        )
        steps = ctl.scene.steps
        ctl.advance()
        assert ctl.scene.steps > steps and ctl.kernel.live.steps_run == 0, "the CPU ran the steps"
    finally:
        ctl.kernel.drop()


def test_a_scene_switch_unloads_the_kernel(ctl, tmp_path, fake_sandbox):
    assert loaded(ctl, write(tmp_path / "my_step.cu", GOOD))
    live = ctl.kernel.live
    ctl.new_scene = lambda name, backend: PretendGpuHeat()
    ctl.switch_scene("durbin")
    assert fake_sandbox[-1].closed and not live.watcher._thread.is_alive()
    assert ctl.kernel.live is None and "my_step.cu" not in ctl.scene.knobs.variants


def test_a_bad_path_in_the_load_field_is_said_and_nothing_changes(ctl, tmp_path):
    assert not ctl.kernel.load(str(tmp_path / "nowhere.cu"))
    assert "nowhere.cu" in ctl.message and "does not exist" in ctl.message
    assert ctl.kernel.live is None and ctl.scene.knobs.variants == SPEC.gpu.variants
    assert not ctl.kernel.load("  ")
    assert "path" in ctl.message
