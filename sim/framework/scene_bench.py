"""A scene's own figures in a benchmark record (``sim.cmdline.bench``), beside those every scene has: the base
adds none; a scene with some names its own class (``Scene.bench_type``)."""

from __future__ import annotations


class BenchFigures:
    def __init__(self, scene):
        self.scene = scene

    def start(self) -> None:
        """Before the benchmark's timed frames: what ``figures`` counts from."""

    def figures(self, wall_s: float) -> dict:
        """The figures of the timed frames (they took ``wall_s``)."""
        return {}

    @staticmethod
    def model_stats(record: dict) -> dict:
        """What the stage models should read of the timed frames in place of the scene's statistics after the
        run (``record["stats"]``), where those describe only the last frame: nothing here."""
        return {}

    @staticmethod
    def lines(record: dict) -> list[str]:
        """Those figures of a benchmark record as lines of the bench table."""
        return []
