"""The viewer's parts wired by composition: the controller's guarded ``act``, its GPU switches as a
collaborator, the key table below both the panel and the window. No window or GL needed."""

import ast
from pathlib import Path

import pytest
from gl_support import needs_egl

from sim import create_scene
from viewer.keys import dispatch_key, key
from viewer.window.controller import Controller

VIEWER = Path(__file__).resolve().parent.parent / "viewer"


@pytest.fixture
def ctl():
    return Controller(create_scene("balls", preset="block", n=200, seed=3))


def test_act_says_what_was_done_and_reports_success(ctl):
    calls = []
    assert ctl.act("thing", calls.append, 7, done=lambda: f"did {calls}") is True
    assert calls == [7] and ctl.message == "did [7]"
    assert ctl.act("quiet", calls.append, 8) is True and ctl.message == "did [7]"


def test_act_turns_an_exception_into_the_message_line(ctl):
    def broken(value):
        raise ValueError(f"{value} is out of reach")

    assert ctl.act("setting reach", broken, 3, done="never said") is False
    assert ctl.message == "setting reach failed: 3 is out of reach"


def test_a_failed_reset_keeps_the_step_rate_and_says_why(ctl, monkeypatch):
    def broken():
        raise RuntimeError("device lost")

    ctl.advance()
    ctl.advance()
    rate = ctl.step_rate.rate
    assert rate > 0
    monkeypatch.setattr(ctl.scene, "reset", broken)
    ctl.reset()
    assert ctl.message == "reset failed: device lost" and ctl.step_rate.rate == rate
    monkeypatch.undo()
    ctl.reset()
    assert ctl.message == "reset preset block" and ctl.step_rate.rate == 0.0


def test_the_gpu_switches_act_through_their_controller(ctl):
    assert ctl.gpu.ctl is ctl and ctl.gpu.scene is ctl.scene
    ctl.switch_scene("heat")
    assert ctl.gpu.scene is ctl.scene and ctl.scene.spec.name == "heat"
    if ctl.gpu.reason() is None:
        pytest.skip("this machine runs the scene on a GPU")
    dispatch_key(key.Q, 0, ctl, ctl.gpu)
    assert ctl.message.startswith("q: needs a GPU")


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_panel_imports_nothing_of_the_window():
    upward = {path.name: sorted(m for m in _imported_modules(path) if m.startswith("viewer.window"))
              for path in (VIEWER / "panel").glob("*.py")}
    assert {name: mods for name, mods in upward.items() if mods} == {}


@needs_egl
def test_one_composer_draws_the_view_and_the_imgui_frame_over_it():
    """The frame the window, the headless renderer and the frame bench draw: the view alone without
    the ImGui layer, the legend over its corner with it, and an abandoned layer says so."""
    from viewer.frame import FrameComposer, offscreen_surface
    from viewer.panel.gui import Gui
    from viewer.render.view import SceneView, default_camera

    size = (480, 320)
    scene = create_scene("density", n=2000)
    surface = offscreen_surface(*size)
    view = SceneView(surface.ctx)
    gui = Gui(surface.ctx)
    try:
        composer = FrameComposer(view, gui)
        view.show(scene, next(iter(scene.color_modes)))
        camera = default_camera(view.current)
        area = (0.0, 0.0, float(size[0]), float(size[1]))
        composer.draw(surface.fbo, camera, size)
        bare = surface.offscreen.read_rgb()
        overlaid = []
        for _ in range(2):  # ImGui sizes auto-resized windows on their first frame
            assert composer.compose_ui(size, size, 1 / 60, area, lambda: overlaid.append(1) or True) is True
        composer.draw(surface.fbo, camera, size, ui=True)
        with_legend = surface.offscreen.read_rgb()
        assert overlaid == [1, 1]
        corner = (slice(size[1] - 100, size[1]), slice(0, 240))  # the legend's bottom-left corner
        assert (bare[corner] != with_legend[corner]).any(axis=-1).sum() > 500
        top_right = (slice(0, 60), slice(size[0] - 60, size[0]))
        assert (bare[top_right] == with_legend[top_right]).all(), "the legend stays in its corner"
        assert composer.compose_ui(size, size, 1 / 60, area, lambda: False) is False
    finally:
        gui.release()
        view.release()
        surface.close()


@needs_egl
def test_headless_pictures_are_the_composers_frames():
    from viewer.headless import HeadlessRenderer

    scene = create_scene("density", n=2000)
    with HeadlessRenderer(480, 320) as renderer:
        renderer.render(scene)
        first = renderer.pixels()
        assert renderer.composer.view is renderer.view and renderer.composer.gui is not None  # a legend
        renderer.render(scene)
        assert (renderer.pixels() == first).all()
