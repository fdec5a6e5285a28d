"""Render a scene to a PNG without a window (no display needed): EGL + an offscreen framebuffer."""

from __future__ import annotations

from pathlib import Path

import moderngl
import numpy as np

from viewer.camera import OrbitCamera
from viewer.offscreen import Offscreen
from viewer.png import write_png
from viewer.view3d import SceneView, default_camera


def default_color_mode(scene) -> str:
    return next(iter(scene.color_modes), "uniform")


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
        try:
            mode = color_mode or default_color_mode(scene)
            view.show(scene, mode)
            gui = _panel_frame(ctx, scene, mode, (width, height)) if panel else None
            covered = _panel_cover() if panel else 0
            view.draw(target.fbo, camera or default_camera(scene), (width, height), covered)
            if gui is not None:
                gui.draw(target.fbo)
                gui.release()
            ctx.finish()
            return target.read_rgb()
        finally:
            view.release()  # unregisters the GL buffers from CUDA while the context still exists
            target.release()
    finally:
        ctx.release()


def _panel_cover() -> int:
    from viewer.panel import PANEL_WIDTH

    return PANEL_WIDTH + 16


def _panel_frame(ctx: moderngl.Context, scene, mode: str, size: tuple[int, int]):
    """A Gui holding a finished panel frame, ready to draw."""
    from viewer.controller import Controller
    from viewer.gui import Gui
    from viewer.panel import Panel

    gui = Gui(ctx)
    controller = Controller(scene, paused=True)
    controller.color_mode = mode
    panel = Panel()
    # ImGui lays out auto-sized windows and plots on the first frame: draw the second.
    for frame in range(2):
        gui.new_frame(size, size, 1 / 60)
        panel.draw(controller)
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
    """Draw the scene's current state (balls and their trough or box, the panel if asked) into ``path``."""
    return write_png(path, render_pixels(scene, width, height, camera, color_mode, panel))
