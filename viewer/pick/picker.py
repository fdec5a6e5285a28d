"""What the pointer is on, frame by frame, and the item pinned by a click.

``Picking.hover(view, camera, pixel, ...)`` finds the item under a pixel of the view:

- points: on the host path (the items were uploaded from the host) a ray test against their
  positions (``ray.ray_hit``); on the device path the same test in CUDA over the GL buffer the device
  wrote (``device.DeviceRayTest``), asked for this frame, launched inside the draw's own mapping of
  that buffer (``PointsFeed.with_next_items``: the window picks between the update and the draw) and
  read a frame later, so it never stalls;
- field: the cell under the pixel, by arithmetic on the plane z = 0;
- plots: ImPlot's hovered point, which ``PlotsRenderer`` notes while it draws (``plots_hovered``).

A click pins the hovered item: it is kept by the scene's ``item_key`` (kernels may reorder the
state) and found again every frame with ``item_of_key``; Esc unpins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.contract import FieldView, PlotsView, PointsView
from viewer.pick.ray import ray_hit
from viewer.render.points.feed import DEVICE

RAY, DEVICE_RAY = "ray", "CUDA ray test"


@dataclass
class Pinned:
    key: int
    kind: str  # the view kind it was pinned in: a points item, a field cell, a plot point
    scene: object  # the scene it belongs to (a scene switch unpins)


def field_cell(view: FieldView, x: float, y: float) -> int | None:
    """The cell of ``view`` under the plane point (x, y), ``row * columns + column``; None outside."""
    if not (math.isfinite(x) and math.isfinite(y)):
        return None
    x0, y0, x1, y1 = view.extent
    rows, cols = view.shape
    if not (x0 <= x < x1 and y0 <= y < y1):
        return None
    col = min(int((x - x0) / (x1 - x0) * cols), cols - 1)
    row = min(int((y - y0) / (y1 - y0) * rows), rows - 1)
    return row * cols + col


class Picking:
    def __init__(self):
        self.hovered: int | None = None
        self.hovered_kind: str | None = None
        self.pinned: Pinned | None = None
        self.follow = False  # the camera follows the pinned item
        self.used: str | None = None  # how the last points pick was made (RAY or DEVICE_RAY)
        self._device = None  # DeviceRayTest, made on first use
        self._ray = None  # (origin, direction) the device's next test asks about; None: none wanted

    # --- hovering ------------------------------------------------------------------------------
    def clear_hover(self) -> None:
        self.hovered = self.hovered_kind = None
        self._ray = None  # a test still queued asks about nothing
        if self._device is not None:
            self._device.done = None

    def hover(
        self, scene_view, ray: tuple[np.ndarray, np.ndarray] | None, plane_point: tuple[float, float] | None
    ) -> None:
        """Find the item under the pointer: ``ray`` (origin, unit direction) and its ``plane_point``
        on z = 0, None when the pointer is not over the view. Plots are read from the renderer."""
        view = scene_view.current
        if isinstance(view, PlotsView):
            self.hovered, self.hovered_kind = scene_view.plots.hovered, "plots"
            return
        if ray is None or view is None:
            self.clear_hover()
            return
        if isinstance(view, FieldView):
            self.hovered, self.hovered_kind = field_cell(view, *plane_point), "field"
            return
        if isinstance(view, PointsView):
            self.hovered, self.hovered_kind = self._points(scene_view.points, ray), "points"

    def _points(self, renderer, ray) -> int | None:
        feed = renderer.feed
        origin, direction = ray
        if feed.path == DEVICE:
            self.used = DEVICE_RAY
            if self._device is None:
                from viewer.pick.device import DeviceRayTest

                self._device = DeviceRayTest()
            found = self._device.collect()  # last frame's request
            self._ray = ray
            feed.with_next_items("pick", self._request)
            return None if found is None else found[0]
        self.used = RAY
        hit = ray_hit(feed.host_positions, origin, direction) if feed.host_positions is not None else None
        return None if hit is None else hit[0]

    # --- pinning ---------------------------------------------------------------------------------
    def pin(self, scene) -> int | None:
        """Pin the hovered item; returns it (None when nothing is under the pointer)."""
        if self.hovered is None:
            return None
        self.pinned = Pinned(scene.inspector.item_key(self.hovered), self.hovered_kind, scene)
        return self.hovered

    def unpin(self) -> bool:
        """Unpin; True when something was pinned."""
        was, self.pinned = self.pinned is not None, None
        return was

    def pinned_item(self, scene, kind: str | None) -> int | None:
        """Where the pinned item is now, or None (and unpinned) once it is gone or the scene or view
        kind changed."""
        pinned = self.pinned
        if pinned is None:
            return None
        if pinned.scene is not scene or pinned.kind != kind:
            self.pinned = None
            return None
        item = scene.inspector.item_of_key(pinned.key)
        if item is None:
            self.pinned = None
        return item

    def _request(self, positions) -> None:
        """The device's test of the latest ray over the mapped ``positions`` (run by the feed)."""
        if self._ray is not None and self._device is not None:
            self._device.request(positions, *self._ray)

    def release(self) -> None:
        self._device = self._ray = None
