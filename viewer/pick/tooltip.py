"""What the viewer shows of a picked item, inside the ImGui frame: the hover tooltip, the pinned
item's window and its highlight in the view.

The values are the scene's (``Inspector.describe``: label -> text, in the scene's order). Under
verification, an item the last check marked also shows ``Inspector.describe_check``: its GPU and CPU
values side by side with their difference (while a user's own kernel does the steps, its values against
the CPU twin's: ``Knobs.describe_check`` chooses).
"""

from __future__ import annotations

import math
import traceback
from dataclasses import dataclass, field

import numpy as np
from imgui_bundle import imgui

from viewer.panel.style import ERROR, GREY, MESSAGE, difference_table

HIGHLIGHT = imgui.ImVec4(1.0, 0.85, 0.3, 1.0)
HOVER_RING = imgui.ImVec4(1.0, 1.0, 1.0, 0.55)
WRAP_EMS = 30  # a long value wraps at this many font heights


@dataclass
class ItemReport:
    """One item's values as shown: ``values`` from describe, ``check`` from describe_check."""

    item: int
    values: dict[str, str] = field(default_factory=dict)
    check: list[tuple[str, str, str, str]] = field(default_factory=list)
    error: str = ""


def report(scene, item: int) -> ItemReport:
    """The scene's description of ``item`` (a failure becomes the report's error, never an exception)."""
    try:
        values = dict(scene.inspector.describe(item))
        check = list(scene.knobs.describe_check(item)) if scene.checks.on else []
    except Exception as exc:  # noqa: BLE001  a scene that cannot describe must not take the viewer down
        if not isinstance(exc, IndexError):
            traceback.print_exception(exc)
        return ItemReport(item, error=str(exc).strip() or type(exc).__name__)
    return ItemReport(item, values, check)


class LateReports:
    """Reports of items whose scene reads their values from the device (``Inspector.prefetch``): asked for
    and shown once they have arrived, usually a frame later, so a tooltip never waits for the device.
    The newest arrival is shown (it names its item: under a moving stream of balls it is the one that
    was under the pointer a frame ago); a new request goes out when the last one has arrived. Other
    scenes' reports are made at once (``report``). One slot per use ("hover", "pinned")."""

    def __init__(self):
        self._asked: dict[str, object] = {}  # slot -> the Described on its way
        self._shown: dict[str, ItemReport] = {}  # slot -> the last report that arrived

    def report(self, scene, item: int, slot: str) -> ItemReport | None:
        """The newest report that has arrived for ``slot`` (None before the first)."""
        if scene.checks.on:  # the GPU / CPU rows come from the last check, read at once anyway
            return report(scene, item)
        asked = self._asked.get(slot)
        if asked is not None and not asked.ready():
            return self._shown.get(slot)
        if asked is not None:
            self._shown[slot] = ItemReport(asked.item, dict(asked.values()))
        try:
            described = scene.inspector.prefetch(item)
        except Exception:  # noqa: BLE001  report() says what went wrong
            self.forget(slot)
            return report(scene, item)
        if described is None:
            self.forget(slot)
            return report(scene, item)
        self._asked[slot] = described
        return self._shown.get(slot)

    def forget(self, slot: str) -> None:
        self._asked.pop(slot, None)
        self._shown.pop(slot, None)


def draw_report(rep: ItemReport) -> None:
    """The values as a two-column table, then the GPU / CPU comparison when there is one."""
    imgui.push_text_wrap_pos(imgui.get_font_size() * WRAP_EMS)
    if rep.error:
        imgui.text_colored(ERROR, rep.error)
    elif imgui.begin_table("##values", 2, imgui.TableFlags_.sizing_fixed_fit):
        for label, text in rep.values.items():
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text_colored(GREY, label)
            imgui.table_next_column()
            imgui.text_unformatted(text)
        imgui.end_table()
    if rep.check:
        imgui.separator()
        imgui.text_colored(ERROR, "differs from the CPU (verification):")
        flags = imgui.TableFlags_.sizing_fixed_fit | imgui.TableFlags_.borders_inner_v
        difference_table("##check", ("value", "GPU", "CPU", "difference"), rep.check, MESSAGE, flags)
    imgui.pop_text_wrap_pos()


def draw_tooltip(rep: ItemReport) -> None:
    imgui.begin_tooltip()
    draw_report(rep)
    imgui.text_colored(GREY, "click: pin")
    imgui.end_tooltip()


def draw_pinned_window(rep: ItemReport, picking, at: tuple[float, float], can_follow: bool) -> bool:
    """The pinned item's window at the view's top-left, with "camera follows" where the view has a
    camera (``can_follow``); returns False when the user unpinned it."""
    imgui.set_next_window_pos(at, imgui.Cond_.appearing)
    imgui.set_next_window_bg_alpha(0.9)
    flags = (
        imgui.WindowFlags_.always_auto_resize
        | imgui.WindowFlags_.no_saved_settings
        | imgui.WindowFlags_.no_focus_on_appearing
    )
    title = next(iter(rep.values.items()), ("item", f"#{rep.item}"))
    _, still_open = imgui.begin(f"pinned: {title[0]} {title[1]}###pinned", True, flags)
    draw_report(rep)
    if can_follow:
        changed, follow = imgui.checkbox("camera follows", picking.follow)
        if changed:
            picking.follow = follow
        imgui.same_line()
    unpinned = imgui.small_button("unpin (Esc)")
    imgui.end()
    return bool(still_open) and not unpinned


# --- highlight in the view -------------------------------------------------------------------------------
def project(point, view: np.ndarray, proj: np.ndarray, display: tuple[float, float]) -> tuple[float, float, float]:
    """(x, y, w) of a world point on the display (pixels, y down); w > 0 in front of the camera."""
    clip = proj @ (view @ np.array([point[0], point[1], point[2], 1.0]))
    w = float(clip[3])
    if abs(w) < 1e-12:
        return math.nan, math.nan, w
    return (clip[0] / w + 1) / 2 * display[0], (1 - clip[1] / w) / 2 * display[1], w


def draw_sphere_ring(sphere, view, proj, display, colour=HIGHLIGHT, thickness: float = 2.5) -> None:
    """A ring around a sphere (x, y, z, radius) on the view's background layer (under the panel)."""
    x, y, w = project(sphere[:3], view, proj, display)
    if not (w > 0 and math.isfinite(x) and math.isfinite(y)):
        return
    radius = float(sphere[3]) * proj[1, 1] / w * display[1] / 2
    draw = imgui.get_background_draw_list()
    draw.add_circle((x, y), max(radius + 3.0, 5.0), imgui.color_convert_float4_to_u32(colour), 0, thickness)


def draw_cell_outline(corners, view, proj, display, colour=HIGHLIGHT) -> None:
    """The outline of a field's cell (four world corners at z = 0)."""
    points = [project((cx, cy, 0.0), view, proj, display) for cx, cy in corners]
    if not all(p[2] > 0 for p in points):
        return
    draw = imgui.get_background_draw_list()
    u32 = imgui.color_convert_float4_to_u32(colour)
    for i in range(4):
        a, b = points[i], points[(i + 1) % 4]
        draw.add_line((a[0], a[1]), (b[0], b[1]), u32, 2.5)


def cell_corners(view, cell: int) -> list[tuple[float, float]]:
    x0, y0, x1, y1 = view.extent
    rows, cols = view.shape
    row, col = divmod(int(cell), cols)
    w, h = (x1 - x0) / cols, (y1 - y0) / rows
    left, bottom = x0 + col * w, y0 + row * h
    return [(left, bottom), (left + w, bottom), (left + w, bottom + h), (left, bottom + h)]
