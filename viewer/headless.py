"""Pictures and videos of a scene without a window (no display needed): EGL + an offscreen
framebuffer, every view kind (points, field, plots), the panel if asked.

``HeadlessRenderer`` keeps one context, renderer and (for plots or the panel) ImGui frame across
frames, for recordings, and draws them as the window does (``viewer.frame.FrameComposer``);
``render_pixels`` / ``render_image`` draw one picture; ``HeadlessRecording`` records a headless run
(``run --headless --record``): one video frame every K physics steps.
"""

from __future__ import annotations

from pathlib import Path

import moderngl
import numpy as np

from viewer.frame import FrameComposer, offscreen_surface
from viewer.image import write_image
from viewer.record.recorder import STEPS, Recorder, RecordOptions
from viewer.render.camera import OrbitCamera
from viewer.render.view import SceneView, default_camera


def default_color_mode(scene) -> str:
    return next(iter(scene.color_modes), "")


class HeadlessRenderer:
    """Draws a scene's current view into an offscreen framebuffer of ``size``, again and again,
    through the viewer's ``FrameComposer``."""

    def __init__(self, width: int = 1280, height: int = 800, panel: bool = False):
        self.size = (int(width), int(height))
        self.panel = panel
        self.surface = offscreen_surface(*self.size)
        self.ctx = self.surface.ctx
        self.view = SceneView(self.ctx)
        self.composer = FrameComposer(self.view)  # its ImGui frame made on the first picture that needs one
        self.camera: OrbitCamera | None = None
        self._panel = None
        self._controller = None

    def __enter__(self) -> HeadlessRenderer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def fbo(self) -> moderngl.Framebuffer:
        return self.surface.fbo

    def render(self, scene, camera: OrbitCamera | None = None, color_mode: str | None = None) -> None:
        """Draw the scene's view now (framing it with the default camera the first time, or when
        what it shows moved), plus the plots and the panel when they apply."""
        mode = default_color_mode(scene) if color_mode is None else color_mode
        if self.view.show(scene, mode) or self.camera is None:
            self.camera = default_camera(self.view.current)
        covered = _panel_cover() if self.panel else 0
        ui = self.panel or self.view.kind == "plots" or self.view.legend is not None
        if ui:
            self._compose_ui(scene, mode, covered)
        self.composer.draw(self.fbo, camera or self.camera, self.size, covered, ui)

    def pixels(self) -> np.ndarray:
        """The last render as (height, width, 3) uint8, top row first (waits for the GPU)."""
        self.ctx.finish()
        return self.surface.offscreen.read_rgb()

    def _compose_ui(self, scene, mode: str, covered: int) -> None:
        from sim.contract import PointerEvent
        from viewer.panel.gui import Gui
        from viewer.panel.panel import Panel
        from viewer.window.controller import Controller

        composer = self.composer
        first = composer.gui is None
        if first:
            composer.gui = Gui(self.ctx)
            self._panel = Panel() if self.panel else None
        if self._controller is None or self._controller.scene is not scene:
            self._controller = Controller(scene, paused=True)
        controller = self._controller
        controller.color_mode = mode
        width, height = self.size
        area = (0.0, 0.0, float(width - covered), float(height))

        def on_point(target: str, x: float, y: float) -> None:
            controller.pointer(PointerEvent("point", x, y, target=target))

        def panel(_fb_size) -> bool:
            if self._panel is not None:
                self._panel.draw(controller, shown=self.view.current, feed=self.view.feed, legend=self.view.legend)
            return True

        # ImGui lays out auto-sized windows on the first frame, and ImPlot fits auto-fitted axes to a
        # frame's data at that frame's end: a picture of plots is the second of two frames of the same view.
        fitted = self.view.kind == "plots" or self.panel
        for frame in range(2 if first or fitted else 1):
            composer.compose_ui(self.size, self.size, 1 / 60, area, panel, on_point)
            if frame == 0 and first:
                composer.gui.renderer.update_textures(composer.gui.draw_data().textures)

    def close(self) -> None:
        if self.ctx is None:
            return
        try:
            if self.composer.gui is not None:
                self.composer.gui.release()
            self.view.release()  # unregisters the GL buffers from CUDA while the context still exists
        finally:
            self.surface.close()
            self.ctx = None


def render_pixels(
    scene,
    width: int = 1280,
    height: int = 800,
    camera: OrbitCamera | None = None,
    color_mode: str | None = None,
    panel: bool = False,
) -> np.ndarray:
    """The scene's current state as an (height, width, 3) uint8 image, top row first."""
    with HeadlessRenderer(width, height, panel) as renderer:
        renderer.render(scene, camera, color_mode)
        return renderer.pixels()


def _panel_cover() -> int:
    from viewer.panel.style import panel_cover

    return panel_cover()


def render_image(
    scene,
    path: str | Path,
    width: int = 1280,
    height: int = 800,
    camera: OrbitCamera | None = None,
    color_mode: str | None = None,
    panel: bool = False,
) -> Path:
    """Draw the scene's current state (its view, the panel if asked) into ``path``, in the format
    its extension names (PNG, JPEG, WebP)."""
    return write_image(path, render_pixels(scene, width, height, camera, color_mode, panel))


class HeadlessRecording:
    """``run --headless --record``: after each physics step, a video frame when ``every`` more steps
    have passed (S steps make S // every frames), and the final state once more when the last of
    those shows an earlier step, so a run shorter than ``every`` still makes a video. Call ``stop()``
    to finish the file or ``abort()``."""

    def __init__(
        self,
        scene,
        path: str | Path,
        size: tuple[int, int],
        every: int,
        fps: float = 30.0,
        color_mode: str | None = None,
        panel: bool = False,
    ):
        self.scene = scene
        self.color_mode = color_mode
        self.renderer = HeadlessRenderer(*size, panel=panel)
        try:
            self.recorder = Recorder(
                self.renderer.ctx, path, size, RecordOptions(STEPS, int(every), fps, panel), steps=scene.steps
            )
        except BaseException:
            self.renderer.close()
            raise

    def after_step(self, scene) -> None:
        copies = self.recorder.due(scene.steps)
        if copies:
            self._capture(scene, copies)

    def _capture(self, scene, copies: int) -> None:
        self.renderer.render(scene, color_mode=self.color_mode)
        self.recorder.capture(self.renderer.fbo, copies=copies, steps=scene.steps)

    @property
    def frames(self) -> int:
        return self.recorder.frames

    def stop(self) -> Path:
        """Record the final state if no frame shows it yet and finish the file (OutputError if not)."""
        try:
            try:
                if self.recorder.final_due(self.scene.steps):
                    self._capture(self.scene, 1)
            except BaseException:
                self.recorder.abort()
                raise
            return self.recorder.stop()
        finally:
            self.renderer.close()

    def abort(self) -> None:
        try:
            self.recorder.abort()
        finally:
            self.renderer.close()
