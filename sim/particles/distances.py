"""The course starters' distance statistics: absmin and absavg, with their warnings."""

from __future__ import annotations


class DistanceStats:
    """The starters' absmin / absavg: per step the closest pair and the mean pair distance (in cutoffs)."""

    def __init__(self) -> None:
        self.absmin = 1.0
        self.absavg_sum = 0.0
        self.steps_with_pairs = 0

    def add_step(self, dmin: float, dsum: float, dcount: int) -> None:
        if dcount > 0:
            self.absavg_sum += dsum / dcount
            self.steps_with_pairs += 1
        self.absmin = min(self.absmin, dmin)

    @property
    def absavg(self) -> float:
        return self.absavg_sum / self.steps_with_pairs if self.steps_with_pairs else 0.0

    def warnings(self) -> list[str]:
        out = []
        if self.absmin < 0.4:
            out.append("The minimum distance is below 0.4 meaning that some particle is not interacting")
        if self.absavg < 0.8:
            out.append("The average distance is below 0.8 meaning that most particles are not interacting")
        return out
