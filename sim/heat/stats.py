"""The heat scene's statistics (``HeatScene.readout``): the grid, the pace of a step, the cell-update
rate of the last timed frames and the field's lowest, mean and highest temperature (the reduction,
``HeatScene.temperature_summary``, runs where the field is, at most every ``SUMMARY_SECONDS``)."""

from __future__ import annotations

import time
from collections import deque

import numpy as np

from sim import finite

SUMMARY_SECONDS = 0.25  # the min/mean/max reduction runs at most this often
RATE_FRAMES = 30  # frames the cell-update rate is the median of
BARELY = 0.01  # a step that moves cells less than this share of the way "barely moves" the field


def pace_text(tfac: float) -> str:
    share = 4.0 * tfac
    text = f"takes each cell {share:.2g} of the way to its neighbours' mean"
    if share < BARELY:
        text += " - the field barely moves (stable up to 1: tfac < 0.25; raise the factor)"
    return text


class HeatReadout:
    """The heat scene's statistics. Reads the scene through its public state (the stepper, the grid, the
    slider, the timer) and keeps what is its own: the version of the field, the throttled temperature
    summary, and the steps and times of the last frames."""

    def __init__(self, scene):
        self.scene = scene
        self.version = 0  # bumped by anything that changes the field
        self._summary: tuple[int, float, str, str] | None = None
        self._frame_steps: deque[int] = deque()  # steps of frames whose times the timer has not read yet
        self._rates: deque[tuple[int, float]] = deque(maxlen=RATE_FRAMES)  # (steps, ms) of timed frames
        self._frames_seen = 0

    def changed(self, fresh: bool = False) -> None:
        """The field changed; ``fresh``: a new field, whose summary must not wait for the throttle."""
        self.version += 1
        if fresh:
            self._summary = None

    def restart(self) -> None:
        """A new timer: no frame times yet."""
        self._frame_steps.clear()
        self._rates.clear()
        self._frames_seen = 0

    def stepped(self, steps: int) -> None:
        """A timer frame of ``steps`` steps, timed once the timer has it."""
        self._frame_steps.append(steps)

    def take_frame_times(self) -> None:
        """The step rates of the frames whose times the timer has now (GPU frames are read a frame or so late)."""
        timer = self.scene.timer
        resolved = timer.frames - self._frames_seen
        if resolved > 0:
            for ms in timer.history("step")[-resolved:]:
                self._rates.append((self._frame_steps.popleft(), float(ms)))
            self._frames_seen = timer.frames

    def _temperature(self) -> tuple[str, str]:
        """(the temperature's text, the non-finite cells' statistic), from the throttled summary."""
        now = time.monotonic()
        if self._summary is None or (self._summary[0] != self.version and now - self._summary[1] >= SUMMARY_SECONDS):
            lo, mean, hi, nan, inf = self.scene.field_summary()
            bad = finite.counts_text(nan, inf)
            text = f"min {lo:.4g}, mean {mean:.4g}, max {hi:.4g}" + (" of the finite cells" if bad else "")
            self._summary = (self.version, now, text, f"{bad} cells (drawn red)" if bad else finite.CLEAN)
        return self._summary[2], self._summary[3]

    def cell_update_rate(self) -> float | None:
        """G cell-updates/s of the last timed frames (None before the first)."""
        self.take_frame_times()
        rates = [steps / ms for steps, ms in self._rates if ms > 0]  # steps per ms, frame by frame
        if not rates:
            return None
        # the median: a first frame that loads kernels is no mean
        return self.scene.n * float(np.median(rates)) * 1e3 / 1e9

    def stats(self) -> dict:
        scene = self.scene
        tfac = float(scene.sim.tfac)
        temperature, note = self._temperature()
        return {"n": scene.n, "steps": scene.steps, "grid": f"{scene.ni:,} x {scene.nj:,} ({scene.n:,} cells)",
                "steps_per_frame": scene.frame_steps, "factor": tfac, "pace": pace_text(tfac),
                "cell_updates": self.cell_update_rate(), "temperature": temperature, finite.STAT_KEY: note}
