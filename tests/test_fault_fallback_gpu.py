"""A real GPU fault (a user's kernel writing through an illegal address, in the sandbox worker), then what
the user sees: ``check`` reports it without "Exception ignored" tracebacks, and the frames drawn after it
go through host uploads, fast (no 15 s stall) and equal to the host-upload picture.

Both make a kernel fault on purpose: marked ``gpu_fault``, they run after every other test (conftest)."""

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from gl_support import HostOnly, needs_egl

import viewer  # noqa: F401  first: it picks NVIDIA's EGL before any context loads libEGL
from sim.registry import create_scene
from sim.userkernel import faults

pytestmark = [pytest.mark.gpu, pytest.mark.gpu_fault]

ROOT = Path(__file__).resolve().parent.parent
ILLEGAL = ROOT / "tests" / "data" / "user_kernels" / "heat_illegal_address.cu"


def test_check_reports_a_fault_without_exception_ignored_tracebacks():
    result = subprocess.run([sys.executable, str(ROOT / "main.py"), "check", "heat", "--kernel-file", str(ILLEGAL),
                             "--sizes", "7000", "--seeds", "2", "--quiet"],
                            capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 1, result.stderr
    assert "fault" in result.stdout
    assert "Exception ignored" not in result.stderr and "Traceback" not in result.stderr, result.stderr


@needs_egl
def test_after_a_fault_frames_go_through_the_host_fast_and_right():
    from sim.heat import SPEC as HEAT
    from sim.heat.user_stage import StepStage
    from sim.userkernel import source as user_source
    from sim.userkernel.sandbox import Sandbox, SandboxError
    from viewer.headless import HeadlessRenderer, render_pixels

    scene = create_scene("heat", preset="seed", n=400 * 300, backend="gpu", seed=11)
    scene.advance_frame()
    before = render_pixels(HostOnly(scene), 600, 400, color_mode="temperature")  # the picture before any fault
    stage = StepStage()
    with Sandbox(time_limit_s=5.0) as box, pytest.raises(SandboxError) as caught:
        box.run(user_source.load(ILLEGAL, HEAT, "step"), stage.inputs(100 * 70, 0), (32, 8))
    assert caught.value.kind == "fault" and caught.value.device
    assert faults.seen() is not None

    with HeadlessRenderer(600, 400) as renderer:
        started = time.perf_counter()
        renderer.render(scene, color_mode="temperature")  # the same state, drawn after the fault
        after = renderer.pixels()
        seconds = [time.perf_counter() - started]
        assert renderer.view.feed.path == "host upload" and renderer.view.fault is not None
        for _ in range(5):
            scene.advance_frame()
            started = time.perf_counter()
            renderer.render(scene, color_mode="temperature")
            renderer.pixels()
            seconds.append(time.perf_counter() - started)
    differ = np.any(after != before, axis=2).mean()
    print(f"after the fault: frames {[round(s, 3) for s in seconds]} s, {differ:.1%} of pixels differ")
    assert before.std() > 5 and differ == 0, f"{differ:.1%} of the pixels differ from the picture before the fault"
    assert max(seconds) < 2.0, f"frames took {seconds} s (a stall is about 15 s)"
