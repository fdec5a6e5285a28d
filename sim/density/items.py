"""What the density scene says about one cell of its grid under the viewer's pointer
(``DensityScene.inspector``): its particles and their mean speed, and under verification its count after
the GPU's step and the CPU's. Items are cells (``row * cells + column``), not particles."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.framework.checks import Inspector

if TYPE_CHECKING:
    from sim.density.scene import DensityScene


class CellInspector(Inspector):
    scene: DensityScene

    def item_key(self, item: int) -> int:
        return int(item)

    def item_of_key(self, key: int) -> int | None:
        return int(key) if 0 <= int(key) < self.scene.cells**2 else None

    def is_marked(self, item: int) -> bool:
        return bool(self.describe_check(item))

    def in_cell(self, cell: int, x, y):
        """Which of the points (x, y) lie in ``cell`` (numpy or CuPy, as x is)."""
        cells = self.scene.cells
        row, col = divmod(int(cell), cells)
        scale = cells / self.scene.size
        return ((x * scale).astype(np.int64).clip(0, cells - 1) == col) & (
            (y * scale).astype(np.int64).clip(0, cells - 1) == row
        )

    def describe(self, item: int) -> dict[str, str]:
        scene = self.scene
        cells = scene.cells
        item = int(item)
        if not 0 <= item < cells * cells:
            raise IndexError(f"no cell {item} (the grid has {cells} x {cells})")
        row, col = divmod(item, cells)
        width = scene.size / cells
        x, y, vx, vy = scene.arrays()
        inside = self.in_cell(item, x, y)
        count = int(inside.sum())
        speed = float((((vx * vx + vy * vy) ** 0.5) * inside).sum()) / count if count else 0.0
        return {
            "cell": f"row {row}, column {col}",
            "x": f"{col * width:.4g} .. {(col + 1) * width:.4g}",
            "y": f"{row * width:.4g} .. {(row + 1) * width:.4g}",
            "particles": f"{count} ({count / max(scene.n / cells**2, 1e-12):.2f} x the mean)",
            "mean speed": f"{speed:.4g} box units/s" if count else "-",
        }

    def describe_check(self, item: int) -> list[tuple[str, str, str, str]]:
        """The cell's particle count after the last step on the GPU and on the CPU, and which of its
        particles moved differently."""
        scene = self.scene
        if scene.checked is None or scene.checks.marked(scene.n) is None or not 0 <= int(item) < scene.cells**2:
            return []
        gpu, cpu, gids = scene.checked
        marked_ids = gids[scene.checks.mismatch]
        in_gpu, in_cpu = self.in_cell(item, gpu[0], gpu[1]), self.in_cell(item, cpu[0], cpu[1])
        differing = sorted(int(k) for k in marked_ids if in_gpu[k] or in_cpu[k])
        if not differing:
            return []
        shown = ", ".join(f"#{k}" for k in differing[:8]) + (", …" if len(differing) > 8 else "")
        g, c = int(in_gpu.sum()), int(in_cpu.sum())
        return [
            ("particles", str(g), str(c), f"{g - c:+d}"),
            ("differing particles", "", "", f"{len(differing)}: {shown}"),
        ]
