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
from sim.particles import world
from sim.particles.scene import ParticlesScene

CELL_CUTOFFS = 2.0  # a cell is about this many cutoffs wide
MIN_CELLS, MAX_CELLS = 8, 256


class DensityScene(ParticlesScene):
    spec = SPEC

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
        marked = self.marked(self.n)
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
        span = self.color_ranges.get(color_mode)  # fixed from the panel, else the counts' own range
        return FieldView(
            shape=(cells, cells), extent=(0.0, 0.0, self.size, self.size), value_range=span,
            legend=Legend("density", *(span or (0.0, top)), "particles per cell"),
            host=self.host_counts, write=self._write_counts if self.gpu is not None else None,
            colormap="inferno")

    def stats(self) -> dict:
        return {**super().stats(), "grid": f"{self.cells} x {self.cells} cells"}

    # --- one cell, for the viewer's pointer (items are cells, not particles) ------------------------------
    def item_key(self, item: int) -> int:
        return int(item)

    def item_of_key(self, key: int) -> int | None:
        return int(key) if 0 <= int(key) < self.cells**2 else None

    def is_marked(self, item: int) -> bool:
        return bool(self.describe_check(item))

    def _in_cell(self, cell: int, x, y):
        """Which of the points (x, y) lie in ``cell`` (numpy or CuPy, as x is)."""
        cells = self.cells
        row, col = divmod(int(cell), cells)
        scale = cells / self.size
        return ((x * scale).astype(np.int64).clip(0, cells - 1) == col) & \
            ((y * scale).astype(np.int64).clip(0, cells - 1) == row)

    def describe(self, item: int) -> dict[str, str]:
        cells = self.cells
        item = int(item)
        if not 0 <= item < cells * cells:
            raise IndexError(f"no cell {item} (the grid has {cells} x {cells})")
        row, col = divmod(item, cells)
        width = self.size / cells
        x, y, vx, vy = self.arrays()
        inside = self._in_cell(item, x, y)
        count = int(inside.sum())
        speed = float((((vx * vx + vy * vy) ** 0.5) * inside).sum()) / count if count else 0.0
        return {
            "cell": f"row {row}, column {col}",
            "x": f"{col * width:.4g} .. {(col + 1) * width:.4g}",
            "y": f"{row * width:.4g} .. {(row + 1) * width:.4g}",
            "particles": f"{count} ({count / max(self.n / cells**2, 1e-12):.2f} x the mean)",
            "mean speed": f"{speed:.4g} box units/s" if count else "-",
        }

    def describe_check(self, item: int) -> list[tuple[str, str, str, str]]:
        """The cell's particle count after the last step on the GPU and on the CPU, and which of its
        particles moved differently."""
        if self.checked is None or self.marked(self.n) is None or not 0 <= int(item) < self.cells**2:
            return []
        gpu, cpu, gids = self.checked
        marked_ids = gids[self.mismatch]
        in_gpu, in_cpu = self._in_cell(item, gpu[0], gpu[1]), self._in_cell(item, cpu[0], cpu[1])
        differing = sorted(int(k) for k in marked_ids if in_gpu[k] or in_cpu[k])
        if not differing:
            return []
        shown = ", ".join(f"#{k}" for k in differing[:8]) + (", …" if len(differing) > 8 else "")
        g, c = int(in_gpu.sum()), int(in_cpu.sum())
        return [("particles", str(g), str(c), f"{g - c:+d}"),
                ("differing particles", "", "", f"{len(differing)}: {shown}")]
