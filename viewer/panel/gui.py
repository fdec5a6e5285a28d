"""One Dear ImGui + ImPlot context with its moderngl renderer and the panel's font.

Each ``Gui`` owns its contexts and makes them current before use, so a window and a headless
render can coexist in one process (tests do that). The font (Roboto, assets/fonts/) is loaded
the ImGui 1.92 way: added to the atlas once, sized by ``style.font_size_base``; the renderer
builds its texture on demand (``ImGuiRenderer.update_textures``).
"""

from __future__ import annotations

import sys

import moderngl
from imgui_bundle import imgui, implot

import assets
from viewer.panel.imgui_renderer import ImGuiRenderer
from viewer.panel.style import FONT, FONT_SIZE

GRAB_WIDTH = 6.0
GRAB_ALPHA = 0.55


class Gui:
    def __init__(self, ctx: moderngl.Context):
        self.imgui_ctx = imgui.create_context()
        self.implot_ctx = implot.create_context()
        self.make_current()
        io = imgui.get_io()
        io.set_ini_filename("")  # no imgui.ini next to wherever the viewer was started
        io.config_flags &= ~imgui.ConfigFlags_.nav_enable_keyboard  # keys belong to the scene
        imgui.style_colors_dark()
        style = imgui.get_style()
        style.window_rounding = 4.0
        style.frame_rounding = 3.0
        # A slim, see-through slider handle: the value printed across the slider stays readable.
        style.grab_min_size = GRAB_WIDTH
        for name in ("slider_grab", "slider_grab_active"):
            colour = style.color_(getattr(imgui.Col_, name))
            style.set_color_(getattr(imgui.Col_, name), imgui.ImVec4(colour.x, colour.y, colour.z, GRAB_ALPHA))
        self.font = _load_font(io, style)
        self.scale = 1.0
        self.renderer = ImGuiRenderer(ctx)

    def set_ui_scale(self, scale: float) -> None:
        """Make the panel's font and sizes ``scale`` times their size at 1 (a high-DPI screen)."""
        scale = float(scale)
        if abs(scale - self.scale) < 1e-6:
            return
        self.make_current()
        style = imgui.get_style()
        style.scale_all_sizes(scale / self.scale)
        style.font_scale_main = scale
        self.scale = scale

    def make_current(self) -> None:
        imgui.set_current_context(self.imgui_ctx)
        implot.set_current_context(self.implot_ctx)

    def takes_mouse_at(self, x: float, y: float) -> bool:
        """Whether the mouse at display point (x, y), y down, belongs to ImGui: over one of the last
        frame's windows that take the mouse (the panel, the help), while a widget is held, or while a
        popup is open (a click outside a combo's list only closes it). io.want_capture_mouse would
        only say so after the next frame."""
        self.make_current()
        if imgui.is_any_item_active() or len(self.imgui_ctx.open_popup_stack):
            return True
        for window in self.imgui_ctx.windows:
            if not window.active or window.hidden or window.flags & imgui.WindowFlags_.no_mouse_inputs:
                continue
            rect = window.outer_rect_clipped
            if rect.min.x <= x < rect.max.x and rect.min.y <= y < rect.max.y:
                return True
        return False

    @property
    def io(self):
        return imgui.get_io()

    def new_frame(self, display_size: tuple[int, int], framebuffer_size: tuple[int, int], dt: float) -> None:
        self.make_current()
        io = imgui.get_io()
        width, height = max(display_size[0], 1), max(display_size[1], 1)
        io.display_size = (width, height)
        io.display_framebuffer_scale = (framebuffer_size[0] / width, framebuffer_size[1] / height)
        io.delta_time = dt if dt > 0 else 1e-3
        imgui.new_frame()

    def end_frame(self) -> None:
        """Finish the frame's widgets; ``draw`` may then be called once or more."""
        self.make_current()
        imgui.render()

    def draw_data(self):
        self.make_current()
        return imgui.get_draw_data()

    def draw(self, target: moderngl.Framebuffer) -> None:
        """Draw the last finished frame over ``target``."""
        self.make_current()
        self.renderer.render(imgui.get_draw_data(), target)

    def release(self) -> None:
        self.make_current()
        self.renderer.release()
        implot.destroy_context(self.implot_ctx)
        imgui.destroy_context(self.imgui_ctx)


def _load_font(io, style):
    """The panel's font at FONT_SIZE; ImGui's own font (with the reason on stderr) if it cannot load."""
    try:
        font = io.fonts.add_font_from_file_ttf(str(assets.path(FONT)), FONT_SIZE)
    except (OSError, RuntimeError) as exc:
        print(f"viewer: panel font unavailable, using ImGui's: {exc}", file=sys.stderr)
        return None
    style.font_size_base = FONT_SIZE
    return font
