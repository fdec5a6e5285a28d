"""What the viewer draws for a scene: the scene's view of this frame, by its kind.

``SceneView.show(scene, color_mode)`` asks the scene for its view (``scene.view(color_mode)``) and
hands it to the renderer of its kind: points (spheres or discs with their trough or box), field
(a colour-mapped grid) or plots (ImPlot, drawn inside the ImGui frame by ``draw_plots``). ``draw``
clears the target and draws the 3D or 2D part with one camera; the window and headless rendering
both use it, so both show the same picture.
"""

from __future__ import annotations

import sys

import moderngl
import numpy as np

from sim.contract import BLOCK_COLORS, FieldView, Legend, PlotsView, PointsView, View
from sim.userkernel import faults
from viewer.gpu.interop import InteropError
from viewer.render.camera import OrbitCamera
from viewer.render.field import FieldRenderer, field_camera
from viewer.render.plots import PlotsRenderer
from viewer.render.points import IMPOSTORS, SPLAT, PointsRenderer, points_camera

__all__ = ["BACKGROUND", "IMPOSTORS", "LIGHT_DIR_VIEW", "SPLAT", "SceneView", "default_camera"]

BACKGROUND = (0.075, 0.085, 0.105)
FAULTED = (
    "a kernel faulted on this GPU: CUDA–GL interop is off for this session; GL draws on this GPU may "
    "still stall or come out wrong until it is reset (check --sanitize names a bad access before it faults)"
)
# The light hangs above-left of the camera and moves with it, so the visible side is always lit.
LIGHT_DIR_VIEW = np.array([-0.35, 0.75, 0.55]) / np.linalg.norm([-0.35, 0.75, 0.55])


def default_camera(view: View | None) -> OrbitCamera | None:
    """The camera that frames a view: a trough from the front-right, a box or a field from above;
    None for plots (no 3D view)."""
    if isinstance(view, PointsView):
        return points_camera(view)
    if isinstance(view, FieldView):
        return field_camera(view)
    return None


class SceneView:
    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.points = PointsRenderer(ctx)
        self.field = FieldRenderer(ctx)
        self.plots = PlotsRenderer()
        self.current: View | None = None  # the view last shown
        self.kind: str | None = None
        self.fault: str | None = None  # the GPU fault that turned interop off (sim.userkernel.faults)

    def show(self, scene, color_mode: str) -> bool:
        """Take the scene's view in ``color_mode`` for the next draws; True when what it shows moved
        or changed kind (another trough, box or extent, another scene): the camera should frame it anew."""
        view = scene.view(color_mode)
        fixed = view.value_range if isinstance(view, FieldView) else None
        return self.take(view, color_mode == BLOCK_COLORS, fixed)

    def take(self, view: View, block_colors: bool = False, fixed: tuple[float, float] | None = None) -> bool:
        """``fixed``: a field's colour range fixed from the panel (else the field's own range)."""
        if self.fault is None and faults.seen() is not None:
            self.fall_back_after_fault(faults.seen())
        changed = view.kind != self.kind
        if isinstance(view, PointsView):
            changed |= self.points.show(view)
        elif isinstance(view, FieldView):
            changed |= self.field.show(view, block_colors, fixed)
        elif not isinstance(view, PlotsView):
            raise TypeError(f"a scene's view must be a PointsView, FieldView or PlotsView, not {type(view).__name__}")
        self.current, self.kind = view, view.kind
        return changed

    def fall_back_after_fault(self, fault: str) -> None:
        """A kernel faulted on the GPU: every device view goes through host uploads from now on, its items
        drawn as impostors (the splat writes GL buffers from CUDA too)."""
        self.fault = fault
        self.points.fall_back(FAULTED)
        self.field.feed.fall_back(FAULTED)

    # --- how the last view arrived -------------------------------------------------------------
    @property
    def feed(self):
        """The feed of the current kind (``path``, ``fallback_reason``), None for plots."""
        return {"points": self.points.feed, "field": self.field.feed}.get(self.kind)

    @property
    def drawn_as(self) -> str:
        if self.kind == "points":
            return self.points.drawn_as
        if self.kind == "field":
            return self.field.drawn_as
        return "ImPlot" if self.kind == "plots" else ""

    @property
    def legend(self) -> Legend | None:
        """The legend of what is drawn, over the range its colours span (the renderer's)."""
        if self.kind == "field":
            return self.field.legend
        return self.points.legend if self.kind == "points" else None

    @property
    def splat_problem(self) -> str | None:
        return self.points.splat_problem if self.kind == "points" else None

    # --- drawing -------------------------------------------------------------------------------
    def draw(
        self, target: moderngl.Framebuffer, camera: OrbitCamera | None, size: tuple[int, int], covered_right: int = 0
    ) -> None:
        """Clear ``target`` and draw the view over its ``size`` (pixels), centred in the part left of
        ``covered_right`` pixels (where the panel sits). Nothing is drawn under the panel: on a
        software rasteriser hidden pixels cost as much as visible ones. Plots are drawn later, in
        the ImGui frame (``draw_plots``)."""
        width, height = size
        ctx = self.ctx
        target.use()
        target.viewport = (0, 0, width, height)
        target.scissor = None
        target.clear(*BACKGROUND, 1.0, depth=1.0)
        if camera is None or self.kind not in ("points", "field"):
            return
        if covered_right > 0:
            target.scissor = (0, 0, max(width - covered_right, 1), height)
        view = camera.view_matrix()
        proj = camera.projection_matrix(width / max(height, 1), covered_right / max(width, 1))
        ctx.disable(moderngl.CULL_FACE)
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        ctx.disable(moderngl.BLEND)
        if self.kind == "points":
            ctx.enable(moderngl.DEPTH_TEST)
            target.depth_mask = True
            self.points.draw(target, view, proj, LIGHT_DIR_VIEW, camera.near, size)
            ctx.disable(moderngl.DEPTH_TEST)
        else:
            ctx.disable(moderngl.DEPTH_TEST)
            self.field.draw(view, proj)
        target.scissor = None

    def draw_plots(self, area: tuple[float, float, float, float], on_point) -> None:
        """Inside an ImGui frame: the current plots view over ``area`` (display pixels, y down)."""
        if isinstance(self.current, PlotsView):
            self.plots.draw(self.current, area, on_point)

    def release(self) -> None:
        try:
            self.points.release()  # CUDA lets go of the GL buffers before they are deleted
        finally:
            try:
                self.field.release()
            except InteropError as exc:  # shutting down anyway: say so
                print(f"viewer: {exc}", file=sys.stderr)
