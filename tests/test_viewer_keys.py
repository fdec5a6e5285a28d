"""Key table, dispatcher and controller: no window or GL needed."""

import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from sim import create_scene
from sim.registry import SCENES
from viewer.keys import BINDINGS, KeyMap, KeyTargets, bindings_for, find_binding, key, scene_bindings
from viewer.window.actions import WindowActions
from viewer.window.controller import Controller
from viewer.window.display import display_problem


def window_actions(controller) -> WindowActions:
    """The window's actions without a window: the keys only bind to them."""
    return WindowActions(SimpleNamespace(window=None), None, controller, None, None, None, None, Path("."))


class Recorder:
    """Stands for the controller or the window's actions: notes every call, with its arguments."""

    def __init__(self):
        self.calls = []
        self.gpu = self

    def __getattr__(self, name):
        return lambda *args: self.calls.append((name, *args))


@pytest.mark.parametrize("spec", SCENES.values(), ids=SCENES)
def test_bindings_are_unique_and_every_action_exists(spec):
    controller = Controller(create_scene(spec.name, **({"n": 200} if spec.preset(spec.default_preset).count else {})))
    targets = KeyTargets(controller, window_actions(controller))
    seen = set()
    for binding in BINDINGS + scene_bindings(spec):
        shifts = (False, True) if binding.shift is None else (binding.shift,)
        ctrls = (False, True) if binding.ctrl is None else (binding.ctrl,)
        for shift in shifts:
            for ctrl in ctrls:
                assert (binding.symbol, shift, ctrl) not in seen, f"{binding.label} bound twice"
                seen.add((binding.symbol, shift, ctrl))
        action = binding.bind(targets)
        assert callable(action), f"{binding.label}: no action"
        assert binding.help


def test_original_keys_are_all_bound():
    labels = {b.label for b in bindings_for(SCENES["balls"])}
    assert {"F4", "a", "v", "t", "T", "c", "q", "Q", "Space", "s", "r", "F1", "F12", "Esc"} <= labels
    assert {b.label for b in BINDINGS if b.shown} == {
        "a",
        "v",
        "c",
        "q",
        "Q",
        "Space",
        "s",
        "r",
        "R",
        "Home",
        "F1",
        "F11",
        "F12",
        "Esc",
        "1…4",
        "Ctrl+1…4",
    }


def test_bookmark_keys_tell_ctrl_apart():
    controller, window = Recorder(), Recorder()
    keys = KeyMap(controller, window)
    for n, symbol in zip("1234", (key._1, key._2, key._3, key._4), strict=True):
        assert keys.press(symbol, 0).label == ("1…4" if n == "1" else n)
        assert keys.press(symbol, key.MOD_CTRL).label == ("Ctrl+1…4" if n == "1" else f"Ctrl+{n}")
        assert window.calls[-2:] == [("restore_bookmark", n), ("save_bookmark", n)]
    keys.press(key.R, key.MOD_SHIFT)
    keys.press(key.R, 0)
    assert window.calls[-1] == ("toggle_recording",) and controller.calls == [("reset",)]


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
    assert find_binding(key.T, 0).label == "t" and find_binding(key.T, key.MOD_SHIFT).label == "T"
    assert find_binding(key.Q, key.MOD_SHIFT).label == "Q" and find_binding(key.Q, 0).label == "q"
    assert find_binding(key.SPACE, key.MOD_SHIFT).label == "Space"
    assert find_binding(key.Z, 0) is None
    controller = Recorder()
    keys = KeyMap(controller)
    for symbol, modifiers in ((key.T, 0), (key.T, key.MOD_SHIFT), (key.Q, key.MOD_SHIFT), (key.SPACE, key.MOD_SHIFT)):
        keys.press(symbol, modifiers)
    assert controller.calls == [("scene_key", "t"), ("scene_key", "T"), ("cycle_block_size",), ("toggle_pause",)]


def test_the_key_map_runs_the_bound_callable_and_leaves_window_keys_out_without_a_window():
    controller, window = Recorder(), Recorder()
    assert KeyMap(controller).press(key.SPACE, 0).label == "Space" and controller.calls == [("toggle_pause",)]
    assert KeyMap(controller).press(key.F12, 0) is None and KeyMap(controller).press(key.Z, 0) is None
    assert KeyMap(controller, window).press(key.F12, 0).label == "F12" and window.calls == [("screenshot",)]
    assert controller.calls == [("toggle_pause",)]
    bound = {b.label for b, _ in KeyMap(controller, window).bound}
    assert {b.label for b in BINDINGS} <= bound, "with a window every viewer key is bound"


@pytest.fixture
def controller():
    return Controller(create_scene("balls", preset="block", n=200, seed=3))


def test_gpu_switches_explain_without_changing_anything(controller):
    if controller.gpu.reason() is None:
        pytest.skip("this machine runs the scene on a GPU")
    for symbol, modifiers in ((key.A, 0), (key.F4, 0), (key.V, 0), (key.C, 0), (key.Q, 0), (key.Q, key.MOD_SHIFT)):
        mode, backend = controller.color_mode, controller.scene.backend
        KeyMap(controller).press(symbol, modifiers)
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
    keys = KeyMap(ctl)
    keys.press(key.T, key.MOD_SHIFT)
    assert (ctl.scene.preset, ctl.scene.n) == ("T", 1715) and ctl.message == "loaded preset T: 1,715 balls"
    ctl.switch_scene("density")
    keys.press(key.T, 0)
    assert ctl.message == "t: preset t of the balls scene: it does not apply to the density scene"
    keys.press(key.F4, 0)
    assert ctl.message == "F4: CUDA proximity of the balls scene: it does not apply to the density scene"
