"""The proximity passes a balls scene has run since its state was loaded: true totals, and the latest
passes' own (tests, pairs) in a bounded history (a scene can run for hours; the history must not grow)."""

from __future__ import annotations

from collections import deque
from itertools import islice

from sim.framework.scene_bench import BenchFigures

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


class PassFigures(BenchFigures):
    """A benchmark's timed proximity passes (``BallsScene.bench_type``): each one's tests and pairs, the latest
    ones as far as the history holds them (``pass_count`` all of them), and tests per second."""

    def start(self) -> None:
        self.mark = self.scene.pass_log.mark()

    def figures(self, wall_s: float) -> dict:
        count, tests, kept = self.scene.pass_log.since(self.mark)
        return {
            "passes": [{"tests": t, "pairs": p} for t, p in kept],
            "pass_count": count,
            "tests_per_s": tests / wall_s,
        }

    @staticmethod
    def model_stats(record: dict) -> dict:
        """The timed passes' average tests and pairs: the balls settle as a benchmark runs (the block preset's
        tests rise from about 23 a ball to 29 over the gate's 40 passes), and its stage times are the frames'
        medians, not the last pass's."""
        passes = record["passes"]
        if not passes:
            return {}
        tests = sum(p["tests"] for p in passes) / len(passes)
        pairs = sum(p["pairs"] for p in passes) / len(passes)
        return {"tests": tests, "tests_per_ball": tests / max(record["n"], 1), "pairs": pairs}

    @staticmethod
    def lines(record: dict) -> list[str]:
        passes = record["passes"]
        if not passes:
            return []
        average = PassFigures.model_stats(record)
        first = "first timed" if len(passes) == record["pass_count"] else "oldest kept"
        return [
            f"per pass: {average['tests']:.0f} tests, {average['pairs']:.0f} pairs on average "
            f"({average['tests_per_ball']:.1f} tests per ball); "
            f"{first} pass {passes[0]['tests']} tests, {passes[0]['pairs']} pairs; "
            f"{record['pass_count']} passes; tests/s {record['tests_per_s']:.4g}"
        ]
