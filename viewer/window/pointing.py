"""The window's picking: the item under the pointer each frame (``viewer.pick.picker``), a click
that pins it, the camera following it, and what is drawn of it (tooltip, pinned window, highlight).
``WindowPicking`` reads the view drawn (``SceneView``), the camera (``Viewpoint``), the window's sizes, whether
ImGui takes the mouse, and says what it pinned through the controller.
"""

from __future__ import annotations

import math

from imgui_bundle import imgui

from sim.contract import FieldView, PlotsView, PointsView
from viewer.pick.picker import Picking
from viewer.pick.tooltip import (
    HOVER_RING,
    ItemReport,
    LateReports,
    cell_corners,
    draw_cell_outline,
    draw_pinned_window,
    draw_sphere_ring,
    draw_tooltip,
    report,
)
from viewer.window.input import scene_point

CLICK_PIXELS = 4.0  # a press and release closer than this is a click, not a drag


class WindowPicking:
    def __init__(self, view, viewpoint, geometry, imgui_input, controller):
        self.view, self.viewpoint, self.geometry = view, viewpoint, geometry
        self.input, self.controller = imgui_input, controller
        self.picking = Picking()
        self.pointer: tuple[float, float] | None = None  # window pixels, y up; None when outside
        self.press: tuple[float, float] | None = None  # where a left press started (a click candidate)
        self.click = False  # a click is waiting to pin what is under it
        self.reports = LateReports()  # item reports, a frame late where the scene reads them from the device
        self.hover_report: ItemReport | None = None  # the tooltip drawn last frame (tests read it)
        self.pinned_report: ItemReport | None = None  # the pinned window drawn last frame

    # --- input ---------------------------------------------------------------------------------
    def pressed(self, x: float, y: float) -> None:
        self.press = (x, y)

    def released(self, x: float, y: float, was_tool: bool) -> None:
        if self.press is not None and not was_tool and math.dist(self.press, (x, y)) <= CLICK_PIXELS:
            self.click = True
        self.press = None

    # --- each frame, inside the ImGui frame --------------------------------------------------------
    def update(self, fb_size: tuple[int, int], dragging: bool) -> None:
        """Find what the pointer is on (not while ``dragging``), pin it on a click, move the camera after
        a followed item."""
        picking, view, camera, geometry = self.picking, self.view.current, self.viewpoint.camera, self.geometry
        ray = plane = None
        pointer = self.pointer
        over_view = (
            pointer is not None
            and not dragging
            and not self.input.wants_mouse
            and geometry.over_view(pointer[0])
            and camera is not None
        )
        if over_view and not isinstance(view, PlotsView):
            scale = geometry.fb_scale(fb_size)
            sx, sy, origin, direction = scene_point(
                camera, pointer[0] * scale, pointer[1] * scale, fb_size, geometry.covered_right(fb_size)
            )
            ray, plane = (origin, direction), (sx, sy)
        if isinstance(view, PlotsView) or ray is not None:
            picking.hover(self.view, ray, plane)
        else:
            picking.clear_hover()
        if isinstance(view, PlotsView) and picking.hovered is not None and imgui.is_mouse_clicked(0):
            self.click = True
        if self.click:
            self.click = False
            scene = self.controller.scene
            item = picking.pin(scene)
            if item is not None:
                rep = report(scene, item)
                name = next(iter(rep.values.items()), ("item", f"#{item}"))
                self.controller.say(f"pinned {name[0]} {name[1]} (Esc unpins)")
        self._follow()

    def pinned_item(self) -> int | None:
        view = self.view.current
        return self.picking.pinned_item(self.controller.scene, getattr(view, "kind", None))

    def _follow(self) -> None:
        camera = self.viewpoint.camera
        if not self.picking.follow or camera is None:
            return
        item = self.pinned_item()
        place = self._place(item) if item is not None else None
        if place is None:
            return
        if camera.orbit_enabled:
            camera.target = place[:3].copy()
        else:
            camera.target[:2] = place[:2]

    def _place(self, item: int):
        """(x, y, z, radius) of a points item or the centre of a field cell."""
        import numpy as np

        view = self.view.current
        if isinstance(view, PointsView):
            return self.view.points.feed.item_sphere(item)
        if isinstance(view, FieldView):
            corners = np.array(cell_corners(view, item))
            return np.array([*corners.mean(axis=0), 0.0, 0.0])
        return None

    def draw(self, fb_size: tuple[int, int]) -> None:
        """The pinned item's window and highlight, then the hover tooltip (inside the ImGui frame)."""
        picking, scene, has_camera = self.picking, self.controller.scene, self.viewpoint.camera is not None
        self.hover_report = self.pinned_report = None
        pinned = self.pinned_item()
        self.view.plots.pinned = pinned if isinstance(self.view.current, PlotsView) else None
        if pinned is not None:
            self.pinned_report = self.reports.report(scene, pinned, "pinned")
            if self.pinned_report is not None:
                if not draw_pinned_window(self.pinned_report, picking, (12.0, 12.0), has_camera):
                    self.unpin()
                else:
                    self._highlight(pinned, fb_size, pinned=True)
        else:
            self.reports.forget("pinned")
        hovered = picking.hovered
        if hovered is not None and not (pinned is not None and hovered == pinned and picking.hovered_kind != "plots"):
            self.hover_report = self.reports.report(scene, hovered, "hover")
            if self.hover_report is not None and not self.hover_report.error:
                draw_tooltip(self.hover_report)
                self._highlight(hovered, fb_size, pinned=False)
        else:
            self.reports.forget("hover")

    def _highlight(self, item: int, fb_size: tuple[int, int], pinned: bool) -> None:
        view, camera = self.view.current, self.viewpoint.camera
        if camera is None or not isinstance(view, (PointsView, FieldView)):
            return
        width, height = fb_size
        shift = self.geometry.covered_right(fb_size) / max(width, 1)
        matrices = (camera.view_matrix(), camera.projection_matrix(width / max(height, 1), shift))
        display = tuple(float(v) for v in self.geometry.size())
        if isinstance(view, PointsView):
            feed = self.view.points.feed
            if not pinned and feed.host_positions is None:
                return  # a hovered item's ring would read the device's buffer every frame: the tooltip says enough
            sphere = feed.item_sphere(item)
            if sphere is not None:
                if pinned:
                    draw_sphere_ring(sphere, *matrices, display)
                else:
                    draw_sphere_ring(sphere, *matrices, display, HOVER_RING, 1.5)
        elif pinned:
            draw_cell_outline(cell_corners(view, item), *matrices, display)

    def unpin(self) -> bool:
        if self.picking.unpin():
            self.controller.say("unpinned")
            return True
        return False

    def release(self) -> None:
        self.picking.release()
