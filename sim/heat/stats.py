"""The heat scene's statistics (mixed into ``HeatScene``): the grid, the pace of a step, the cell-update
rate of the last timed frames and the field's lowest, mean and highest temperature (the reduction,
``HeatScene.temperature_summary``, runs where the field is, at most every ``SUMMARY_SECONDS``)."""

from __future__ import annotations

import time

import numpy as np

SUMMARY_SECONDS = 0.25  # the min/mean/max reduction runs at most this often
RATE_FRAMES = 30  # frames the cell-update rate is the median of
BARELY = 0.01  # a step that moves cells less than this share of the way "barely moves" the field


def pace_text(tfac: float) -> str:
    share = 4.0 * tfac
    text = f"takes each cell {share:.2g} of the way to its neighbours' mean"
    if share < BARELY:
        text += " - the field barely moves (stable up to 1: tfac < 0.25; raise the factor)"
    return text


class HeatStats:
    def _temperature_text(self) -> str:
        now = time.monotonic()
        if self._summary is None or (self._summary[0] != self._version and now - self._summary[1] >= SUMMARY_SECONDS):
            lo, mean, hi = self.temperature_summary()
            self._summary = (self._version, now, f"min {lo:.4g}, mean {mean:.4g}, max {hi:.4g}")
        return self._summary[2]

    def cell_update_rate(self) -> float | None:
        """G cell-updates/s of the last timed frames (None before the first)."""
        self._take_frame_times()
        rates = [steps / ms for steps, ms in self._rates if ms > 0]  # steps per ms, frame by frame
        if not rates:
            return None
        return self.n * float(np.median(rates)) * 1e3 / 1e9  # the median: a first frame that loads kernels is no mean

    def stats(self) -> dict:
        tfac = float(self.sim.tfac)
        return {"n": self.n, "steps": self.steps, "grid": f"{self.ni:,} x {self.nj:,} ({self.n:,} cells)",
                "steps_per_frame": self.frame_steps, "factor": tfac, "pace": pace_text(tfac),
                "cell_updates": self.cell_update_rate(), "temperature": self._temperature_text()}
