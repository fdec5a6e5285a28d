"""Settings that last: a round trip through the TOML file, a damaged or outdated file reported in one
line and ignored, the command line's share (scene, preset, count, backend, size), and in a window
(Xvfb) sliders, colour mode and range, camera, bookmarks, panel layout and UI scale restored after a
restart; bookmarks restore the camera. Tests never touch the user's config folder."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sim import create_scene
from sim.cmdline.requests import SceneRequest, ViewRequest
from sim.registry import SCENES
from viewer.settings import FOLDER_VARIABLE, VERSION, Settings, settings_path
from viewer.window.display import display_problem

ROOT = Path(__file__).resolve().parent.parent
_PROBLEM = display_problem()


@pytest.fixture(autouse=True)
def private_config(tmp_path, monkeypatch):
    """Every test's settings folder is its own."""
    monkeypatch.setenv(FOLDER_VARIABLE, str(tmp_path / "config"))
    return tmp_path / "config"


def test_the_folder_comes_from_the_environment(private_config):
    assert settings_path() == private_config / "settings.toml"
    assert settings_path(private_config / "x") == private_config / "x" / "settings.toml"


def test_round_trip(private_config):
    settings = Settings.load()
    assert settings.problem == "" and settings.data == {"version": VERSION}
    settings.data.update(scene="particles", backend="cpu")
    settings.scene("particles").update(
        preset="2020", count=5000, params={"a": 1.5}, block=[16, 16], color_ranges={"speed": (0.0, 2.0)}
    )
    settings.table("window").update(width=1000, height=700, ui_scale=1.5)
    assert settings.save() is None
    again = Settings.load()
    assert again.problem == ""
    assert again.data["scene"] == "particles" and again.scene("particles")["count"] == 5000
    assert again.scene("particles")["color_ranges"] == {"speed": [0.0, 2.0]}
    assert again.table("window") == {"width": 1000, "height": 700, "ui_scale": 1.5}


@pytest.mark.parametrize(
    "text, says",
    [
        ("version = 1\nscene = [unclosed", "is not valid TOML"),
        ("version = 99\nscene = 'balls'\n", "from another version"),
        ("scene = 'balls'\n", "from another version"),
        ("version = 1\nwindow = 3\n", "damaged"),
        ("version = 1\n[scenes]\nballs = 'x'\n", "damaged"),
    ],
)
def test_a_bad_file_is_reported_in_one_line_and_ignored(private_config, text, says):
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text(text)
    settings = Settings.load()
    assert says in settings.problem and "\n" not in settings.problem and "ignored" in settings.problem
    assert settings.data == {"version": VERSION}
    got = settings.filled(view_request(), SCENES)
    assert (got.scene.scene, got.scene.preset, got.scene.backend, got.size) == (None, None, "cpu", None)


def test_the_command_line_share(private_config):
    settings = Settings(None)
    settings.data.update(scene="balls", backend="gpu")
    settings.scene("balls").update(preset="block", count=3000)
    settings.table("window").update(width=1100, height=650)
    got = settings.filled(view_request(), SCENES)
    assert (got.scene.scene, got.scene.preset, got.scene.count, got.scene.backend, got.size) == (
        "balls",
        "block",
        3000,
        "auto",
        (1100, 650),
    )
    assert settings.forget_count(got.scene, "too many") and not settings.forget_count(got.scene, "again")
    given = settings.filled(view_request("balls", "T", "cpu", (800, 600)), SCENES)
    assert (given.scene.preset, given.scene.count, given.scene.backend, given.size) == ("T", None, "cpu", (800, 600)), (
        "given wins"
    )
    assert not settings.forget_count(given.scene, "too many"), "a count the file did not give is not forgotten"
    settings.scene("balls")["preset"] = "no-such-preset"
    assert settings.filled(view_request(), SCENES).scene.preset is None, "a stale preset is dropped"


def view_request(scene=None, preset=None, backend=None, size=None) -> ViewRequest:
    return ViewRequest(SceneRequest(scene, backend, preset), size, None, False, None, None)


def test_view_reports_a_damaged_file_and_starts(private_config):
    """``python main.py view`` with a damaged file: one line on stderr, then the viewer (no display
    here: the headless advice), never a traceback."""
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text("version = 1\n[[[")
    env = {**__import__("os").environ, FOLDER_VARIABLE: str(private_config)}
    env.pop("DISPLAY", None)
    result = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "view"], capture_output=True, text=True, env=env, timeout=60, cwd=ROOT
    )
    assert "Traceback" not in result.stderr and "cannot open the viewer window" in result.stderr


# --- in a window ---------------------------------------------------------------------------------------------
needs_display = pytest.mark.skipif(_PROBLEM is not None, reason=f"needs a display: {_PROBLEM}")


def open_viewer(scene, settings, tmp_path):
    from viewer.window.app import Viewer

    v = Viewer(scene, 900, 640, max_fps=None, screenshot_dir=tmp_path, settings=settings)
    v.controller.paused = True
    for _ in range(3):
        v.tick()
    return v


def press(v, symbol, modifiers=0):
    v.window.dispatch_event("on_key_press", symbol, modifiers)
    v.window.dispatch_event("on_key_release", symbol, modifiers)
    v.tick()


@needs_display
def test_the_window_restores_what_it_saved(tmp_path):
    from viewer.keys import key
    from viewer.panel import style

    v = open_viewer(create_scene("balls", preset="T"), Settings.load(), tmp_path)
    try:
        v.controller.set_param("gravity", 4.5)
        v.controller.set_color_mode("height")
        v.controller.set_color_range("height", (-10.0, 5.0))
        v.camera.orbit(120, -40)
        v.camera.zoom(0.7)
        press(v, key._2, key.MOD_CTRL)
        camera = (v.camera.target.copy(), v.camera.distance, v.camera.yaw, v.camera.pitch)
        v.ui_scale = 1.25
        v.tick()
    finally:
        v.close()
    saved = Settings.load()
    assert saved.problem == "" and saved.data["scene"] == "balls"
    assert saved.scene("balls")["params"]["gravity"] == pytest.approx(4.5)
    assert saved.table("panel")["open"]["Counters"] is True, "the panel's layout is kept"
    saved.table("panel")["open"]["Stage times (ms per frame)"] = False  # as if folded by a click
    style.layout.clear()
    w = open_viewer(create_scene("balls", preset="T"), saved, tmp_path)
    try:
        assert w.scene.controls.param_value("gravity") == pytest.approx(4.5)
        assert w.controller.color_mode == "height" and w.scene.color_scales.ranges["height"] == (-10.0, 5.0)
        assert w.view.legend.lo == -10.0 and w.view.legend.hi == 5.0
        np.testing.assert_allclose(w.camera.target, camera[0])
        assert (w.camera.distance, w.camera.yaw, w.camera.pitch) == pytest.approx(camera[1:])
        assert "2" in w.bookmarks and w.ui_scale == pytest.approx(1.25)
        assert style.panel_width() == pytest.approx(1.25 * style.PANEL_WIDTH)
        assert style.layout["Stage times (ms per frame)"] is False
    finally:
        w.ui_scale = 1.0
        w.tick()
        w.close()
        style.layout.clear()
        style.set_ui_scale(1.0)


@needs_display
def test_bookmarks_restore_the_camera(tmp_path):
    from viewer.keys import key

    v = open_viewer(create_scene("balls", preset="T"), None, tmp_path)
    try:
        press(v, key._1)
        assert "no camera bookmark 1" in v.message
        v.camera.orbit(60, 20)
        press(v, key._1, key.MOD_CTRL)
        kept = (v.camera.target.copy(), v.camera.distance, v.camera.yaw, v.camera.pitch)
        v.camera.orbit(-200, 35)
        v.camera.zoom(2.0)
        v.camera.pan(30, 10, 640)
        assert v.camera.yaw != pytest.approx(kept[2])
        press(v, key._1)
        np.testing.assert_allclose(v.camera.target, kept[0])
        assert (v.camera.distance, v.camera.yaw, v.camera.pitch) == pytest.approx(kept[1:])
        assert v.message == "camera bookmark 1"
    finally:
        v.close()


@needs_display
def test_no_settings_are_written_without_a_settings_file(tmp_path, private_config):
    v = open_viewer(create_scene("particles", n=500), None, tmp_path)
    v.close()
    assert not private_config.exists()


@needs_display
def test_switching_scenes_keeps_each_scenes_sliders(tmp_path):
    v = open_viewer(create_scene("balls", preset="T"), None, tmp_path)
    try:
        v.controller.set_param("friction", 0.5)
        v.controller.switch_scene("particles")
        v.tick()
        v.controller.switch_scene("balls")
        v.tick()
        assert v.scene.controls.param_value("friction") == pytest.approx(0.5)
    finally:
        v.close()
