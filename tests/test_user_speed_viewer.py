"""The live "Your kernel" section's compiled facts and speed-of-light figures, and the "Speed of light"
section's row and dot for the kernel beside the built-in's, without a window (a heat scene that believes a
GPU is there, a sandbox that runs the CPU twin: tests/user_fakes.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_user_speed import PEAKS
from user_fakes import GOOD, FakeSandbox, PretendGpuHeat, wait_for, write

import sim.userkernel.live
from sim.gpu.roofline import Setup, analyse, models
from viewer.panel.speed_of_light import SpeedOfLightSection, recent_ms, scene_perf
from viewer.panel.user_kernel import kernel_lines
from viewer.window.controller import Controller

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")


@pytest.fixture
def ctl(monkeypatch):
    monkeypatch.setattr(sim.userkernel.live, "Sandbox", lambda time_limit_s: FakeSandbox())
    ctl = Controller(PretendGpuHeat())
    yield ctl
    ctl.kernel.drop()


def load(ctl, path) -> None:
    assert ctl.kernel.load(str(path)), ctl.message

    def taken() -> bool:
        ctl.watch_scene()
        return ctl.kernel.live.build is not None and not ctl.kernel.live.checking

    assert wait_for(taken)


def test_the_section_shows_what_the_compiler_made_and_the_kernels_figures(ctl, tmp_path):
    load(ctl, write(tmp_path / "my_step.cu", GOOD))
    ctl.advance()
    sol = SpeedOfLightSection(peaks_of=lambda device: PEAKS)
    lines = [text for _, text in kernel_lines(ctl, sol)]
    compiled = [line for line in lines if line.startswith("compiled for sm_90: ")]
    assert compiled[0].startswith("compiled for sm_90: registers ") and "a thread" in compiled[0]
    assert any("local memory 0 B stack frame" in line for line in compiled)
    assert any("occupancy on sm_90: 100% (16 blocks of 128 threads" in line for line in compiled)
    scene = ctl.scene
    ms = recent_ms(scene.timer, "step")
    setup = replace(Setup.of_scene(scene, steps=max(scene.frame_steps, 1.0)), variant="my_step.cu")
    want = analyse("my_step.cu", models(scene.spec, setup)["step"], ms, PEAKS)
    mine = next(line for line in lines if line.startswith("speed of light, yours: "))
    assert f"{want.gbs:,.1f} GB/s ({want.copy_pct:.0f}% of copy)" in mine and "of the speed-of-light limit" in mine
    # without peaks: rates alone
    bare = SpeedOfLightSection(peaks_of=lambda device: None)
    rates = next(text for _, text in kernel_lines(ctl, bare) if text.startswith("speed of light, yours: "))
    assert rates.endswith("(rates only: no peaks for this device)") and "%" not in rates


def test_the_roofline_has_the_kernels_dot_beside_the_builtins_before_it(ctl, tmp_path):
    sol = SpeedOfLightSection(peaks_of=lambda device: PEAKS)
    scene = ctl.scene
    ctl.advance()
    builtin = sol._beside_yours(scene, scene_perf(scene, PEAKS))
    assert [p.stage for p in builtin] == ["step"] and sol.mine is None
    load(ctl, write(tmp_path / "my_step.cu", GOOD))
    for _ in range(3):
        ctl.advance()
    assert scene.knobs.user_runs()
    perfs = sol._beside_yours(scene, scene_perf(scene, PEAKS))
    names = [p.stage for p in perfs]
    assert names == ["my_step.cu", f"step: {scene.knobs.variant}, before yours"]
    assert sol.mine is perfs[0] and sol.before.gbs == builtin[0].gbs  # the built-in's own figures, kept
    assert perfs[0].model.bytes_actual == 8.0  # the kernel's model: a cell read and written, no variant's tricks
    lines = [text for _, text in kernel_lines(ctl, sol)]
    assert any(line.startswith(f"step: {scene.knobs.variant}, before yours: ") for line in lines)
