"""The density scene: the CS 267 particles shown as the number of particles in each cell of a grid.

The particles step exactly as in the particles scene (this class inherits it all: presets, both
backends, verification, the push tool). Its view is a ``FieldView``: the square box cut into cells
about two cutoffs wide (at least MIN_CELLS and at most MAX_CELLS per side), each cell's count made
with a bincount, by numpy on the CPU, by CuPy on the GPU straight into the viewer's mapped buffer.
Under verification, the cells holding a particle whose GPU step differs from the CPU's are NaN
(drawn in the highlight colour).
"""

from __future__ import annotations

import math

import numpy as np

from sim.contract import FieldView, Legend
from sim.density import SPEC
from sim.density.items import CellInspector
from sim.particles import world
from sim.particles.scene import ParticlesScene

CELL_CUTOFFS = 2.0  # a cell is about this many cutoffs wide
MIN_CELLS, MAX_CELLS = 8, 256


class DensityScene(ParticlesScene):
    spec = SPEC
    inspector_type = CellInspector

    @property
    def cells(self) -> int:
        """Cells per side of the grid."""
        return int(min(max(round(self.size / (CELL_CUTOFFS * world.CUTOFF)), MIN_CELLS), MAX_CELLS))

    def counts(self, xp=np, out=None):
        """Particles per cell as float32 (cells, cells), row 0 at y = 0, into ``out`` when given;
        cells of particles marked by verification are NaN."""
        cells = self.cells
        x, y, _, _ = self.arrays()
        scale = cells / self.size
        col = xp.clip((x * scale).astype(xp.int64), 0, cells - 1)
        row = xp.clip((y * scale).astype(xp.int64), 0, cells - 1)
        index = row * cells + col
        counts = xp.bincount(index, minlength=cells * cells).reshape(cells, cells)
        if out is None:
            out = xp.empty((cells, cells), xp.float32)
        out[...] = counts
        marked = self.checks.marked(self.n)
        if marked is not None:
            out.reshape(-1)[index[xp.asarray(marked)]] = xp.nan
        return out

    def host_counts(self) -> np.ndarray:
        """``counts`` on the host, whichever backend holds the particles."""
        if self.gpu is None:
            return self.counts(np)
        import cupy

        return self.counts(cupy).get()

    def _write_counts(self, out) -> None:
        import cupy

        self.counts(cupy, out)

    @property
    def color_modes(self) -> dict[str, str]:
        return {"count": "Particles per cell"}

    def view(self, color_mode: str) -> FieldView:
        cells = self.cells
        top = float(max(1, math.ceil(3.0 * self.n / cells**2)))  # three times the mean count
        span = self.color_scales.ranges.get(color_mode)  # fixed from the panel, else the counts' own range
        return FieldView(
            shape=(cells, cells),
            extent=(0.0, 0.0, self.size, self.size),
            value_range=span,
            legend=Legend("density", *(span or (0.0, top)), "particles per cell"),
            host=self.host_counts,
            write=self._write_counts if self.gpu is not None else None,
            colormap="inferno",
        )

    def stats(self) -> dict:
        return {**super().stats(), "grid": f"{self.cells} x {self.cells} cells"}
