"""One cell as the viewer's pointer shows it (``HeatInspector``): its temperature and what the next step
does to it, and the CUDA block and thread that write it under a launch's geometry (``kernels.LaunchTiles``;
no GPU needed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.framework.checks import Inspector
from sim.heat.kernels import COLS, LaunchTiles

if TYPE_CHECKING:
    from sim.heat.scene import HeatScene


def cell_values(near: np.ndarray, i: int, j: int, ni: int, nj: int, tfac) -> dict[str, str]:
    """``near``: the cells around (i, j), at most 3x3, clipped at the grid's edges (float32)."""
    c = near[min(j, 1), min(i, 1)]
    values = {"temperature": f"{c:.6g}"}
    if 0 < i < ni - 1 and 0 < j < nj - 1:
        two, tfac = np.float32(2), np.float32(tfac)  # the update in the kernels' float32 order
        d2 = (near[1, 0] - two * c + near[1, 2]) + (near[0, 1] - two * c + near[2, 1])
        values["next step"] = f"{float(c + tfac * d2) - float(c):+.3g} (tfac x {float(d2):+.4g})"
    else:
        values["boundary"] = "held: the outer ring is never written"
    return values


def thread_of(tiles: LaunchTiles, i: int, j: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """((block x, block y), (thread x, thread y)) of the thread that writes cell (i, j)."""
    bx, by = (int(v) for v in tiles.block_of(i, j))
    if tiles.kernel == "temporal":  # a warp per strip of warp_w columns (4 a lane) and band of warp_h rows
        strip = (i % tiles.tile_w) // tiles.warp_w
        lane = (tiles.halo_left + i % tiles.warp_w) // COLS
        return (bx, by), (strip * 32 + lane, (j // tiles.warp_h) % tiles.block[1])
    return (bx, by), (i % tiles.block[0], j % tiles.block[1])


def thread_text(tiles: LaunchTiles, i: int, j: int) -> str:
    (bx, by), (tx, ty) = thread_of(tiles, i, j)
    text = f"block ({bx}, {by}), thread ({tx}, {ty}) of {'x'.join(map(str, tiles.block))}, {tiles.kernel}"
    if tiles.kernel == "temporal":
        text += f" (k {tiles.k}: the warp streams {tiles.warp_h} rows, {COLS} columns a lane)"
    return text


class HeatInspector(Inspector):
    """A cell under the viewer's pointer (``HeatScene.inspector``); items are cells, ``row * ni + column``."""

    scene: HeatScene

    def cell(self, item: int) -> tuple[int, int]:
        scene = self.scene
        item = int(item)
        if not 0 <= item < scene.n:
            raise IndexError(f"no cell {item} (the grid has {scene.ni:,} x {scene.nj:,})")
        j, i = divmod(item, scene.ni)
        return i, j

    def describe(self, item: int) -> dict[str, str]:
        scene = self.scene
        i, j = self.cell(item)
        near = scene.sim.field[max(j - 1, 0) : j + 2, max(i - 1, 0) : i + 2]
        near = near.get() if hasattr(near, "get") else np.array(near)  # 3x3 cells at most, never the field
        values = {"cell": f"i {i}, j {j}", **cell_values(near, i, j, scene.ni, scene.nj, scene.sim.tfac)}
        if scene.gpu is not None:
            values["CUDA"] = thread_text(scene.gpu.tiles(), i, j)
        return values

    def describe_check(self, item: int) -> list[tuple[str, str, str, str]]:
        """The cell after the last checked frame on the GPU and on the CPU from the same field."""
        checked = self.scene.checked
        if checked is None or not self.is_marked(item):
            return []
        i, j = self.cell(item)
        g, c = (float(a[j, i]) for a in checked)
        return [("temperature", f"{g:.9g}", f"{c:.9g}", f"{g - c:+.3g}")]
