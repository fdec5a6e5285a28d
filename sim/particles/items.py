"""One particle as the viewer's pointer sees it: its values, the CUDA thread that moved it, and under
verification its GPU step beside the CPU's (``ParticlesScene.inspector``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.framework.checks import Inspector
from sim.particles import world

if TYPE_CHECKING:
    from sim.particles.scene import ParticlesScene


class ParticleInspector(Inspector):
    scene: ParticlesScene

    def item_key(self, item: int) -> int:
        """On the GPU the particles are kept in the device's order (the order the last step wrote them in);
        their ids follow them."""
        scene = self.scene
        if scene.gpu is not None:
            return int(scene.gpu.state[4][int(item)].get())
        return int(item)

    def item_of_key(self, key: int) -> int | None:
        scene = self.scene
        if scene.gpu is None:
            return super().item_of_key(key)
        import cupy

        found = cupy.flatnonzero(scene.gpu.state[4][: scene.n] == int(key))[:1].get()
        return int(found[0]) if found.size else None

    def describe(self, item: int) -> dict[str, str]:
        scene = self.scene
        item = int(item)
        if not 0 <= item < scene.n:
            raise IndexError(f"no particle {item} (there are {scene.n:,})")
        x, y, vx, vy = scene.arrays()
        px, py, pvx, pvy = (float(a[item]) for a in (x, y, vx, vy))
        near = (x - px) ** 2 + (y - py) ** 2 <= world.CUTOFF**2  # the item itself included
        neighbours = int(near.sum()) - 1
        closest = (x - px) ** 2 + (y - py) ** 2
        closest[item] = np.inf
        inv = scene.nbins / scene.size
        col, row = (min(int(v * inv), scene.nbins - 1) if np.isfinite(v) else -1 for v in (px, py))
        values = {
            "particle": f"#{self.item_key(item)}",
            "position": f"({px:.6g}, {py:.6g})",
            "velocity": f"({pvx:.4g}, {pvy:.4g})  |v| {float(np.hypot(pvx, pvy)):.4g} box units/s",
            "neighbours": f"{neighbours} within the cutoff ({world.CUTOFF:g})",
            "closest": f"{float(closest.min()) ** 0.5 / world.CUTOFF:.3f} cutoffs" if scene.n > 1 else "-",
            "bin": f"{row * scene.nbins + col} (row {row}, column {col})" if min(row, col) >= 0 else "none: NaN",
        }
        if scene.gpu is not None:
            block = scene.knobs.threads
            values["CUDA"] = f"block {item // block}, thread {item % block} (of {block})"
        return values

    def describe_check(self, item: int) -> list[tuple[str, str, str, str]]:
        """The particle after the last step on the GPU and on the CPU from the same state."""
        scene = self.scene
        if scene.checked is None or not self.is_marked(item):
            return []
        gpu, cpu, gids = scene.checked
        if item >= gids.shape[0]:
            return []
        key = int(gids[item])
        rows = []
        for row, name in enumerate(("x", "y", "vx", "vy")):
            g, c = float(gpu[row, key]), float(cpu[row, key])
            rows.append((name, f"{g:.10g}", f"{c:.10g}", f"{g - c:+.3g}"))
        distance = float(np.hypot(gpu[0, key] - cpu[0, key], gpu[1, key] - cpu[1, key]))
        rows.append(("distance apart", "", "", f"{distance:.3g} ({distance / scene.size:.2g} of the box)"))
        return rows
