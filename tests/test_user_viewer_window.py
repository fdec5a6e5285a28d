"""A user's own kernel and the viewer's window: ``view --kernel-file`` (a bad file or stage: exit 2 before a
window; a good one, even one that does not compile, opens it with the kernel), the panel drawn with the
kernel's messages, and a window that keeps running through a save that does not compile. The controller and
the panel's text: test_user_viewer.py. A fake sandbox runs the CPU twin (tests/user_fakes.py)."""

import dataclasses

import numpy as np
import pytest
import test_user_viewer as user_viewer
from gl_support import needs_egl
from test_user_viewer import loaded
from user_fakes import BROKEN, GOOD, STAGE, PretendGpuHeat, wait_for, write

import sim.registry
from sim.heat import SPEC as HEAT
from viewer.window.controller import Controller

fake_sandbox = user_viewer.fake_sandbox  # its fixture: every live stage the viewer makes runs on a FakeSandbox


# --- view --kernel-file ---------------------------------------------------------------------------------
@pytest.fixture
def heat_with_a_stage(monkeypatch):
    """The heat scene with a replaceable stage where it declares none yet, and no window needed."""
    import viewer.window.display
    import viewer.window.launch

    if not HEAT.user_stages:
        monkeypatch.setitem(sim.registry.SCENES, "heat", dataclasses.replace(HEAT, user_stages=(STAGE,)))
    monkeypatch.setattr(viewer.window.display, "display_problem", lambda: None)
    monkeypatch.setattr(viewer.window.launch, "main", lambda *a, **k: pytest.fail("the window must not open"))


def test_view_with_a_missing_kernel_file_exits_2_before_the_window(cli, heat_with_a_stage, tmp_path):
    missing = tmp_path / "my_step.cu"
    ran = cli("view", "heat", "--no-settings", "--kernel-file", missing)
    assert ran.returncode == 2
    assert "my_step.cu" in ran.stderr and "does not exist" in ran.stderr and len(ran.stderr.splitlines()) == 1


def test_view_with_an_unknown_stage_exits_2_naming_the_stages(cli, heat_with_a_stage, tmp_path):
    path = write(tmp_path / "my_step.cu", GOOD)
    ran = cli("view", "heat", "--no-settings", "--kernel-file", path, "--stage", "nope")
    assert ran.returncode == 2 and "'nope'" in ran.stderr and "step" in ran.stderr


def test_view_with_a_kernel_file_opens_the_window_with_it(cli, heat_with_a_stage, monkeypatch, tmp_path):
    import viewer.window.launch

    opened = {}

    def window(scene, *size, **kwargs):
        opened.update(kwargs, scene=scene)
        return 0

    monkeypatch.setattr(viewer.window.launch, "main", window)
    path = write(tmp_path / "my_step.cu", BROKEN)
    ran = cli("view", "heat", "--no-settings", "--kernel-file", path)
    assert ran.returncode == 0, "a compile error does not stop the viewer: the panel shows it"
    assert opened["kernel"].variant == "my_step.cu" and opened["kernel"].text == BROKEN
    assert opened["kernel"].stage.name == "step" and opened["scene"].spec.name == "heat"


def test_view_stage_without_a_kernel_file_exits_2(cli, heat_with_a_stage):
    ran = cli("view", "heat", "--no-settings", "--stage", "step")
    assert ran.returncode == 2 and "--kernel-file" in ran.stderr


# --- drawn ------------------------------------------------------------------------------------------------
@needs_egl
def test_the_panel_draws_the_kernels_messages(fake_sandbox, tmp_path):
    from viewer.headless import render_pixels
    from viewer.panel.style import PANEL_WIDTH

    ctl = Controller(PretendGpuHeat())
    width, height = 1000, 1800
    panel = np.s_[:, width - PANEL_WIDTH : width]
    path = write(tmp_path / "my_step.cu", GOOD)
    try:
        assert loaded(ctl, path)
        ctl.single_step()  # a kernel time: the attempts' plot is drawn too
        good = render_pixels(ctl.scene, width, height, panel=True).astype(int)
        assert loaded(ctl, write(path, BROKEN))
        broken = render_pixels(ctl.scene, width, height, panel=True).astype(int)
        changed = np.any(np.abs(broken[panel] - good[panel]) > 30, axis=2).sum()
        assert changed > 500, "the compile error should show in the panel"
    finally:
        ctl.kernel.drop()


def _display_problem():
    from viewer.window.display import display_problem

    return display_problem()


@pytest.mark.window
@pytest.mark.skipif(_display_problem() is not None, reason=f"needs a display: {_display_problem()}")
def test_the_window_keeps_running_through_a_save_that_does_not_compile(fake_sandbox, tmp_path):
    from viewer.window.app import Viewer

    path = write(tmp_path / "my_step.cu", GOOD)
    viewer = Viewer(PretendGpuHeat(), 900, 700, max_fps=None)
    try:
        viewer.controller.kernel.load(str(path))
        assert wait_for(lambda: viewer.tick() and viewer.scene.knobs.user.steps_run > 0)
        write(path, BROKEN)
        assert wait_for(lambda: viewer.tick() and "does not compile" in viewer.message)
        steps = viewer.scene.steps
        for _ in range(3):
            assert viewer.tick()
        assert viewer.scene.steps > steps and fake_sandbox[-1].runs[-1] == GOOD
    finally:
        viewer.close()
    assert fake_sandbox[-1].closed, "closing the window stops the sandbox"
