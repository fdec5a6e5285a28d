"""The viewer's parts wired by composition: the controller's guarded ``act``, its GPU switches as a
collaborator, the key table below both the panel and the window. No window or GL needed."""

import ast
from pathlib import Path

import pytest
from gl_support import needs_egl

from sim import create_scene
from viewer.keys import KeyMap, key
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
    KeyMap(ctl).press(key.Q, 0)
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
    upward = {
        path.name: sorted(m for m in _imported_modules(path) if m.startswith("viewer.window"))
        for path in (VIEWER / "panel").glob("*.py")
    }
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
            assert composer.compose_ui(size, size, 1 / 60, area, lambda fb: overlaid.append(fb) or True) is True
        composer.draw(surface.fbo, camera, size, ui=True)
        with_legend = surface.offscreen.read_rgb()
        assert overlaid == [size, size]
        corner = (slice(size[1] - 100, size[1]), slice(0, 240))  # the legend's bottom-left corner
        assert (bare[corner] != with_legend[corner]).any(axis=-1).sum() > 500
        top_right = (slice(0, 60), slice(size[0] - 60, size[0]))
        assert (bare[top_right] == with_legend[top_right]).all(), "the legend stays in its corner"
        assert composer.compose_ui(size, size, 1 / 60, area, lambda fb: False) is False
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


@pytest.fixture
def window(tmp_path):
    from viewer.window.display import display_problem

    problem = display_problem()
    if problem is not None:
        pytest.skip(f"needs a display: {problem}")
    from viewer.window.app import Viewer

    v = Viewer(create_scene("balls", preset="block", n=300, seed=3), 900, 640, max_fps=None, screenshot_dir=tmp_path)
    yield v
    v.close()


def _press(v, symbol, modifiers=0):
    v.window.dispatch_event("on_key_press", symbol, modifiers)
    v.tick()
    return v.message


def test_window_keys_reach_the_window_actions_the_controller_and_its_gpu_switches(window):
    v = window
    v.tick()
    _press(v, key.F1)
    assert v.show_help, "F1: the window's actions"
    _press(v, key.SPACE)
    assert v.paused and v.message == "paused", "space: the controller"
    if v.controller.gpu.reason() is not None:
        assert _press(v, key.Q).startswith("q: needs a GPU"), "q: the controller's GPU switches"
    _press(v, key.F12)
    assert v.last_screenshot is not None and v.last_screenshot.exists(), "F12: saved at the end of the frame"


def test_a_drag_belongs_to_the_window_events_and_stops_the_hover(window):
    from viewer.keys import mouse

    v = window
    v.controller.paused = True
    for _ in range(3):
        v.tick()
    x, y = 200, 300
    v.window.dispatch_event("on_mouse_motion", x, y, 0, 0)
    v.tick()
    v.tick()
    v.window.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
    v.tick()
    assert v.events.drag is not None, "a left press over the view starts a camera gesture"
    yaw = v.camera.yaw
    v.window.dispatch_event("on_mouse_drag", x + 40, y, 40, 0, mouse.LEFT, 0)
    v.tick()
    assert v.camera.yaw != yaw and v.pointing.picking.hovered is None, "no hover while dragging"
    v.window.dispatch_event("on_mouse_release", x + 40, y, mouse.LEFT, 0)
    v.tick()
    assert v.events.drag is None


def test_a_scripted_run_stops_at_its_step_and_saves_the_frame(window, tmp_path):
    from pathlib import Path

    v = window
    path = Path(tmp_path) / "end.png"
    v.loop.script(7, path)
    v.loop.run()
    assert v.closed and v.scene.steps == 7 and v.loop.exit_status == 0
    assert v.last_screenshot == path and path.exists()
