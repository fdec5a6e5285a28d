"""The heat scene's statistics (``HeatScene.readout``): the grid, the pace of a step, the cell-update
rate of the last timed frames and the field's lowest, mean and highest temperature (the reduction,
``HeatScene.start_temperature_summary``, runs where the field is: at most once in ``SUMMARY_ASKS`` asks (a
panel frame asks once or twice) and ``SUMMARY_SECONDS`` after the last one arrived; on the GPU it is read when
its copy has arrived, so asking never waits for the device but for a new field's first summary)."""

from __future__ import annotations

import math
import time
from collections import deque
from typing import TYPE_CHECKING

import numpy as np

from sim.framework import finite

if TYPE_CHECKING:
    from sim.gpu.timing import StageTimer
    from sim.heat.scene import HeatScene

SUMMARY_SECONDS = 0.25  # the min/mean/max reduction runs at most this often
SUMMARY_ASKS = 10  # ... and at most once in this many asks for the statistics
SUMMARY_SHARE = 0.1  # ... and waits long enough to keep its host time under this share (the CPU's reduction)
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

    def __init__(self, scene: HeatScene) -> None:
        self.scene = scene
        self.version = 0  # bumped by anything that changes the field
        self._summary_text: tuple[str, str] | None = None  # (temperature, non-finite cells); None: not yet
        self._summary: SummaryRead | None = None  # the one in flight
        self._summarised = -1  # the field version of the last one started
        self._asks = 0  # asks since the last one started
        self._ready_at = 0.0  # when the last one arrived (time.monotonic)
        self._cost_s = 0.0  # host time the last one's start took (the whole reduction on the CPU)
        self._rates: deque[tuple[int, float]] = deque(maxlen=RATE_FRAMES)  # (steps, ms) of timed frames
        self._timer: StageTimer | None = None  # the timer the rates are of (a preset, a backend bring a new one)
        self._frames_seen = 0

    def changed(self, fresh: bool = False) -> None:
        """The field changed; ``fresh``: a new field, whose summary must not wait for the throttle."""
        self.version += 1
        if fresh:
            self._summary_text = self._summary = None

    def take_frame_times(self) -> None:
        """The step rates of the frames whose times the timer has now (GPU frames are read a frame or so late),
        from each frame's steps (whichever kernel did them, a user's too) and its "step" time."""
        timer = self.scene.timer
        if timer is not self._timer or timer.frames < self._frames_seen:  # a new timer, or one cleared
            self._timer, self._frames_seen = timer, 0
            self._rates.clear()
        resolved = timer.frames - self._frames_seen
        if resolved > 0:
            steps, times = timer.steps_history()[-resolved:], timer.history("step")[-resolved:]
            self._rates.extend((int(s), float(ms)) for s, ms in zip(steps, times, strict=False))
            self._frames_seen = timer.frames

    def _temperature(self) -> tuple[str, str]:
        """(the temperature's text, the non-finite cells' statistic), from the throttled summary."""
        now = time.monotonic()
        self._asks += 1
        if self._summary is not None and self._summary.ready():
            self._take_summary(now)
        if self._summary is None and self._summary_due(now):
            started = time.perf_counter()
            self._summary = self.scene.start_temperature_summary()
            self._cost_s = time.perf_counter() - started
            self._summarised, self._asks = self.version, 0
        if self._summary_text is None:  # a new field's first summary: wait for it
            return self._take_summary(now)
        return self._summary_text

    def _summary_due(self, now: float) -> bool:
        if self._summary_text is None:
            return True
        wait = max(SUMMARY_SECONDS, self._cost_s / SUMMARY_SHARE)
        return self._summarised != self.version and self._asks >= SUMMARY_ASKS and now - self._ready_at >= wait

    def _take_summary(self, now: float) -> tuple[str, str]:
        if self._summary is None:
            raise RuntimeError("no temperature summary is on its way")
        lo, mean, hi, nan, inf = self._summary.values()
        self._summary, self._ready_at = None, now
        bad = finite.counts_text(nan, inf)
        text = f"min {lo:.4g}, mean {mean:.4g}, max {hi:.4g}" + (" of the finite cells" if bad else "")
        self._summary_text = text, f"{bad} cells (drawn red)" if bad else finite.CLEAN
        return self._summary_text

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
        return {
            "n": scene.n,
            "steps": scene.steps,
            "grid": f"{scene.ni:,} x {scene.nj:,} ({scene.n:,} cells)",
            "steps_per_frame": scene.frame_steps,
            "factor": tfac,
            "pace": pace_text(tfac),
            "cell_updates": self.cell_update_rate(),
            "temperature": temperature,
            finite.STAT_KEY: note,
        }


class SummaryRead:
    """The field's summary on its way: five numbers now (the host's), or three in a pinned host copy that a
    CUDA event says has arrived (``keep``: the device array it is copied from, alive until then); when one of
    those is not a number, ``exact`` gives the five (the finite cells' and the NaN and inf counts)."""

    def __init__(self, values, arrived=None, keep=None, exact=None):
        self._values, self._arrived, self._keep, self._exact = values, arrived, keep, exact

    def ready(self) -> bool:
        return self._arrived is None or bool(self._arrived.done)

    def values(self) -> tuple[float, float, float, int, int]:
        """(lowest, mean, highest, NaN cells, inf cells), waiting for the copy if it has not arrived."""
        if self._arrived is None:
            return self._values
        self._arrived.synchronize()
        lo, mean, hi = (float(v) for v in self._values)
        if math.isfinite(lo + mean + hi) or self._exact is None:
            return lo, mean, hi, 0, 0
        return self._exact()
