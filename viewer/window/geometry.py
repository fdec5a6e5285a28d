"""The window's sizes and the panel's share of them: display pixels (pyglet's window size, where the pointer
is) against framebuffer pixels (what is drawn; more on a high-DPI screen), and the strip at the right edge the
panel covers. Read every time: the window can change size between any two frames."""

from __future__ import annotations

from viewer.panel import style


class WindowGeometry:
    def __init__(self, window):
        self.window = window  # a pyglet window

    def size(self) -> tuple[int, int]:
        return self.window.get_size()

    def fb_size(self) -> tuple[int, int]:
        return self.window.get_framebuffer_size()

    def fb_scale(self, fb_size: tuple[int, int]) -> float:
        """Framebuffer pixels per display pixel."""
        return fb_size[0] / max(self.window.get_size()[0], 1)

    def covered_display(self) -> int:
        """Display pixels the panel covers at the right edge."""
        return style.panel_cover()

    def covered_right(self, fb_size: tuple[int, int]) -> int:
        """Framebuffer pixels the panel covers at the right edge."""
        return int(self.covered_display() * self.fb_scale(fb_size))

    def over_view(self, x: float) -> bool:
        """Whether display x is left of the panel, over the view."""
        return x < self.window.get_size()[0] - self.covered_display()

    def plots_area(self) -> tuple[float, float, float, float]:
        """(x, y, width, height) of the view left of the panel, in display pixels."""
        width, height = self.window.get_size()
        return 0.0, 0.0, float(max(width - self.covered_display(), 1)), float(height)
