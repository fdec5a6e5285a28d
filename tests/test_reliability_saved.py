"""Saved settings that cannot be used as saved: a saved count that cannot run (view starts with the preset's,
says so and the panel's message line too, a count on the command line is still refused), and in a window
(Xvfb) the scene combo restoring each scene's own saved preset and parameters; saved parameters stay with
their preset."""

from pathlib import Path

import pytest
import test_reliability_files as inputs
from test_reliability_files import run

from viewer.settings import Settings, settings_path
from viewer.window.display import display_problem

_PROBLEM = display_problem()
needs_display = pytest.mark.skipif(_PROBLEM is not None, reason=f"needs a display: {_PROBLEM}")
private_config = inputs.private_config  # autouse: every test's settings folder is its own


# --- a saved count that cannot run -------------------------------------------------------------------------------
def save(text: str) -> Path:
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def viewer_started(monkeypatch):
    """``view`` without a window: the scene and settings it would open the window with."""
    import viewer.window.display as display
    import viewer.window.launch as launch

    started = {}

    def fake_main(scene, width, height, settings=None, kernel=None, baseline=None):
        started.update(scene=scene, settings=settings)
        return 0

    monkeypatch.setattr(display, "display_problem", lambda: None)
    monkeypatch.setattr(launch, "main", fake_main)
    return started


@pytest.mark.parametrize("scene, preset, count", [("heat", "seed", 10**18), ("sdh", "course", 10**8)])
def test_view_starts_with_the_preset_count_when_the_saved_one_cannot_run(capsys, viewer_started, scene, preset, count):
    path = save(f'version = 1\nscene = "{scene}"\n[scenes.{scene}]\npreset = "{preset}"\ncount = {count}\n')
    code, _, err = run(capsys, "view")
    assert code == 0
    started = viewer_started["scene"]
    assert started.spec.name == scene and started.preset == preset
    assert started.target_n == started.spec.preset(preset).count
    assert f"saved count {count:,} of the {scene} scene in {path} cannot run" in err
    notices = viewer_started["settings"].notices
    assert len(notices) == 1 and str(path) in notices[0], "the panel's message line gets it too"


def test_a_count_given_on_the_command_line_is_still_refused(capsys, viewer_started):
    save('version = 1\nscene = "heat"\n[scenes.heat]\npreset = "seed"\ncount = 1000\n')
    code, _, err = run(capsys, "view", "heat", "--preset", "seed", "-n", "1e18")
    assert code == 2 and "saved count" not in err and viewer_started == {}


# --- in a window: the panel's message line, the scene combo ------------------------------------------------------
def open_viewer(scene, settings, tmp_path):
    from viewer.window.app import Viewer

    v = Viewer(scene, 900, 640, max_fps=None, screenshot_dir=tmp_path, settings=settings)
    v.controller.paused = True
    v.tick()
    return v


@needs_display
@pytest.mark.window
def test_the_panel_says_which_saved_count_was_ignored(tmp_path, capsys, viewer_started):
    path = save('version = 1\nscene = "heat"\n[scenes.heat]\npreset = "seed"\ncount = 1000000000000000000\n')
    assert run(capsys, "view")[0] == 0
    v = open_viewer(viewer_started["scene"], viewer_started["settings"], tmp_path)
    try:
        assert f"saved count 1,000,000,000,000,000,000 of the heat scene in {path}" in v.message
    finally:
        v.close()


@needs_display
@pytest.mark.window
def test_the_scene_combo_restores_each_scenes_own_preset_and_parameters(tmp_path, capsys):
    from sim import create_scene

    settings = Settings.load()
    v = open_viewer(create_scene("balls", preset="T"), settings, tmp_path)
    try:
        v.controller.set_param("gravity", 4.5)
        v.controller.switch_scene("heat")  # what the panel's scene combo calls
        assert v.scene.spec.name == "heat" and v.scene.preset == v.scene.spec.default_preset
        v.controller.set_param("factor", 0.1)
        v.controller.switch_scene("balls")
        assert v.scene.spec.name == "balls" and v.scene.preset == "T", "the saved preset, not drip"
        fresh_t = create_scene("balls", preset="T")
        for param in v.scene.params:
            expected = 4.5 if param.name == "gravity" else fresh_t.controls.param_value(param.name)
            assert v.scene.controls.param_value(param.name) == pytest.approx(expected), param.name
        v.controller.switch_scene("heat")
        assert v.scene.controls.param_value("factor") == pytest.approx(0.1)
    finally:
        v.close()
    saved = Settings.load()
    for name in ("balls", "heat"):
        own = {p.name for p in create_scene(name).spec.params}
        assert set(saved.scene(name)["params"]) <= own, f"another scene's parameter in {name}'s table"


@needs_display
@pytest.mark.window
def test_a_switch_to_a_saved_count_that_cannot_run_takes_the_presets(tmp_path, capsys):
    from sim import create_scene

    path = save('version = 1\n[scenes.sdh]\npreset = "course"\ncount = 100000000\n')
    v = open_viewer(create_scene("heat"), Settings.load(), tmp_path)
    try:
        v.controller.switch_scene("sdh")
        assert v.scene.spec.name == "sdh" and v.scene.preset == "course"
        assert v.scene.target_n == v.scene.spec.preset("course").count
        assert f"saved count 100,000,000 of the sdh scene in {path} cannot run" in v.message
        assert f"in {path}" in capsys.readouterr().err
    finally:
        v.close()


def test_saved_parameters_stay_with_their_preset():
    """``view balls --preset drip`` with T's friction saved: drip keeps its own friction."""
    from sim import create_scene
    from viewer.window.controller import Controller
    from viewer.window.persist import apply_scene

    scene = create_scene("balls", preset="drip")
    drip_friction = scene.controls.param_value("friction")
    assert apply_scene(Controller(scene), {"preset": "T", "params": {"friction": 2.0, "gravity": 3.0}}) == []
    assert scene.controls.param_value("friction") == drip_friction and scene.controls.param_value("gravity") != 3.0
    apply_scene(Controller(scene), {"preset": "drip", "params": {"gravity": 3.0}})
    assert scene.controls.param_value("gravity") == pytest.approx(3.0)
