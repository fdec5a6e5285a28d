"""How a points view's quantity becomes colours, the same for the GL impostors (shaders/spheres.glsl)
and the CUDA splat (splat.cu).

Each item carries 32 bits: a value's float bits, mapped through the view's colour map (the field's
256-texel ramp texture) over the range in force, or a category id, drawn in the palette's colour
``id % len(palette)`` (a texture of one texel per colour). Items the view's mask marks
(verification) are written as ``MARKED``, all bits set (a NaN no arithmetic makes), and drawn in the
mismatch colour whatever their quantity.
"""

from __future__ import annotations

from dataclasses import replace

import moderngl
import numpy as np

from sim.contract import Legend, PointsView
from sim.framework.colormap import MISMATCH_RGBA
from viewer.render.colormaps import ColourTexture

MARKED = 0xFFFFFFFF
MARKED_COLOR = tuple(float(v) for v in MISMATCH_RGBA[:3])
COLORMAP_UNIT, PALETTE_UNIT = 0, 1  # texture units of spheres.glsl's samplers


class PointColours:
    def __init__(self, ctx: moderngl.Context):
        self.colormap = ColourTexture(ctx, moderngl.LINEAR)
        self.palette = ColourTexture(ctx, moderngl.NEAREST)
        self.categorical = False
        self.value_range: tuple[float, float] = (0.0, 1.0)  # what the colour map spans now
        self.view: PointsView | None = None
        self._device_tables = None  # (ramp, palette, the colours they were made from) on the device, for the splat

    def take(self, view: PointsView, data_range: tuple[float, float]) -> None:
        """Colour ``view``'s items: values over its fixed range, else ``data_range`` (theirs now)."""
        self.view = view
        self.categorical = view.categorical
        if self.categorical:
            self.palette.set_palette(view.palette)
        else:
            self.colormap.set_colormap(view.colormap)
            fixed = view.value_range
            self.value_range = tuple(float(v) for v in fixed) if fixed is not None else data_range
        if self.palette.texture is None:  # a sampler needs a texture even while values are drawn
            self.palette.set_palette(np.zeros((1, 3), np.float32))
        if self.colormap.texture is None:
            self.colormap.set_colormap(view.colormap)

    @property
    def legend(self) -> Legend | None:
        """The view's legend, over the range the colours span now (values)."""
        legend = self.view.legend if self.view is not None else None
        if legend is None or self.categorical:
            return legend
        lo, hi = self.value_range
        return replace(legend, lo=lo, hi=hi)

    def bind(self, program: moderngl.Program) -> None:
        """The colouring's uniforms and textures for spheres.glsl."""
        program["u_categorical"].value = self.categorical
        program["u_range"].value = self.value_range
        program["u_marked_color"].value = MARKED_COLOR
        self.colormap.use(COLORMAP_UNIT)
        self.palette.use(PALETTE_UNIT)
        program["u_colormap"].value = COLORMAP_UNIT
        program["u_palette"].value = PALETTE_UNIT

    def kernel_args(self) -> tuple:
        """splat.cu's colouring arguments: ramp, palette, palette size, categorical, low, high, marked colour."""
        import cupy

        made_from = (self.colormap.colors, self.palette.colors)
        if self._device_tables is None or any(
            a is not b for a, b in zip(self._device_tables[2], made_from, strict=True)
        ):
            self._device_tables = (cupy.asarray(made_from[0]), cupy.asarray(made_from[1]), made_from)
        ramp, palette, _ = self._device_tables
        f = np.float32
        lo, hi = self.value_range
        return (
            ramp,
            palette,
            np.int32(len(palette)),
            np.int32(self.categorical),
            f(lo),
            f(hi),
            *(f(v) for v in MARKED_COLOR),
        )

    def release(self) -> None:
        self.colormap.release()
        self.palette.release()
