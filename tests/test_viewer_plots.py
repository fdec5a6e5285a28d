"""The plots view kind: a PlotsView with every kind of series drawn headless, and a drag point moved
with the mouse reaching the scene as a "point" pointer event."""

import numpy as np
import pytest
from gl_support import drag_plot_point, needs_egl

from sim.contract import DragPoint, Plot, PlotsView, PointerEvent, Preset, SceneSpec, Series, Stat, Words
from sim.framework.scene import Scene
from viewer.render.view import BACKGROUND

pytestmark = needs_egl

RED = (1.0, 0.15, 0.15, 1.0)
SPEC = SceneSpec(
    name="plot-demo",
    title="every kind of plot",
    words=Words("points", "point"),
    view="plots",
    presets=(Preset("one", "a curve with a point to drag"),),
    default_preset="one",
    scene="test_viewer_plots:PlotDemo",
    stages=("curve",),
    stats=(Stat("n", "points"),),
)


class PlotDemo(Scene):
    """A small scene whose view is plots: a curve through a point the user drags, and a heatmap."""

    spec = SPEC

    def __init__(self):
        self.peak = (2.0, 0.5)
        self.events: list[PointerEvent] = []
        super().__init__()

    def load_state(self, preset, n):
        pass

    def advance(self, steps):
        with self.timer.stage("curve"):
            pass
        return steps

    def move_state(self, backend):
        pass

    @property
    def n(self):
        return 64

    def stats(self):
        return {"n": self.n}

    def pointer(self, event):
        self.events.append(event)
        if event.kind == "point" and event.target == "peak":
            self.peak = (event.x, event.y)

    def view(self, color_mode):
        x = np.linspace(0.0, 4.0, self.n)
        y = self.peak[1] * np.exp(-((x - self.peak[0]) ** 2))
        curve = Plot(
            "curve",
            [
                Series("curve", x, y, color=RED),
                Series("bars", x[::8], y[::8] / 2, style="bars", width=0.2),
                Series("stairs", x, y / 3, style="stairs"),
                Series("scatter", x[::4], y[::4] + 0.1, style="scatter"),
                Series("band", x, y + 0.05, style="shaded", y2=y - 0.05),
            ],
            x_label="x",
            y_label="y",
            x_limits=(0.0, 4.0),
            y_limits=(-0.2, 1.2),
            hlines=(0.25,),
            drag_points=[DragPoint("peak", *self.peak)],
        )
        r, c = np.mgrid[0:16, 0:24]
        heat = Plot("heat", [Series("growth", np.arange(1.0, 10.0), 2.0 ** np.arange(9.0))], x_log=True, y_log=True)
        field = Plot(
            "field", [], heatmap=(r + c).astype(np.float64), x_limits=(0.0, 3.0), y_limits=(0.0, 2.0), equal_aspect=True
        )
        return PlotsView([curve, heat, field], columns=2)


def test_plots_are_drawn_headless():
    from viewer.headless import render_pixels

    width, height = 900, 600
    pixels = render_pixels(PlotDemo(), width, height).astype(int)
    off_background = np.any(np.abs(pixels - np.array(BACKGROUND) * 255) > 12, axis=2)
    assert off_background.mean() > 0.5, "the plots cover the area"
    red = (pixels[..., 0] > 200) & (pixels[..., 1] < 90) & (pixels[..., 2] < 90)
    assert red[:, : width // 2].sum() > 50, "the red curve is drawn in the left column"
    assert len(np.unique(pixels[height // 2 :, width // 2 :].reshape(-1, 3), axis=0)) > 50, "the heatmap's colours"


def test_plots_leave_the_panel_its_place():
    from viewer.headless import render_pixels
    from viewer.panel.style import PANEL_WIDTH

    width, height = 1200, 700
    with_panel = render_pixels(PlotDemo(), width, height, panel=True).astype(int)
    without = render_pixels(PlotDemo(), width, height).astype(int)
    left = np.s_[:, : width - PANEL_WIDTH - 40]
    assert np.any(np.abs(with_panel[left] - np.array(BACKGROUND) * 255) > 12, axis=2).mean() > 0.5
    assert not np.array_equal(with_panel[:, -PANEL_WIDTH:], without[:, -PANEL_WIDTH:])


def test_dragging_a_point_reaches_the_scene():
    scene = PlotDemo()
    ctl = drag_plot_point(scene, "peak", [(15 * step, 0) for step in range(1, 5)])
    moved = [e for e in scene.events if e.kind == "point"]
    assert moved and all(e.target == "peak" for e in moved)
    assert scene.peak[0] > 2.2, f"the point moved right with the mouse: {scene.peak}"
    assert scene.peak[1] == pytest.approx(0.5, abs=0.05), "and stayed at its height"
    assert ctl.message == "", "no pointer error"


def _display_problem():
    from viewer.window.display import display_problem

    return display_problem()


@pytest.mark.window
@pytest.mark.skipif(_display_problem() is not None, reason=f"needs a display: {_display_problem()}")
def test_a_plots_scene_in_a_window(tmp_path):
    from viewer.image import read_image
    from viewer.keys import key, mouse
    from viewer.panel.style import PANEL_WIDTH
    from viewer.window.app import Viewer

    v = Viewer(PlotDemo(), 1000, 650, max_fps=None, screenshot_dir=tmp_path)
    try:
        for _ in range(3):
            assert v.tick()
        assert v.view.kind == "plots" and v.camera is None
        win = v.window
        for symbol in (key.HOME, key.F12):  # no camera to reset; the screenshot shows the plots
            win.dispatch_event("on_key_press", symbol, 0)
            win.dispatch_event("on_key_release", symbol, 0)
            v.tick()
            v.tick()
        win.dispatch_event("on_mouse_scroll", 300, 300, 0, 2)
        win.dispatch_event("on_mouse_press", 300, 300, mouse.RIGHT, 0)
        win.dispatch_event("on_mouse_drag", 320, 300, 20, 0, mouse.RIGHT, 0)
        win.dispatch_event("on_mouse_release", 320, 300, mouse.RIGHT, 0)
        assert v.tick()
        pixels = read_image(v.last_screenshot).astype(int)
        width = pixels.shape[1]
        plots = pixels[:, : width - PANEL_WIDTH - 20]
        assert np.any(np.abs(plots - np.array(BACKGROUND) * 255) > 12, axis=2).mean() > 0.5
        red = (plots[..., 0] > 200) & (plots[..., 1] < 90) & (plots[..., 2] < 90)
        assert red.sum() > 50, "the red curve"
    finally:
        v.close()
