"""Every attempt of a session at a stage: each save of the kernel file the viewer took in, what its build did.

``LiveStage`` adds an attempt for each text it takes in (``built``), then, step by step, what the running
build did (``ran``: its kernel time, the comparison with the CPU twin), or how it stopped (``failed``). The
panel's "Your kernel" section shows them as a table and plots the kernel's milliseconds by attempt.

A build's time is the median of its last ``KEPT`` steps, kept in a fixed array (a step allocates nothing).
The registers are what ptxas reported for the build (``LiveStage.footprint``); the share of the stage's
speed-of-light limit is noted while the panel figures the kernel's speed (``Attempts.note_limit``); an
attempt without them shows none.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

KEPT = 64  # the last steps' kernel times an attempt keeps for its median
MOST = 100  # attempts kept; older ones are dropped (their numbers stay)


@dataclass
class Attempt:
    number: int  # 1 for the first text of the session
    built: str  # wall-clock time the viewer took the save in, "14:03:27"
    compiles: bool
    steps: int = 0  # steps this build ran
    checked: int = 0  # of them, compared with the CPU twin (verification on)
    wrong: int = 0  # of those, steps with a mismatch or a write out of bounds
    mismatches: int | None = None  # the last compared step's wrong items
    error: str = ""  # the fault or time-out that stopped it
    limit_percent: float | None = None  # of the stage's speed-of-light limit, the last step's
    registers: int | None = None
    _times: np.ndarray = field(default_factory=lambda: np.full(KEPT, np.nan), repr=False)
    _median: float | None = field(default=None, repr=False)

    def ran(self, ms: float, comparison, overflow, registers: int | None = None) -> None:
        """One step of this build: its kernel time, the comparison (None: verification off), its writes out of
        bounds, the registers ptxas gave its entry."""
        self._times[self.steps % KEPT] = ms
        self.steps += 1
        self._median = None
        if comparison is not None:
            self.checked += 1
            self.mismatches = comparison.mismatches
            self.wrong += bool(comparison.mismatches or overflow)
        self.registers = self.registers if registers is None else int(registers)

    @property
    def ms(self) -> float | None:
        """The median kernel time of its last steps; None before it ran."""
        if not self.steps:
            return None
        if self._median is None:
            self._median = float(np.nanmedian(self._times[: min(self.steps, KEPT)]))
        return self._median

    @property
    def verdict(self) -> str:
        """ "yes", "no: 12 wrong", "failed", "does not compile", or "-" (not compared: verification off)."""
        if not self.compiles:
            return "does not compile"
        if self.error:
            return "failed"
        if not self.checked:
            return "-"
        if not self.wrong:
            return "yes"
        return "no" if self.mismatches is None else f"no: {self.mismatches:,} wrong"


class Attempts:
    """The session's attempts, oldest first (``items``); the last that compiles is the one running."""

    def __init__(self, clock: Callable[[], time.struct_time] = time.localtime) -> None:
        self.clock = clock
        self.items: list[Attempt] = []
        self.count = 0  # attempts made, dropped ones included
        self._running: Attempt | None = None
        self._series: tuple[np.ndarray, np.ndarray] | None = None
        self._point: int | None = None  # the running attempt's index in the series

    def built(self, compiles: bool) -> Attempt:
        """A text taken in: the next attempt; the running one when it compiles."""
        self.count += 1
        attempt = Attempt(self.count, time.strftime("%H:%M:%S", self.clock()), compiles)
        self.items.append(attempt)
        del self.items[:-MOST]
        if compiles:
            self._running = attempt
        self._series = None
        return attempt

    def ran(self, ms: float, comparison, overflow, registers: int | None = None) -> None:
        running = self._running
        if running is not None:
            if not running.steps:  # a new point on the plot
                self._series = None
            running.ran(ms, comparison, overflow, registers)

    def note_limit(self, percent: float | None) -> None:
        """The running build's share of the stage's speed-of-light limit, as last figured."""
        if self._running is not None and percent is not None:
            self._running.limit_percent = float(percent)

    def failed(self, error: str) -> None:
        if self._running is not None:
            self._running.error = error

    def series(self) -> tuple[np.ndarray, np.ndarray]:
        """(attempt numbers, their kernel ms) of the attempts that ran, for the plot: made again when an attempt
        is added or first runs, else only the running attempt's point moves (no allocation a frame)."""
        if self._series is None:
            ran = [a for a in self.items if a.ms is not None]
            self._series = (np.array([a.number for a in ran], np.float64), np.array([a.ms for a in ran], np.float64))
            self._point = next((i for i, a in enumerate(ran) if a is self._running), None)
        elif self._point is not None and self._running is not None:  # the point is the running attempt's
            self._series[1][self._point] = self._running.ms
        return self._series
