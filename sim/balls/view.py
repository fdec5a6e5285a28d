"""How a balls scene is drawn (``sim.framework.points``): its colour modes and their legends, the trough as
the view's surroundings, positions and quantities written by render.cu on the GPU or its CPU twin, the
CUDA thread of each ball for block colours, and the widths of the live distance histogram."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

import assets
from sim.balls.render_cpu import QUANTITY_MODES, UNITS, mapped_values
from sim.contract import Legend, Trough
from sim.framework.points import PointsScene

if TYPE_CHECKING:
    from sim.balls.gpu import BallsGpu
    from sim.balls.pipeline_cpu import HostBalls
    from sim.balls.world import TroughWalls


class BallsView(PointsScene):
    """The drawing half of ``BallsScene``: reads the state the scene holds."""

    if TYPE_CHECKING:  # the scene's own (BallsScene)
        trough: TroughWalls
        thread_of: np.ndarray | None

        @property
        def gpu_balls(self) -> BallsGpu: ...

        @property
        def cpu_balls(self) -> HostBalls: ...

        def positions(self) -> np.ndarray: ...

    @property
    def color_modes(self) -> dict[str, str]:
        modes = {"speed": "Speed", "height": "Height", "pairs": "Proximity pairs per ball", "uniform": "Uniform"}
        return {**modes, **super().color_modes}

    def points_frame(self) -> tuple[int, Trough, float]:
        t = self.trough
        return 3, Trough(t.radius, t.z_min, t.z_max), float(assets.presets("balls")[self.preset]["radius"])

    def mode_legend(self, mode: str) -> Legend:
        return Legend(self.color_modes[mode].lower(), 0.0, 1.0, UNITS[mode])

    def fill_points(self, xp, pos_out, quantity_out, mode: str) -> None:
        """On the GPU one kernel (render.cu) writes both; on the CPU its twin (render_cpu.py)."""
        if self.backend == "gpu":
            self.gpu_balls.write_points(pos_out, quantity_out, QUANTITY_MODES[mode], self.knobs.threads)
            return
        pos_out[:] = self.cpu_balls.pos
        self.fill_quantity(mode, xp, quantity_out)

    def fill_own(self, mode: str, xp, out) -> None:
        out[:] = mapped_values(self, mode, xp)

    def block_threads(self, xp):
        """CPU physics with CUDA proximity: the thread of each ball in the last pass."""
        if self.backend == "cpu" and self.thread_of is not None:
            return self.thread_of
        return super().block_threads(xp)

    # --- the live distance histogram -------------------------------------------------------------------
    def histogram_points(self):
        points = self.gpu_balls.pos[: self.n, :3] if self.backend == "gpu" else self.cpu_balls.pos[:, :3]
        return points.astype(np.float64), 3

    def histogram_widths(self) -> tuple[float, float, float]:
        radius = float(np.median(self.positions()[:, 3])) if self.n else 1.0
        return 0.1, 50.0, min(max(radius, 0.1), 50.0)
