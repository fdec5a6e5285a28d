"""One frame of the viewer, wherever it goes: ``FrameComposer`` draws the scene's view and the ImGui
layer over it (the plots, the legend, then what the caller adds: the panel, picking, help, the
compile box) onto a ``Surface``. The window, ``viewer.headless.HeadlessRenderer`` and the frame
benchmark (``viewer.bench.frame``) all draw through it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import moderngl

from viewer.gpu.egl import standalone_context
from viewer.panel.colour import draw_legend_overlay, legend_colormap
from viewer.render.offscreen import Offscreen
from viewer.render.view import SceneView

Area = tuple[float, float, float, float]  # x, y, width, height of the view in display pixels


@dataclass
class Surface:
    """Where frames are drawn: a framebuffer, how to show a finished frame, how to let go;
    ``offscreen`` is the framebuffer's texture target when it can be read back."""

    ctx: moderngl.Context
    fbo: moderngl.Framebuffer
    present: Callable[[], None]
    close: Callable[[], None]
    kind: str
    offscreen: Offscreen | None = None


def offscreen_surface(width: int, height: int) -> Surface:
    """A standalone EGL context drawing into an offscreen framebuffer: no display needed."""
    ctx = standalone_context()
    try:
        target = Offscreen(ctx, (width, height))
    except BaseException:
        ctx.release()
        raise

    def close() -> None:
        target.release()
        ctx.release()

    return Surface(ctx, target.fbo, lambda: None, close, "headless EGL", target)


class FrameComposer:
    """The scene's view (``SceneView``) with, when there is a ``gui``, one ImGui frame over it."""

    def __init__(self, view: SceneView, gui=None):
        self.view = view
        self.gui = gui

    def compose_ui(
        self,
        display: tuple[int, int],
        fb_size: tuple[int, int],
        dt: float,
        area: Area,
        overlays: Callable[[tuple[int, int]], bool] = lambda fb_size: True,
        on_point: Callable[[str, float, float], None] | None = None,
    ) -> bool:
        """Lay out one ImGui frame: the plots of a plots view (their drag points to ``on_point``; none
        without it), the legend in ``area``'s corner, then ``overlays(fb_size)``. False from ``overlays``
        abandons the frame (what it drew over changed); returns whether the frame is ready to draw."""
        self.gui.new_frame(display, fb_size, dt)
        if on_point is not None:
            self.view.draw_plots(area, on_point)
        legend = self.view.legend
        if legend is not None:
            draw_legend_overlay(legend, legend_colormap(self.view.current, legend), area)
        ready = overlays(fb_size)
        self.gui.end_frame()
        return ready

    def draw(
        self, target: moderngl.Framebuffer, camera, fb_size: tuple[int, int], covered: int = 0, ui: bool = False
    ) -> None:
        """The view into ``target`` (``covered`` pixels at the right edge under the panel), then the
        last composed ImGui frame over it when ``ui``; drawing again (a screenshot) gives the same."""
        self.view.draw(target, camera, fb_size, covered)
        if ui:
            self.gui.draw(target)
