""" "Run one step under the sanitizer" in the viewer's Your kernel section: the step's inputs taken on the
frame thread and run off it, its findings (or "none found") in the section's lines, one run at a time, a
GPU fault's message offering it; the panel drawn with the row. A stand-in runner replaces the tool
(its real runs: test_user_sanitizer_gpu.py); a fake sandbox runs the CPU twin (tests/user_fakes.py)."""

from pathlib import Path

import numpy as np
import pytest
from gl_support import needs_egl
from user_fakes import BROKEN, GOOD, FakeSandbox, PretendGpuHeat, wait_for, write

import sim.userkernel.live
from sim.userkernel import sandbox, sanitizer
from sim.userkernel.sanitizer import Outcome, SanitizerError
from sim.userkernel.sanitizer_report import parse
from viewer.panel.user_sanitizer import sanitizer_lines
from viewer.window.controller import Controller
from viewer.window.user_kernel import SANITIZE_OFFER

SAMPLES = Path(__file__).parent / "data" / "sanitizer"


class GpuFaultSandbox(FakeSandbox):
    def run(self, build, inputs, block, repeats=0, builtin=()):
        raise sandbox.SandboxError("fault", "the kernel faulted: an illegal memory access was encountered", True)


class StandIn:
    """compute-sanitizer's stand-in: each run's request kept; answers with a recorded report once released."""

    def __init__(self, sample: str = "racecheck_tile_race", error: str = ""):
        self.report = parse((SAMPLES / f"{sample}.txt").read_text())
        self.error = error
        self.requests = []
        self.release = __import__("threading").Event()

    def __call__(self, source, inputs, block, tool, stop):
        self.requests.append((source, inputs, block, tool))
        self.release.wait(10)
        if self.error:
            raise SanitizerError("missing", self.error)
        return Outcome(tool, self.report)


@pytest.fixture
def stand_in(monkeypatch):
    made = {"runner": StandIn()}
    monkeypatch.setattr(sim.userkernel.live, "Background", lambda: sanitizer.Background(made["runner"]))
    return made


@pytest.fixture
def ctl(monkeypatch, stand_in):
    boxes = []

    def make(time_limit_s):
        boxes.append(FakeSandbox())
        return boxes[-1]

    monkeypatch.setattr(sim.userkernel.live, "Sandbox", make)
    ctl = Controller(PretendGpuHeat())
    yield ctl
    ctl.kernel.drop()


def loaded(ctl, path) -> bool:
    assert ctl.kernel.load(str(path)), ctl.message

    def built() -> bool:
        ctl.watch_scene()
        return ctl.kernel.live.build is not None

    return wait_for(built)


def texts(ctl) -> list[str]:
    return [text for _, text in sanitizer_lines(ctl.kernel.live)]


def test_a_sanitized_step_runs_off_the_frame_thread_and_shows_each_finding(ctl, stand_in, tmp_path):
    assert loaded(ctl, write(tmp_path / "my_step.cu", GOOD))
    ctl.kernel.sanitizer_tool = "racecheck"
    assert ctl.kernel.sanitize()
    assert ctl.message == "my_step.cu: one step under compute-sanitizer racecheck…"
    assert wait_for(lambda: stand_in["runner"].requests)
    assert texts(ctl) == [
        f"compute-sanitizer racecheck: one step of {ctl.scene.n:,} cells running… (the scene steps on; up to 180 s)"
    ]
    assert not ctl.kernel.sanitize() and "still running" in ctl.message, "one run at a time"
    steps = ctl.scene.steps
    assert ctl.advance() and ctl.scene.steps > steps, "the scene steps on meanwhile"
    source, inputs, block, tool = stand_in["runner"].requests[0]
    assert source is ctl.kernel.live.build and tool == "racecheck" and block == (32, 4)
    assert not np.shares_memory(inputs["in"], ctl.scene.cpu.field), "the step's inputs are a copy"
    stand_in["runner"].release.set()
    assert wait_for(lambda: not ctl.kernel.live.sanitizer.running)
    kinds = [kind for kind, _ in sanitizer_lines(ctl.kernel.live)]
    assert kinds == ["error", "error", "warning"]
    assert texts(ctl)[0].startswith("heat_tile_race.cu:18: error: racecheck: this write races with the read at line 32")


def test_a_clean_step_says_none_found_and_a_missing_tool_says_how_to_get_it(ctl, stand_in, tmp_path):
    stand_in["runner"] = StandIn("memcheck_clean")
    assert loaded(ctl, write(tmp_path / "my_step.cu", GOOD))
    stand_in["runner"].release.set()
    assert ctl.kernel.sanitize()
    assert wait_for(lambda: not ctl.kernel.live.sanitizer.running)
    assert texts(ctl) == [
        f"compute-sanitizer memcheck: none found on one step of {ctl.scene.n:,} cells "
        "(out-of-bounds and misaligned accesses)"
    ]
    ctl.kernel.live.sanitizer._runner = StandIn(error=sanitizer.MISSING)
    ctl.kernel.live.sanitizer._runner.release.set()
    assert ctl.kernel.sanitize()
    assert wait_for(lambda: not ctl.kernel.live.sanitizer.running)
    assert sanitizer_lines(ctl.kernel.live) == [("error", f"compute-sanitizer memcheck: {sanitizer.MISSING}")]


def test_without_a_build_there_is_nothing_to_sanitize(ctl, stand_in, tmp_path):
    assert ctl.kernel.load(str(write(tmp_path / "my_step.cu", BROKEN)))
    assert wait_for(lambda: ctl.watch_scene() or ctl.kernel.live.diagnostics)
    assert not ctl.kernel.sanitize() and "compiled" in ctl.message and stand_in["runner"].requests == []


def test_a_gpu_fault_offers_the_sanitized_step_and_a_fault_of_the_worker_does_not(monkeypatch, stand_in, tmp_path):
    for box, offered in ((GpuFaultSandbox, True), (FakeSandbox, False)):
        monkeypatch.setattr(sim.userkernel.live, "Sandbox", lambda time_limit_s, box=box: box())
        ctl = Controller(PretendGpuHeat())
        try:
            assert loaded(ctl, write(tmp_path / "my_step.cu", GOOD.replace("cell by cell", "cell by cell, FAULTS")))
            ctl.advance()
            ctl.watch_scene()
            assert ctl.message.startswith("my_step.cu failed: the kernel faulted")
            assert ctl.message.endswith(SANITIZE_OFFER) == offered, ctl.message
        finally:
            ctl.kernel.drop()


@needs_egl
def test_the_panel_draws_the_sanitizer_row_and_its_findings(stand_in, monkeypatch, tmp_path):
    from viewer.headless import render_pixels
    from viewer.panel.style import PANEL_WIDTH

    monkeypatch.setattr(sim.userkernel.live, "Sandbox", lambda time_limit_s: FakeSandbox())
    ctl = Controller(PretendGpuHeat())
    width, height = 1000, 1800
    panel = np.s_[:, width - PANEL_WIDTH : width]
    try:
        assert loaded(ctl, write(tmp_path / "my_step.cu", GOOD))
        ctl.paused = True
        before = render_pixels(ctl.scene, width, height, panel=True).astype(int)
        stand_in["runner"].release.set()
        assert ctl.kernel.sanitize() and wait_for(lambda: not ctl.kernel.live.sanitizer.running)
        after = render_pixels(ctl.scene, width, height, panel=True).astype(int)
        changed = np.any(np.abs(after[panel] - before[panel]) > 30, axis=2).sum()
        assert changed > 500, "the findings should show in the panel"
    finally:
        ctl.kernel.drop()
