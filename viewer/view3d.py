"""The 3D view: floor, balls and trough drawn with one camera into any framebuffer.

Used by the window and by headless rendering alike, so both show the same picture.
"""

from __future__ import annotations

import sys

import moderngl
import numpy as np

from viewer.ball_feed import DEVICE, BallFeed
from viewer.camera import OrbitCamera
from viewer.interop import InteropError
from viewer.spheres import SphereRenderer
from viewer.splat import BallSplat, gl_problem
from viewer.trough import TroughRenderer

BACKGROUND = (0.075, 0.085, 0.105)
SPLAT, IMPOSTORS = "CUDA splat + impostors", "impostors"
# The light hangs above-left of the camera and moves with it, so the visible side is always lit.
LIGHT_DIR_VIEW = np.array([-0.35, 0.75, 0.55]) / np.linalg.norm([-0.35, 0.75, 0.55])


class SceneView:
    def __init__(self, ctx: moderngl.Context, trough=None):
        self.ctx = ctx
        self.spheres = SphereRenderer(ctx)
        self.feed = BallFeed(self.spheres)
        self.trough = TroughRenderer.for_trough(ctx, trough) if trough is not None else TroughRenderer(ctx)
        self.show_trough = True
        self.show_floor = True
        self.splat: BallSplat | None = None
        self.splat_problem: str | None = None  # why balls on the device are not splatted
        self.balls_drawn = IMPOSTORS  # how the last draw drew the balls

    def set_trough(self, trough) -> bool:
        """Rebuild the trough mesh if its size changed (a preset loaded); True when it did."""
        geometry = (float(trough.radius), float(trough.z_min), float(trough.z_max))
        if geometry == self.trough.geometry:
            return False
        self.trough.release()
        self.trough = TroughRenderer(self.ctx, *geometry)
        return True

    def show(self, scene, color_mode: str) -> bool:
        """Take the scene's trough and balls for the next draws; True when the trough changed."""
        changed = self.set_trough(scene.trough)
        self.feed.update(scene, color_mode)
        return changed

    def draw(
        self, target: moderngl.Framebuffer, camera: OrbitCamera, size: tuple[int, int], covered_right: int = 0
    ) -> None:
        """Clear ``target`` and draw the scene over its whole ``size`` (pixels), centred in the part
        left of ``covered_right`` pixels (where the panel sits)."""
        width, height = size
        ctx = self.ctx
        target.use()
        target.viewport = (0, 0, width, height)
        target.scissor = None
        target.clear(*BACKGROUND, 1.0, depth=1.0)
        view = camera.view_matrix()
        proj = camera.projection_matrix(width / max(height, 1), covered_right / max(width, 1))
        light = LIGHT_DIR_VIEW

        ctx.enable(moderngl.DEPTH_TEST)
        ctx.disable(moderngl.CULL_FACE)
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        target.depth_mask = True
        ctx.disable(moderngl.BLEND)
        self._draw_balls(view, proj, light, camera.near, size)
        if self.show_floor:
            # After the balls, so the depth test skips the floor behind them.
            ctx.enable(moderngl.BLEND)
            self.trough.draw_floor(view, proj, light)
        if self.show_trough:
            # Translucent last, without depth writes, so balls behind the wall still show through.
            ctx.enable(moderngl.BLEND)
            target.depth_mask = False
            self.trough.draw_trough(view, proj, light)
            target.depth_mask = True
        ctx.disable(moderngl.BLEND)
        ctx.disable(moderngl.DEPTH_TEST)

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
