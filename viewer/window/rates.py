"""Rates over a sliding window of wall-clock time (frames/s, physics steps/s)."""

from __future__ import annotations

import time
from collections import deque


class RateMeter:
    """Tracks a growing counter and reports how fast it grew over the last ``window`` seconds."""

    def __init__(self, window: float = 1.0):
        self.window = window
        self._samples: deque[tuple[float, float]] = deque()

    def update(self, count: float, now: float | None = None) -> None:
        now = time.perf_counter() if now is None else now
        if self._samples and count < self._samples[-1][1]:
            self._samples.clear()  # the counter was reset (new preset): start over
        self._samples.append((now, count))
        while len(self._samples) > 2 and now - self._samples[1][0] >= self.window:
            self._samples.popleft()

    @property
    def rate(self) -> float:
        if len(self._samples) < 2:
            return 0.0
        (t0, c0), (t1, c1) = self._samples[0], self._samples[-1]
        return (c1 - c0) / (t1 - t0) if t1 > t0 else 0.0

    def clear(self) -> None:
        self._samples.clear()
