"""The live pair-distance histogram and g(r) of the scene shown: its accumulation across displayed frames
(when to recount, with which bucket width) and what to say instead when it cannot (too many points, a bad
width, a failing kernel).

A scene offers its points through the contract (``spec.histogram``, ``scene.histogram_points()``
on its backend, ``scene.histogram_widths()``). No ImGui here: the controller owns one
``LiveHistogram``, the window calls ``frame`` once per displayed frame, and
``viewer.panel.histogram`` draws it.
"""

from __future__ import annotations

import math
import time
import traceback
from dataclasses import dataclass

EVERY_FRAMES = 10  # a live histogram is recomputed every this many displayed frames
MAX_BUCKETS = 400
# All-pairs work grows as n^2: above these sizes an update would stall the viewer for seconds.
POINT_LIMITS = {"cpu": 50_000, "gpu": 2_000_000}
TIME_SHARE = 0.2  # periodic updates wait long enough to keep the histogram under this share of the time


@dataclass(frozen=True)
class WidthRange:
    lo: float
    hi: float
    default: float


def width_range(scene) -> WidthRange:
    """The bucket widths that make sense for the scene's points, as the scene says."""
    return WidthRange(*(float(v) for v in scene.histogram_widths()))


def histogram_backend(scene) -> str:
    """Where ``distance_histogram`` runs for this scene: on the GPU when its state lives there."""
    return "gpu" if scene.backend == "gpu" else "cpu"


class LiveHistogram:
    def __init__(self):
        self.enabled = False
        self.range = WidthRange(0.1, 50.0, 1.0)
        self.width = self.range.default
        self.result = None  # the last sim.sdh.live.Histogram, None when there is none to show
        self.message = ""  # why there is no histogram (or no new one)
        self.limits = dict(POINT_LIMITS)
        self._kind: tuple | None = None  # (scene name, preset) the width range was taken from
        self._due = True
        self._frames = 0  # displayed frames since the last computation
        self._last_at = 0.0
        self.last_cost_s = 0.0  # what the last computation took in all (counts, g(r)'s ideal gas, the read back)

    def set_enabled(self, on: bool) -> None:
        self.enabled = bool(on)
        self._due = self.enabled

    def set_width(self, width) -> None:
        """Take a new bucket width; the next frame recomputes (a bad one is reported there)."""
        try:
            self.width = float(width)
        except (TypeError, ValueError):
            self.width = math.nan
        self._due = True

    def follow(self, scene) -> None:
        """A new scene or preset gets its own width range, at its default width."""
        kind = (scene.spec.name, scene.preset)
        if kind == self._kind:
            return
        self._kind = kind
        self.range = width_range(scene)
        self.width = self.range.default
        self.result = None
        self._due = True

    def frame(self, scene) -> bool:
        """Once per displayed frame: recompute when due; True when it did."""
        if not self.enabled or scene.spec.histogram is None:
            return False
        self.follow(scene)
        self._frames += 1
        if not (self._due or self._periodic_update_due()):
            return False
        self._due = False
        self._frames = 0
        self._last_at = time.perf_counter()
        self._compute(scene)
        self.last_cost_s = time.perf_counter() - self._last_at
        return True

    def _periodic_update_due(self) -> bool:
        if self._frames < EVERY_FRAMES:
            return False
        return time.perf_counter() - self._last_at >= self.last_cost_s / TIME_SHARE

    def _compute(self, scene) -> None:
        from sim.registry import distance_histogram

        self.result = None
        backend = histogram_backend(scene)
        n, limit = scene.n, self.limits[backend]
        if n > limit:
            self.message = too_many_points(n, limit, backend, scene.spec.words.unit)
            return
        try:
            points, dims = scene.histogram_points()
            self.result = distance_histogram()(points, dims, self.width, max_buckets=MAX_BUCKETS)
            self.message = ""
        except ValueError as exc:
            self.message = str(exc)
        except Exception as exc:  # noqa: BLE001  a failing kernel must not take the viewer down
            self.message = f"histogram failed: {str(exc).strip() or type(exc).__name__}"
            traceback.print_exception(exc)

    @property
    def truncated(self) -> bool:
        """Whether the last bucket also holds every pair beyond the bucket range."""
        return self.result is not None and self.result.counts.shape[0] >= MAX_BUCKETS

    def timing_line(self) -> str:
        result = self.result
        if result is None:
            return ""
        pairs = int(result.counts.sum())
        return f"histogram: {pairs:,} pairs in {result.ms:.1f} ms on {result.backend.upper()}"


def too_many_points(n: int, limit: int, backend: str, unit: str) -> str:
    pairs = n * (n - 1) // 2
    line = (
        f"histogram off above {limit:,} {unit} on the {backend.upper()}: {n:,} {unit} make "
        f"{pairs:,} pairs, too many to recount live"
    )
    if backend == "cpu":
        line += f" (on the GPU backend it runs up to {POINT_LIMITS['gpu']:,})"
    return line
