"""The panel's display section (window only): the UI scale (for high-DPI screens), full screen
(F11) and the camera bookmarks (1…4 restore, Ctrl+1…4 save)."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.panel.section import PanelContext, PanelSection
from viewer.panel.style import DISPLAY, UI_SCALES, item_width, tooltip
from viewer.settings import BOOKMARKS


class DisplaySection(PanelSection):
    """Window only (``ctx.window``)."""

    title = DISPLAY

    def shows(self, ctx: PanelContext) -> bool:
        return ctx.window is not None

    def draw(self, ctx: PanelContext) -> None:
        _draw(ctx.window)


def _draw(app) -> None:
    imgui.set_next_item_width(item_width())
    changed, scale = imgui.slider_float("UI scale", float(app.ui_scale), *UI_SCALES, "%.2f")
    if changed:
        app.ui_scale = scale
    tooltip("the panel's size and font; it starts from the monitor's content scale (kept with the settings)")
    changed, full = imgui.checkbox("full screen (F11)", bool(app.window.fullscreen))
    if changed and full != bool(app.window.fullscreen):
        app.actions.toggle_fullscreen()
    imgui.text("camera bookmarks:")
    for number in BOOKMARKS:
        imgui.same_line()
        saved = number in app.bookmarks
        imgui.begin_disabled(not saved)
        if imgui.small_button(number):
            app.actions.restore_bookmark(number)
        imgui.end_disabled()
        tooltip(f"{number}: restore" if saved else f"Ctrl+{number} saves the camera here")
    imgui.same_line()
    if imgui.small_button("save…"):
        free = next((n for n in BOOKMARKS if n not in app.bookmarks), BOOKMARKS[-1])
        app.actions.save_bookmark(free)
    tooltip("save the camera into the first free bookmark (Ctrl+1…4 chooses)")
