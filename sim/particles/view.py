"""How a particles scene is drawn (``sim.framework.points``): its colour modes (speed, bin) and their legends,
the box as the view's surroundings, positions and quantities written with numpy or CuPy where the state is,
and the widths of the live distance histogram."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.contract import Box, Legend
from sim.framework.points import PointsScene
from sim.particles import world

if TYPE_CHECKING:
    from sim.particles.gpu import ParticlesGpu
    from sim.particles.pipeline_cpu import HostParticles

UNIFORM_PALETTE = np.array([[0.3, 0.7, 0.95]], np.float32)


class ParticlesView(PointsScene):
    """The drawing half of ``ParticlesScene``: reads the state the scene holds."""

    if TYPE_CHECKING:  # the scene's own (ParticlesScene)
        gpu: ParticlesGpu | None
        host: HostParticles | None
        size: float
        nbins: int

    # --- what the viewer reads ------------------------------------------------------------------------
    def arrays(self):
        """x, y, vx, vy where the state is (the device's arrays on the GPU)."""
        if self.gpu is not None:
            return self.gpu.state[:4]
        h = self.host
        return h.x, h.y, h.vx, h.vy

    @property
    def color_modes(self) -> dict[str, str]:
        return {"speed": "Speed", "bin": "Bin", "uniform": "Uniform", **super().color_modes}

    # --- the view (sim.framework.points) ------------------------------------------------------------------
    @property
    def points_on_device(self) -> bool:
        return self.gpu is not None

    def points_frame(self) -> tuple[int, Box, float]:
        return 2, Box(self.size), self.size / np.sqrt(max(self.n, 1))

    def mode_legend(self, mode: str) -> Legend:
        if mode == "speed":
            return Legend("speed", 0.0, 1.0, "box units/s")
        return Legend(
            "bin (neighbouring bins apart in colour)",
            0,
            self.nbins**2 - 1,
            "bins",
            colormap="viridis",
            categorical=True,
        )

    def fill_points(self, xp, pos_out, quantity_out, mode: str) -> None:
        self._fill_positions(pos_out)
        self.fill_quantity(mode, xp, quantity_out)

    def _fill_positions(self, out) -> None:
        """Discs half a cutoff wide, so touching discs are a cutoff apart."""
        x, y, _, _ = self.arrays()
        out[:, 0] = x
        out[:, 1] = y
        out[:, 2] = 0.0
        out[:, 3] = world.CUTOFF / 2

    def fill_own(self, mode: str, xp, out) -> None:
        x, y, vx, vy = self.arrays()
        if mode == "speed":
            out[:] = xp.sqrt(vx * vx + vy * vy)
            return
        inv = self.nbins / self.size
        out[:] = xp.minimum((y * inv).astype(xp.int64), self.nbins - 1) * self.nbins + xp.minimum(
            (x * inv).astype(xp.int64), self.nbins - 1
        )

    def positions(self) -> np.ndarray:
        """(n, 4) x, y, 0, radius on the host."""
        if self.gpu is None:
            pos = np.empty((self.n, 4), np.float32)
            self._fill_positions(pos)
            return pos
        import cupy

        pos = cupy.empty((self.n, 4), cupy.float32)
        self._fill_positions(pos)
        return pos.get()

    # --- the live distance histogram -------------------------------------------------------------------
    def histogram_points(self):
        x, y, _, _ = self.arrays()
        if self.gpu is None:
            return np.stack([x, y, np.zeros_like(x)], axis=1), 2
        import cupy

        return cupy.stack([x, y, cupy.zeros_like(x)], axis=1).astype(cupy.float64), 2

    def histogram_widths(self) -> tuple[float, float, float]:
        return world.CUTOFF / 20, world.CUTOFF * 5, world.CUTOFF / 5
