"""The points view kind: spheres (3D) or discs (2D, seen from above) with their surroundings, a
trough or a box.

``PointsRenderer.show(view)`` takes a ``PointsView`` (its items and their quantity through
``PointsFeed``, on the device or from the host, coloured as ``PointColours`` says); ``draw`` draws
them with the camera's matrices into the bound framebuffer: items on the device are splatted by
CUDA where the context allows (``splat.py``), the rest are lit impostors (``spheres.py``); then the
floor and trough (``trough.py``) or the box outline (``box.py``).
"""

from __future__ import annotations

import sys

import moderngl
import numpy as np

from sim.contract import Box, Legend, PointsView, Trough
from viewer.gpu.interop import InteropError
from viewer.render.camera import OrbitCamera
from viewer.render.points.box import BoxOutline
from viewer.render.points.colours import PointColours
from viewer.render.points.feed import DEVICE, PointsFeed
from viewer.render.points.spheres import SphereRenderer
from viewer.render.points.splat import SphereSplat, gl_problem
from viewer.render.points.trough import TroughRenderer

SPLAT, IMPOSTORS = "CUDA splat + impostors", "impostors"
MIN_DISC_PIXELS = 1.5  # radius: a 2D view's discs stay visible dots (3 pixels across) however far out


def points_camera(view: PointsView) -> OrbitCamera:
    """The view of the whole scene: its trough from the front-right, or its 2D box from above."""
    around = view.surroundings
    if isinstance(around, Trough):
        return OrbitCamera.for_trough(around)
    return OrbitCamera.top_view(around.side, view.spacing)


class PointsRenderer:
    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.spheres = SphereRenderer(ctx)
        self.feed = PointsFeed(self.spheres)
        self.colours = PointColours(ctx)
        self.trough = TroughRenderer(ctx)
        self.box: BoxOutline | None = None  # a 2D view's box, drawn instead of floor and trough
        self.show_trough = True
        self.show_floor = True
        self.splat: SphereSplat | None = None
        self.splat_problem: str | None = None  # why items on the device are not splatted
        self.drawn_as = IMPOSTORS  # how the last draw drew the items
        self.dims = 3  # the shown view's: 2 for discs seen from above

    # --- surroundings ----------------------------------------------------------------------------
    def set_trough(self, trough: Trough) -> bool:
        """Show the trough, rebuilding its mesh if its size changed; True when the surroundings changed."""
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

    def show(self, view: PointsView) -> bool:
        """Take the view's surroundings and items for the next draws; True when the surroundings
        changed (another trough or box): the camera should frame them anew."""
        around = view.surroundings
        if isinstance(around, Box):
            changed = self.set_box(float(around.side))
        else:
            changed = self.set_trough(around)
        self.feed.update(view)
        self.colours.take(view, self.feed.data_range)
        self.dims = view.dims
        return changed

    @property
    def legend(self) -> Legend | None:
        """The shown view's legend over the range its colours span now."""
        return self.colours.legend

    # --- drawing ---------------------------------------------------------------------------------
    def draw(
        self,
        target: moderngl.Framebuffer,
        view: np.ndarray,
        proj: np.ndarray,
        light: np.ndarray,
        near: float,
        size: tuple[int, int],
    ) -> None:
        """Items, then what surrounds them, with depth testing (set up by the caller)."""
        ctx = self.ctx
        self._draw_items(view, proj, light, near, size)
        if self.box is not None:
            self.box.draw(view, proj)
        elif self.show_floor:
            # After the items, so the depth test skips the floor behind them.
            ctx.enable(moderngl.BLEND)
            self.trough.draw_floor(view, proj, light)
        if self.box is None and self.show_trough:
            # Translucent last, without depth writes, so items behind the wall still show through.
            ctx.enable(moderngl.BLEND)
            target.depth_mask = False
            self.trough.draw_trough(view, proj, light)
            target.depth_mask = True
        ctx.disable(moderngl.BLEND)

    def _draw_items(
        self, view: np.ndarray, proj: np.ndarray, light: np.ndarray, near: float, size: tuple[int, int]
    ) -> None:
        """Items written on the device are splatted by CUDA where this context allows; the rest
        are impostors (also the fallback, which keeps the reason in ``splat_problem``). Both draw a 2D
        view's discs at least MIN_DISC_PIXELS in radius."""
        min_radius = MIN_DISC_PIXELS if self.dims == 2 else 0.0
        self.spheres.set_min_radius(min_radius, size[1])
        self.colours.bind(self.spheres.program)
        if self.feed.path == DEVICE and self.spheres.count and self.splat_problem is None:
            try:
                if self.splat is None:
                    self.splat_problem = gl_problem(self.ctx)
                    if self.splat_problem is not None:
                        raise InteropError(self.splat_problem)
                    self.splat = SphereSplat(self.ctx, self.spheres)
                with self.feed.mapped_items() as (positions, quantity):
                    self.splat.splat(positions, quantity, self.colours, view, proj, light, near, size, min_radius)
                self.splat.draw(view, proj, light, near)
                self.drawn_as = SPLAT
                return
            except (InteropError, moderngl.Error) as exc:
                self.splat_problem = str(exc)
                self._release_splat()
        if self.feed.path == DEVICE:
            self.feed.run_work_now()
        self.spheres.draw(view, proj, light, near)
        self.drawn_as = IMPOSTORS

    def fall_back(self, reason: str) -> None:
        """Host uploads and impostors from now on (``reason``: why, kept by the feed)."""
        self.feed.fall_back(reason)
        self._release_splat()

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
        self.colours.release()
        self.trough.release()
        self._drop_box()
