"""Render a scene to pixels or a PNG without a window (no display needed): EGL + an offscreen
framebuffer, every view kind (points, field, plots), the panel if asked."""

from __future__ import annotations

from pathlib import Path

import moderngl
import numpy as np

from viewer.png import write_png
from viewer.render.camera import OrbitCamera
from viewer.render.offscreen import Offscreen
from viewer.render.view import SceneView, default_camera


def default_color_mode(scene) -> str:
    return next(iter(scene.color_modes), "")


def render_pixels(
    scene,
    width: int = 1280,
    height: int = 800,
    camera: OrbitCamera | None = None,
    color_mode: str | None = None,
    panel: bool = False,
) -> np.ndarray:
    """The scene's current state as an (height, width, 3) uint8 image, top row first."""
    ctx = moderngl.create_standalone_context(backend="egl", require=330)
    try:
        view = SceneView(ctx)
        target = Offscreen(ctx, (width, height))
        gui = None
        try:
            mode = default_color_mode(scene) if color_mode is None else color_mode
            view.show(scene, mode)
            covered = _panel_cover() if panel else 0
            if panel or view.kind == "plots":
                gui = _gui_frame(ctx, scene, mode, (width, height), view, panel, covered)
            view.draw(target.fbo, camera or default_camera(view.current), (width, height), covered)
            if gui is not None:
                gui.draw(target.fbo)
            ctx.finish()
            return target.read_rgb()
        finally:
            if gui is not None:
                gui.release()
            view.release()  # unregisters the GL buffers from CUDA while the context still exists
            target.release()
    finally:
        ctx.release()


def _panel_cover() -> int:
    from viewer.panel.style import PANEL_WIDTH

    return PANEL_WIDTH + 16


def _gui_frame(ctx: moderngl.Context, scene, mode: str, size: tuple[int, int], view: SceneView, panel: bool,
               covered: int):
    """A Gui holding a finished frame (the plots of a plots view, the panel if asked), ready to draw."""
    from viewer.panel.gui import Gui
    from viewer.panel.panel import Panel
    from viewer.window.controller import Controller

    gui = Gui(ctx)
    controller = Controller(scene, paused=True)
    controller.color_mode = mode
    drawn = Panel() if panel else None
    area = (0.0, 0.0, float(size[0] - covered), float(size[1]))

    def on_point(target: str, x: float, y: float) -> None:
        from sim.contract import PointerEvent

        controller.pointer(PointerEvent("point", x, y, target=target))

    # ImGui lays out auto-sized windows and plots on the first frame: draw the second.
    for frame in range(2):
        gui.new_frame(size, size, 1 / 60)
        view.draw_plots(area, on_point)
        if drawn is not None:
            drawn.draw(controller, shown=view.current, feed=view.feed)
        gui.end_frame()
        if frame == 0:
            gui.renderer.update_textures(gui.draw_data().textures)
    return gui


def render_png(
    scene,
    path: str | Path,
    width: int = 1280,
    height: int = 800,
    camera: OrbitCamera | None = None,
    color_mode: str | None = None,
    panel: bool = False,
) -> Path:
    """Draw the scene's current state (its view, the panel if asked) into ``path``."""
    return write_png(path, render_pixels(scene, width, height, camera, color_mode, panel))
