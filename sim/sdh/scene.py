"""The distance histogram as a scene: the course's atoms, each step one whole histogram on the
active backend (the CPU's exact count or one of the GPU kernels), drawn as plots.

The atoms do not move; a step recounts every pair with the current bucket width and kernel, so
the panel's timings are the kernel's and verification recounts on the CPU. A kernel that cannot count
at the current width (the tensor kernel keeps a counter per whole squared distance: narrow buckets
overflow shared memory) hands the step to the next fastest kernel, and the panel's note says why.
g(r) divides each bucket by an ideal gas's in the same cube, its walls included (``ideal``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

import assets
from sim.contract import Plot, PlotsView, Series
from sim.framework import finite
from sim.framework.scene import Scene
from sim.sdh import SPEC, data, ideal, kernels, sdh_cpu
from sim.sdh.items import BucketInspector

GREEN = (0.35, 0.8, 0.45, 1.0)


@dataclass
class HistogramSettings:
    width: float = 500.0


class HistogramScene(Scene):
    spec = SPEC
    inspector_type = BucketInspector
    default_seed = 1

    def __init__(
        self,
        preset: str | None = None,
        backend: str = "cpu",
        n: int | None = None,
        seed: int | None = None,
        variant: str | None = None,
        block: Any = None,
        device: int = 0,
    ) -> None:
        self.settings = HistogramSettings()
        self.counts = np.zeros(1, np.int64)
        self.last_ms = 0.0
        self.reference: np.ndarray | None = None  # the last check's CPU histogram
        self.counted_with = ""  # the GPU kernel that counted the last histogram
        self._refused: dict[tuple, str] = {}  # (kernel, width, block, n) -> why it cannot run there
        self._ideal: tuple[tuple, np.ndarray] | None = None  # (n, width, buckets) and an ideal gas's pairs
        super().__init__(preset, backend, n, seed, variant, block, device)
        self._backend_note = self.backend_note  # the note of the backend choice; a fallback's note replaces it

    def load_state(self, preset: str, n: int | None) -> None:
        table = assets.presets("sdh")[preset]
        self.points = data.atoms(n or table["count"], self.seed)
        self.device_points = None
        self.settings.width = float(table["width"])
        self.counts = np.zeros(data.bucket_count(self.settings.width), np.int64)
        self.last_ms = 0.0

    def move_state(self, backend: str) -> None:
        self.device_points = None  # copied to the device at the next step

    @property
    def n(self) -> int:
        return self.points.shape[0]

    @property
    def buckets(self) -> int:
        return data.bucket_count(self.settings.width)

    def advance(self, steps: int) -> int:
        for _ in range(steps):
            self._step()
        return steps

    def _step(self) -> None:
        width, buckets = self.settings.width, self.buckets
        with self.timer.stage("histogram"):
            started = time.perf_counter()
            if self.backend == "gpu":
                from sim.sdh import gpu

                if self.device_points is None:
                    import cupy

                    with cupy.cuda.Device(self.device):
                        self.device_points = cupy.asarray(self.points)
                counts, ms = self._gpu_histogram(gpu, width, buckets)
            else:
                self.backend_note = self._backend_note
                counts = sdh_cpu.histogram(self.points, width, buckets)
                ms = (time.perf_counter() - started) * 1e3
        self.counts, self.last_ms = counts, ms
        self.checks.clear_suspect()  # the scene's own count
        if self.checks.on:
            checked = time.perf_counter()
            reference = sdh_cpu.histogram(self.points, width, buckets)
            differ = counts != reference
            self.reference = reference
            self.checks.record(
                "the exact CPU histogram",
                differ,
                checked,
                {"pairs differing": int(np.abs(counts - reference).sum())},
                unit="buckets",
            )

    def _gpu_histogram(self, gpu, width: float, buckets: int) -> tuple[np.ndarray, float]:
        """The chosen kernel's histogram or, where it cannot count at this width and block (gpu.KernelError,
        remembered so it is not retried every step), the next in kernels.FASTEST_FIRST's order that can."""
        order = kernels.FASTEST_FIRST
        chosen = self.knobs.variant
        tried = [chosen, *(order[order.index(chosen) + 1 :] if chosen in order else ())]
        for kernel in tried:
            key = (kernel, width, self.knobs.block, self.n)
            if key in self._refused:
                continue
            try:
                counts, ms = gpu.histogram(
                    self.device_points, width, buckets, kernel, self.knobs.block, device=self.device
                )
            except gpu.KernelError as exc:
                self._refused[key] = str(exc)
                continue
            self.counted_with = kernel
            why = self._refused.get((self.knobs.variant, width, self.knobs.block, self.n))
            self.backend_note = (
                f"{self.knobs.variant} cannot count at width {width:g}: {why}; counted with {kernel}"
                if kernel != self.knobs.variant
                else self._backend_note
            )
            return counts, ms
        raise gpu.KernelError(self._refused[(self.knobs.variant, width, self.knobs.block, self.n)])

    def total_pairs(self) -> int:
        """The pairs the histogram counts, exactly (a user's garbage counts would wrap an int64 sum)."""
        return int(self.counts.sum()) if self.checks.suspect is None else sum(self.counts.tolist())

    def impossible(self, counts: np.ndarray) -> np.ndarray:
        """Buckets whose count no histogram of these atoms can hold: below 0 or above all N(N-1)/2 pairs."""
        return (counts < 0) | (counts > self.n * (self.n - 1) // 2)

    def take_counts(self, counts: np.ndarray) -> None:
        """A histogram counted outside the scene (a user's kernel, unsigned): its impossible buckets marked."""
        self.counts = np.asarray(counts).astype(np.int64)  # past 2^63: negative, and so impossible
        bad = self.impossible(self.counts)
        self.checks.mark_suspect(
            bad, f"{int(bad.sum()):,} buckets below 0 or above N(N-1)/2 (marked red)" if bad.any() else finite.CLEAN
        )

    # --- the histogram from a user's kernel (sim.sdh.user_stage) ------------------------------------------
    def user_stage_inputs(self, stage: str) -> dict:
        from sim.sdh.user_stage import arrays

        return arrays(self.points, self.settings.width, self.buckets)

    def apply_user_stage(self, stage: str, inputs: dict, outputs: dict, comparison) -> None:
        self.take_counts(outputs["hist"])
        self.reference = None  # the built-in check's CPU histogram says nothing about this one
        if comparison is not None:
            self.checks.record_user(
                "the exact CPU histogram", comparison, {"buckets differing": comparison.mismatches}, unit="buckets"
            )

    def stats(self) -> dict:
        pairs = self.total_pairs()
        return {
            "n": self.n,
            "buckets": self.counts.shape[0],
            "pairs": pairs,
            "histogram_ms": self.last_ms,
            "pairs_per_s": pairs / (self.last_ms * 1e-3) if self.last_ms else 0.0,
            "steps": self.steps,
            "sim_time": 0.0,
            finite.STAT_KEY: self.checks.suspect_note,
        }

    def ideal_pairs(self) -> np.ndarray:
        """The pairs an ideal gas of as many atoms in the atoms' cube puts in each bucket (kept while the
        count, the width and the buckets stay)."""
        key = (self.n, self.settings.width, self.counts.shape[0])
        if self._ideal is None or self._ideal[0] != key:
            self._ideal = (key, ideal.ideal_pairs(self.n, (data.BOX_SIZE,) * 3, *key[1:]))
        return self._ideal[1]

    def view(self, color_mode: str) -> PlotsView:
        counts = self.counts.astype(np.float64)
        suspect = self.checks.suspect
        bad = suspect if suspect is not None and suspect.shape == counts.shape else None
        if bad is not None:  # impossible counts are not drawn (they would flatten the rest): a red mark instead
            counts[bad] = np.nan
        width = self.settings.width
        edges = np.arange(counts.shape[0], dtype=np.float64) * width
        g = ideal.pair_correlation(counts, self.ideal_pairs())
        buckets = np.arange(counts.shape[0])
        series = [Series("pairs", edges, counts, "stairs", items=buckets)]
        if bad is not None:
            series += finite.marks(
                edges, counts, finite.span(counts)[1], buckets, f"{int(bad.sum()):,} impossible counts (not drawn)"
            )
        histogram = Plot("distance histogram", series, "r", "pairs")
        rdf = Plot(
            "g(r) against an ideal gas in the cube",
            [Series("g(r)", edges[: g.size] + 0.5 * width, g, "line", GREEN, items=buckets[: g.size])],
            "r",
            "g(r)",
            hlines=(1.0,),
        )
        return PlotsView([histogram, rdf], columns=1)

    @property
    def color_modes(self) -> dict[str, str]:
        return {"counts": "Counts"}
