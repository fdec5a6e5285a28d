"""Key table, dispatcher and controller: no window or GL needed."""

import math

import pytest

from sim import create_scene
from sim.registry import SCENES
from viewer.keys import BINDINGS, bindings_for, dispatch_key, find_binding, key, scene_bindings
from viewer.window.actions import WindowActions
from viewer.window.app import display_problem
from viewer.window.controller import Controller
from viewer.window.gpu_switches import GpuSwitches


@pytest.mark.parametrize("spec", SCENES.values(), ids=SCENES)
def test_bindings_are_unique_and_every_action_exists(spec):
    seen = set()
    for binding in BINDINGS + scene_bindings(spec):
        shifts = (False, True) if binding.shift is None else (binding.shift,)
        ctrls = (False, True) if binding.ctrl is None else (binding.ctrl,)
        for shift in shifts:
            for ctrl in ctrls:
                assert (binding.symbol, shift, ctrl) not in seen, f"{binding.label} bound twice"
                seen.add((binding.symbol, shift, ctrl))
        owners = [owner for owner in (WindowActions, Controller, GpuSwitches) if hasattr(owner, binding.action)]
        assert owners and callable(getattr(owners[0], binding.action)), f"{binding.label}: no {binding.action}"
        assert binding.help


def test_original_keys_are_all_bound():
    labels = {b.label for b in bindings_for(SCENES["balls"])}
    assert {"F4", "a", "v", "t", "T", "c", "q", "Q", "Space", "s", "r", "F1", "F12", "Esc"} <= labels
    assert {b.label for b in BINDINGS if b.shown} == {"a", "v", "c", "q", "Q", "Space", "s", "r", "R", "Home", "F1",
                                                      "F11", "F12", "Esc", "1…4", "Ctrl+1…4"}


def test_bookmark_keys_tell_ctrl_apart():
    for n, symbol in zip("1234", (key._1, key._2, key._3, key._4), strict=True):
        assert (find_binding(symbol, 0).action, find_binding(symbol, 0).arg) == ("restore_bookmark", n)
        saving = find_binding(symbol, key.MOD_CTRL)
        assert (saving.action, saving.arg) == ("save_bookmark", n)
    assert find_binding(key.R, key.MOD_SHIFT).action == "toggle_recording"
    assert find_binding(key.R, 0).action == "reset"


def test_scene_keys_come_from_the_spec():
    balls = {b.label: b.help for b in scene_bindings(SCENES["balls"])}
    assert set(balls) == {"t", "T", "F4"}
    assert "load preset t" in balls["t"] and "load preset T" in balls["T"] and "CUDA proximity" in balls["F4"]
    assert scene_bindings(SCENES["particles"]) == ()


def test_no_scene_key_shadows_a_viewer_key():
    viewer_keys = {(b.symbol, s) for b in BINDINGS for s in ((False, True) if b.shift is None else (b.shift,))}
    for spec in SCENES.values():
        for binding in scene_bindings(spec):
            shifts = (False, True) if binding.shift is None else (binding.shift,)
            assert not any((binding.symbol, s) in viewer_keys for s in shifts), f"{spec.name}: {binding.label}"


def test_shift_selects_capital_bindings():
    assert (find_binding(key.T, 0).action, find_binding(key.T, 0).arg) == ("scene_key", "t")
    assert (find_binding(key.T, key.MOD_SHIFT).action, find_binding(key.T, key.MOD_SHIFT).arg) == ("scene_key", "T")
    assert find_binding(key.Q, key.MOD_SHIFT).action == "cycle_block_size"
    assert find_binding(key.SPACE, key.MOD_SHIFT).action == "toggle_pause"
    assert find_binding(key.Z, 0) is None


def test_dispatch_runs_the_first_target_that_has_the_action():
    calls = []

    class Target:
        def toggle_pause(self):
            calls.append("pause")

    assert dispatch_key(key.SPACE, 0, object(), Target()).action == "toggle_pause"
    assert calls == ["pause"]
    assert dispatch_key(key.Z, 0, Target()) is None


@pytest.fixture
def controller():
    return Controller(create_scene("balls", preset="block", n=200, seed=3))


def test_gpu_switches_explain_without_changing_anything(controller):
    if controller.gpu.reason() is None:
        pytest.skip("this machine runs the scene on a GPU")
    for symbol, modifiers in ((key.A, 0), (key.F4, 0), (key.V, 0), (key.C, 0), (key.Q, 0), (key.Q, key.MOD_SHIFT)):
        mode, backend = controller.color_mode, controller.scene.backend
        dispatch_key(symbol, modifiers, controller, controller.gpu)
        assert "needs a GPU" in controller.message
        assert controller.color_mode == mode and controller.scene.backend == backend
    controller.gpu.set_backend("gpu")
    assert controller.scene.backend == "cpu"
    assert "unavailable" in controller.message


def test_bad_values_become_messages(controller):
    name = controller.scene.params[0].name
    before = controller.scene.controls.param_value(name)
    for bad in (math.nan, "junk", None):
        controller.set_param(name, bad)
        assert controller.scene.controls.param_value(name) == before
    controller.set_param(name, 1e300)
    assert "out of range" in controller.message
    controller.load_preset("nope")
    assert "failed" in controller.message
    controller.set_color_mode("nope")
    assert controller.color_mode in controller.scene.color_modes


def test_a_failing_step_pauses_and_reports(controller):
    def broken(most=None):
        raise RuntimeError("kaboom")

    controller.scene.advance_frame = broken
    assert controller.advance() is False
    assert controller.paused
    assert "kaboom" in controller.message


def test_pause_step_reset(controller):
    assert controller.advance()
    controller.toggle_pause()
    assert controller.paused and controller.advance() is False
    steps = controller.scene.steps
    controller.single_step()
    assert controller.scene.steps == steps + 1
    controller.reset()
    assert controller.scene.steps == 0


def test_display_problem_without_display(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert display_problem() == "no display: DISPLAY is not set"


def test_display_problem_with_a_bad_display(monkeypatch):
    monkeypatch.setenv("DISPLAY", ":12345")
    problem = display_problem()
    assert problem is not None and "12345" in problem


def test_scene_keys_load_the_spec_presets_and_say_why_elsewhere():
    ctl = Controller(create_scene("balls", preset="block", n=200, seed=3))
    dispatch_key(key.T, key.MOD_SHIFT, ctl)
    assert (ctl.scene.preset, ctl.scene.n) == ("T", 1715) and ctl.message == "loaded preset T: 1,715 balls"
    ctl.switch_scene("density")
    dispatch_key(key.T, 0, ctl)
    assert ctl.message == "t: preset t of the balls scene: it does not apply to the density scene"
    dispatch_key(key.F4, 0, ctl)
    assert ctl.message == "F4: CUDA proximity of the balls scene: it does not apply to the density scene"
