"""What a points scene (balls, particles) hands the viewer, written once: positions and one quantity
per item for the colour mode, on the host or straight into the viewer's buffers on the device.

A points scene says what its own colour modes colour by (``mode_legend``: values over a colour bar,
or categories) and writes positions and its own quantities with numpy or CuPy (``fill_points``,
``fill_own``). This mixin adds the modes every points scene has, uniform (one colour) and CUDA
block (category = thread index // block), and makes the ``PointsView``: the range fixed from the
panel or none (the viewer takes the values' own), the palette of categories, and verification's
marks as the view's mask. The viewer does the colouring.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from sim.contract import BLOCK_COLORS, Box, Legend, PointsView, Trough, View
from sim.framework.colormap import BLOCK_PALETTE, spread
from sim.framework.scene import Scene
from sim.gpu.cuda import ceil_div

UNIFORM = "uniform"


class PointsScene(Scene):
    """The base of a ``Scene`` whose view is points (a subclass may draw another view, e.g. a field).
    Hooks: ``uniform_palette`` ((1, 3) RGB, the uniform mode's colour), ``points_frame``, ``mode_legend``,
    ``fill_points`` and ``fill_own``."""

    uniform_palette: np.ndarray

    def points_frame(self) -> tuple[int, Trough | Box, float]:
        """(dims, surroundings, spacing) of the view."""
        raise NotImplementedError

    @property
    def points_on_device(self) -> bool:
        """Is the state the view is written from on the device (then the view writes through interop)?"""
        return self.backend == "gpu"

    def mode_legend(self, mode: str) -> Legend:
        """The legend of one of the scene's own modes (lo, hi of values: placeholders the viewer
        replaces; a categorical legend's colour map is spread over its categories)."""
        raise NotImplementedError

    def fill_points(self, xp, pos_out, quantity_out, mode: str) -> None:
        """(n, 4) float32 positions into ``pos_out`` and the quantity of ``mode`` into ``quantity_out``
        (``fill_quantity``), with numpy or CuPy (``xp``)."""
        raise NotImplementedError

    def fill_own(self, mode: str, xp, out) -> None:
        """The quantity of one of the scene's own modes into ``out`` (n,)."""
        raise NotImplementedError

    def block_threads(self, xp):
        """The CUDA thread that handled each item (block colouring): the item's index by default."""
        return xp.arange(self.n, dtype=xp.int32)

    # --- shared ------------------------------------------------------------------------------------
    def fill_quantity(self, mode: str, xp, out) -> None:
        if mode == BLOCK_COLORS:
            out[:] = self.block_threads(xp) // self.knobs.threads
        elif mode == UNIFORM:
            out[:] = 0
        else:
            self.fill_own(mode, xp, out)

    def coloring(self, mode: str) -> tuple[Legend | None, np.ndarray | None]:
        """(legend, palette) of ``mode``: palette None for values; no legend for one colour."""
        if mode not in self.color_modes:
            raise ValueError(f"unknown colour mode {mode!r} (choose from {', '.join(self.color_modes)})")
        if mode == BLOCK_COLORS:
            block = self.knobs.threads
            blocks = max(ceil_div(self.n, block), 1)
            return Legend(
                f"CUDA block ({len(BLOCK_PALETTE)} colours, repeating)",
                0,
                blocks - 1,
                f"blocks of {block} threads",
                colormap="block",
                categorical=True,
            ), BLOCK_PALETTE
        if mode == UNIFORM:
            return None, self.uniform_palette
        legend = self.mode_legend(mode)
        return legend, spread(legend.colormap) if legend.categorical else None

    def view(self, color_mode: str) -> View:
        legend, palette = self.coloring(color_mode)
        fixed = self.color_scales.ranges.get(color_mode) if palette is None else None
        if fixed is not None and legend is not None:  # a legend whenever values are coloured
            legend = replace(legend, lo=fixed[0], hi=fixed[1])
        dims, surroundings, spacing = self.points_frame()
        n, dtype = self.n, np.float32 if palette is None else np.int32
        write = None
        if self.points_on_device:

            def write(pos, quantity):
                import cupy

                self.fill_points(cupy, pos, quantity, color_mode)

        def host():
            if not self.points_on_device:
                pos, quantity = np.empty((n, 4), np.float32), np.empty(n, dtype)
                self.fill_points(np, pos, quantity, color_mode)
                return pos, quantity
            import cupy

            pos, quantity = cupy.empty((n, 4), cupy.float32), cupy.empty(n, dtype)
            self.fill_points(cupy, pos, quantity, color_mode)
            return pos.get(), quantity.get()

        own_colormap = legend.colormap if legend is not None and palette is None else ""
        return PointsView(
            n,
            dims,
            surroundings,
            spacing,
            host,
            write,
            legend,
            colormap=own_colormap or "viridis",
            palette=palette,
            value_range=fixed,
            mask=self.checks.marked(n),
        )
