"""The durbin scene drawn: headless (EGL) its plots and a reflection coefficient dragged with the mouse
through ImPlot; in a window (Xvfb under `make test`) its keys, a screenshot and a drag that changes
the plotted spectrum."""

import numpy as np
import pytest
from gl_support import drag_plot_point, needs_egl

from sim.durbin import plots
from sim.registry import create_scene
from viewer.render.view import BACKGROUND


def yellow(pixels: np.ndarray) -> np.ndarray:
    """The drag points' colour (plots.KAPPA_RGBA)."""
    return (pixels[..., 0] > 230) & (pixels[..., 1] > 180) & (pixels[..., 1] < 235) & (pixels[..., 2] < 90)


def spectrum(scene) -> np.ndarray:
    plot = next(p for p in scene.view("plain").plots if p.title == "spectrum")
    return next(s for s in plot.series if s.label.startswith("beta / |A")).y.copy()


@needs_egl
@pytest.mark.parametrize("preset", ["ar", "lpc"])
def test_the_scene_draws_headless(preset):
    from viewer.headless import render_pixels

    scene = create_scene("durbin", preset=preset)
    for _ in range(6):
        scene.run_frame(1)
    pixels = render_pixels(scene, 1000, 700).astype(int)
    off = np.any(np.abs(pixels - np.array(BACKGROUND) * 255) > 12, axis=2)
    assert off.mean() > 0.5, "the plots cover the area"
    assert yellow(pixels).sum() > 30, "the drag points are drawn"


@needs_egl
def test_dragging_a_coefficient_with_the_mouse_changes_the_spectrum():
    scene = create_scene("durbin")
    for _ in range(8):
        scene.run_frame(1)
    before, kappa = spectrum(scene), scene.kappas[1]
    ctl = drag_plot_point(scene, "kappa1", [(0, 12 * step) for step in range(1, 6)], (1000, 700), "plain")  # down
    assert ctl.message == "", "no pointer error"
    assert scene.kappas[1] < kappa - 0.2, f"the point moved down with the mouse: {scene.kappas}"
    assert scene.solver.alphas[1] == pytest.approx(scene.kappas[1], abs=1e-12)
    assert np.abs(spectrum(scene) - before).max() > 0.1


def _display_problem():
    from viewer.window.display import display_problem

    return display_problem()


@pytest.mark.window
@pytest.mark.skipif(_display_problem() is not None, reason=f"needs a display: {_display_problem()}")
def test_the_scene_in_a_window(tmp_path):
    from viewer.image import read_image
    from viewer.keys import key, mouse
    from viewer.window.app import Viewer

    scene = create_scene("durbin")
    v = Viewer(scene, 1200, 760, max_fps=None, screenshot_dir=tmp_path)

    def press(symbol, modifiers=0):
        v.window.dispatch_event("on_key_press", symbol, modifiers)
        v.window.dispatch_event("on_key_release", symbol, modifiers)
        for _ in range(2):
            assert v.tick()

    try:
        for _ in range(20):
            assert v.tick()
        assert v.view.kind == "plots" and scene.solver.k > 1, "the recursion advances with time"
        if v.controller.gpu.reason() is not None:
            for symbol, modifiers in ((key.A, 0), (key.V, 0), (key.C, 0), (key.Q, 0), (key.Q, key.MOD_SHIFT)):
                press(symbol, modifiers)
                assert "needs a GPU" in v.message, v.message
                assert scene.backend == "cpu" and v.controller.color_mode == "plain" and not scene.checks.on
        press(key.SPACE)
        assert v.paused
        k = scene.solver.k
        press(key.S)
        assert scene.solver.k == k + 1, "s: one recursion step"
        press(key.F12)
        pixels = read_image(v.last_screenshot).astype(int)
        assert yellow(pixels).sum() > 30
        # drag the point of kappa 0 up with the mouse (pyglet's y points up, ImGui's down)
        before, kappa = spectrum(scene), scene.kappas[0]
        x, y = v.view.plots.point_pixels["kappa0"]
        height = v.window.get_size()[1]
        v.window.dispatch_event("on_mouse_motion", x, height - y, 0, 0)
        v.tick()
        v.window.dispatch_event("on_mouse_press", x, height - y, mouse.LEFT, 0)
        v.tick()
        for step in range(1, 6):
            v.window.dispatch_event("on_mouse_drag", x, height - y + 10 * step, 0, 10, mouse.LEFT, 0)
            v.tick()
        v.window.dispatch_event("on_mouse_release", x, height - y + 50, mouse.LEFT, 0)
        v.tick()
        assert scene.kappas[0] > kappa + 0.2, f"kappa 0 followed the mouse: {scene.kappas}"
        assert np.abs(spectrum(scene) - before).max() > 0.1, "the plotted spectrum changed"
        v.controller.load_preset("lpc")
        for _ in range(3):
            assert v.tick()
        assert scene is not v.scene or v.scene.lpc is not None
        assert v.message.startswith("loaded preset lpc")
    finally:
        v.close()


def test_the_kappa_colour_is_what_the_picture_tests_look_for():
    pixel = np.array([[np.array(plots.KAPPA_RGBA[:3]) * 255]]).astype(int)
    assert yellow(pixel).all()
