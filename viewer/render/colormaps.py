"""The colour maps and palettes the viewer draws quantities with, as GL textures: a field's cells
and a points view's items sample the same 256-texel ramp of a named map (assets/colormaps.toml),
and categories a palette texture of one texel per colour."""

from __future__ import annotations

import moderngl
import numpy as np

from sim.framework.colormap import colormap, stops

RAMP_SIZE = 256
# Highlight candidates for NaN cells: the one farthest from the colour map is used.
HIGHLIGHTS = ((1.0, 0.0, 0.0), (0.0, 1.0, 1.0), (1.0, 0.0, 1.0), (0.0, 1.0, 0.0))


def ramp(name: str) -> np.ndarray:
    """(RAMP_SIZE, 3) float32 colours of the named colour map, evenly spaced."""
    return colormap(np.linspace(0.0, 1.0, RAMP_SIZE), ramp=stops(name))[:, :3].copy()


def highlight_color(name: str) -> tuple[float, float, float]:
    """The highlight (NaN) colour for a colour map: the candidate farthest from all its colours."""
    colours = ramp(name)
    distance = [float(np.min(np.linalg.norm(colours - np.array(c), axis=1))) for c in HIGHLIGHTS]
    return HIGHLIGHTS[int(np.argmax(distance))]


class ColourTexture:
    """An RGB float texture one texel high, rebuilt only when its colours change: a colour map's
    ramp (``set_colormap``, linear: sampled at (t * 255 + 0.5) / 256) or a palette (``set_palette``,
    nearest: one texel per category)."""

    def __init__(self, ctx: moderngl.Context, filter_: int):
        self.ctx = ctx
        self.filter = filter_
        self.texture: moderngl.Texture | None = None
        self.colors: np.ndarray | None = None  # the (k, 3) colours it holds
        self.name = ""  # the colour map's, when it holds one

    def set_colormap(self, name: str) -> None:
        if name != self.name:
            self._set(ramp(name))  # KeyError for a map assets/colormaps.toml lacks
            self.name = name

    def set_palette(self, palette: np.ndarray) -> None:
        if (
            not self.name
            and self.colors is not None
            and (self.colors is palette or np.array_equal(self.colors, palette))
        ):
            return
        self._set(palette)
        self.name = ""

    def _set(self, colors: np.ndarray) -> None:
        colors = np.ascontiguousarray(colors, np.float32)
        if colors.ndim != 2 or colors.shape[1] != 3 or len(colors) == 0:
            raise ValueError(f"colours must be (k, 3) RGB with k >= 1, got shape {colors.shape}")
        if self.texture is not None:
            self.texture.release()
        self.texture = self.ctx.texture((len(colors), 1), 3, colors.tobytes(), dtype="f4")
        self.texture.filter = (self.filter, self.filter)
        self.texture.repeat_x = self.texture.repeat_y = False
        self.colors = colors

    def use(self, location: int) -> None:
        self.texture.use(location)

    def release(self) -> None:
        if self.texture is not None:
            self.texture.release()
            self.texture = None
