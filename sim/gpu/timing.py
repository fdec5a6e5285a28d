"""Named stage timings per displayed frame, with a short history for plots.

A scene wraps each stage of its step in ``with timer.stage("forces"):``; stages that run
several times in one frame (six physics steps) add up. ``frame_done(steps)`` closes the frame and
pushes its totals, and the steps it did, into the history. The CPU backend uses the host clock; a GPU backend records
CUDA events instead and reads them a frame late (see ``EventStageTimer`` when it exists).
"""

from __future__ import annotations

import time
from collections import deque
from contextlib import contextmanager

import numpy as np


class StageTimer:
    """Host-clock stage timer. Times are milliseconds per frame."""

    def __init__(self, stages: tuple[str, ...] = (), history: int = 240):
        self.names: list[str] = list(stages)
        self._history = history
        self._series: dict[str, deque] = {n: deque(maxlen=history) for n in self.names}
        self._current: dict[str, float] = {}
        self._steps: deque[int] = deque(maxlen=history)  # each frame's steps, beside its times
        self.frames = 0

    @property
    def capacity(self) -> int:
        """How many frames the history keeps: read at least this often to miss none."""
        return self._history

    def _ensure(self, name: str) -> None:
        if name not in self._series:
            self.names.append(name)
            self._series[name] = deque(maxlen=self._history)

    @contextmanager
    def stage(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, (time.perf_counter() - start) * 1e3)

    def add(self, name: str, ms: float) -> None:
        """Add ``ms`` to stage ``name`` in the frame being recorded."""
        self._ensure(name)
        self._current[name] = self._current.get(name, 0.0) + ms

    def frame_done(self, steps: int = 0) -> None:
        """Close the current frame of ``steps`` steps: every known stage gets a value (0 if it did not run)."""
        for name in self.names:
            self._series[name].append(self._current.get(name, 0.0))
        self._steps.append(int(steps))
        self._current = {}
        self.frames += 1

    def latest(self) -> dict[str, float]:
        """Milliseconds of each stage in the last closed frame."""
        return {n: (s[-1] if s else 0.0) for n, s in self._series.items()}

    def history(self, name: str) -> np.ndarray:
        """The last frames' milliseconds for one stage, oldest first."""
        return np.asarray(self._series.get(name, ()), dtype=np.float64)

    def steps_history(self) -> np.ndarray:
        """The last frames' steps (``frame_done``), oldest first, beside ``history``'s times."""
        return np.asarray(self._steps, dtype=np.int64)

    def median(self, name: str) -> float:
        h = self.history(name)
        return float(np.median(h)) if h.size else 0.0

    def flush(self) -> None:
        """Make every recorded frame readable (host times always are)."""

    def clear(self) -> None:
        for s in self._series.values():
            s.clear()
        self._steps.clear()
        self._current = {}
        self.frames = 0


class NullTimer:
    """Times nothing: for work inside a captured CUDA graph, where events cannot be read per stage."""

    names: list[str] = []

    @contextmanager
    def stage(self, name: str):
        yield


NULL_TIMER = NullTimer()
