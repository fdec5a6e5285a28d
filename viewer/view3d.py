"""The 3D view: balls with what surrounds them (floor and trough, or a 2D scene's box outline)
drawn with one camera into any framebuffer.

Used by the window and by headless rendering alike, so both show the same picture.
"""

from __future__ import annotations

import math
import sys

import moderngl
import numpy as np

from viewer.ball_feed import DEVICE, BallFeed
from viewer.box import BoxOutline, box_side
from viewer.camera import OrbitCamera
from viewer.interop import InteropError
from viewer.spheres import SphereRenderer
from viewer.splat import BallSplat, gl_problem
from viewer.trough import TroughRenderer

BACKGROUND = (0.075, 0.085, 0.105)
SPLAT, IMPOSTORS = "CUDA splat + impostors", "impostors"
# The light hangs above-left of the camera and moves with it, so the visible side is always lit.
LIGHT_DIR_VIEW = np.array([-0.35, 0.75, 0.55]) / np.linalg.norm([-0.35, 0.75, 0.55])


def default_camera(scene) -> OrbitCamera:
    """The view of the whole scene: its trough from the front-right, or its 2D box from above."""
    side = box_side(scene)
    if side is None:
        return OrbitCamera.for_trough(scene.trough)
    return OrbitCamera.top_view(side, side / math.sqrt(max(int(scene.n), 1)))


class SceneView:
    def __init__(self, ctx: moderngl.Context, trough=None):
        self.ctx = ctx
        self.spheres = SphereRenderer(ctx)
        self.feed = BallFeed(self.spheres)
        self.trough = TroughRenderer.for_trough(ctx, trough) if trough is not None else TroughRenderer(ctx)
        self.box: BoxOutline | None = None  # a 2D scene's box, drawn instead of floor and trough
        self.show_trough = True
        self.show_floor = True
        self.splat: BallSplat | None = None
        self.splat_problem: str | None = None  # why balls on the device are not splatted
        self.balls_drawn = IMPOSTORS  # how the last draw drew the balls

    def set_trough(self, trough) -> bool:
        """Show the trough, rebuilding its mesh if its size changed (a preset loaded); True when the
        surroundings changed."""
        was_box = self._drop_box()
        geometry = (float(trough.radius), float(trough.z_min), float(trough.z_max))
        if geometry == self.trough.geometry:
            return was_box
        self.trough.release()
        self.trough = TroughRenderer(self.ctx, *geometry)
        return True

    def set_box(self, side: float) -> bool:
        """Show a 2D box of this side instead of the trough; True when the surroundings changed."""
        if self.box is not None and self.box.side == side:
            return False
        self._drop_box()
        self.box = BoxOutline(self.ctx, side)
        return True

    def _drop_box(self) -> bool:
        box, self.box = self.box, None
        if box is not None:
            box.release()
        return box is not None

    def show(self, scene, color_mode: str) -> bool:
        """Take the scene's surroundings and balls for the next draws; True when the surroundings
        changed (another trough or box, another kind of scene): the camera should frame them anew."""
        side = box_side(scene)
        changed = self.set_trough(scene.trough) if side is None else self.set_box(side)
        self.feed.update(scene, color_mode)
        return changed

    def draw(
        self, target: moderngl.Framebuffer, camera: OrbitCamera, size: tuple[int, int], covered_right: int = 0
    ) -> None:
        """Clear ``target`` and draw the scene over its ``size`` (pixels), centred in the part left of
        ``covered_right`` pixels (where the panel sits). Nothing is drawn under the panel: on a
        software rasteriser hidden pixels cost as much as visible ones."""
        width, height = size
        ctx = self.ctx
        target.use()
        target.viewport = (0, 0, width, height)
        target.scissor = None
        target.clear(*BACKGROUND, 1.0, depth=1.0)
        if covered_right > 0:
            target.scissor = (0, 0, max(width - covered_right, 1), height)
        view = camera.view_matrix()
        proj = camera.projection_matrix(width / max(height, 1), covered_right / max(width, 1))
        light = LIGHT_DIR_VIEW

        ctx.enable(moderngl.DEPTH_TEST)
        ctx.disable(moderngl.CULL_FACE)
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        target.depth_mask = True
        ctx.disable(moderngl.BLEND)
        self._draw_balls(view, proj, light, camera.near, size)
        if self.box is not None:
            self.box.draw(view, proj)
        elif self.show_floor:
            # After the balls, so the depth test skips the floor behind them.
            ctx.enable(moderngl.BLEND)
            self.trough.draw_floor(view, proj, light)
        if self.box is None and self.show_trough:
            # Translucent last, without depth writes, so balls behind the wall still show through.
            ctx.enable(moderngl.BLEND)
            target.depth_mask = False
            self.trough.draw_trough(view, proj, light)
            target.depth_mask = True
        ctx.disable(moderngl.BLEND)
        ctx.disable(moderngl.DEPTH_TEST)
        target.scissor = None

    def _draw_balls(self, view: np.ndarray, proj: np.ndarray, light: np.ndarray, near: float,
                    size: tuple[int, int]) -> None:
        """Balls written on the device are splatted by CUDA where this context allows; the rest
        are impostors (also the fallback, which keeps the reason in ``splat_problem``)."""
        if self.feed.path == DEVICE and self.spheres.count and self.splat_problem is None:
            try:
                if self.splat is None:
                    self.splat_problem = gl_problem(self.ctx)
                    if self.splat_problem is not None:
                        raise InteropError(self.splat_problem)
                    self.splat = BallSplat(self.ctx, self.spheres)
                with self.feed.mapped_balls() as (positions, colors):
                    self.splat.splat(positions, colors, view, proj, light, near, size)
                self.splat.draw(view, proj, light, near)
                self.balls_drawn = SPLAT
                return
            except (InteropError, moderngl.Error) as exc:
                self.splat_problem = str(exc)
                self._release_splat()
        self.spheres.draw(view, proj, light, near)
        self.balls_drawn = IMPOSTORS

    def _release_splat(self) -> None:
        splat, self.splat = self.splat, None
        if splat is not None:
            try:
                splat.release()
            except InteropError as exc:
                print(f"viewer: {exc}", file=sys.stderr)

    def release(self) -> None:
        self._release_splat()
        try:
            self.feed.close()  # CUDA lets go of the GL buffers before they are deleted
        except InteropError as exc:  # shutting down anyway: say so, free the rest
            print(f"viewer: {exc}", file=sys.stderr)
        self.spheres.release()
        self.trough.release()
        self._drop_box()
