"""The proximity passes a balls scene has run since its state was loaded: true totals, and the latest
passes' own (tests, pairs) in a bounded history (a scene can run for hours; the history must not grow)."""

from __future__ import annotations

from collections import deque
from itertools import islice

HISTORY = 100_000  # passes kept: at six steps a pass and 60 frames of 6 steps a second, about 28 minutes


class PassLog:
    def __init__(self, history: int = HISTORY):
        self.recent: deque[tuple[int, int]] = deque(maxlen=history)  # (tests, pairs), oldest first
        self.count = 0  # passes, all of them
        self.tests = 0  # their tests, all of them

    def append(self, tests: int, pairs: int) -> None:
        self.recent.append((tests, pairs))
        self.count += 1
        self.tests += tests

    def clear(self) -> None:
        self.recent.clear()
        self.count = self.tests = 0

    def __getitem__(self, index: int) -> tuple[int, int]:
        """A kept pass's (tests, pairs): 0 the oldest kept, -1 the latest."""
        return self.recent[index]

    def mark(self) -> tuple[int, int]:
        """Where the log stands now, for ``since``."""
        return self.count, self.tests

    def since(self, mark: tuple[int, int]) -> tuple[int, int, list[tuple[int, int]]]:
        """(passes, tests) after ``mark``, and those passes' (tests, pairs) as far as the history holds them
        (the latest ones)."""
        count, tests = self.count - mark[0], self.tests - mark[1]
        kept = min(count, len(self.recent))
        return count, tests, list(islice(self.recent, len(self.recent) - kept, None))
