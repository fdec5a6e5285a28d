"""What the sdh scene says about one bucket under the viewer's pointer (``HistogramScene.inspector``): its
distances, pairs and g(r), and under verification its GPU and exact CPU counts. Items are buckets."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.framework.checks import Inspector

if TYPE_CHECKING:
    from sim.sdh.scene import HistogramScene


class BucketInspector(Inspector):
    scene: HistogramScene

    def item_of_key(self, key: int) -> int | None:
        return int(key) if 0 <= int(key) < self.scene.counts.shape[0] else None

    def is_marked(self, item: int) -> bool:
        checks = self.scene.checks
        mismatch = checks.mismatch
        return bool(checks.on and mismatch is not None and 0 <= item < mismatch.shape[0] and mismatch[item])

    def describe(self, item: int) -> dict[str, str]:
        scene = self.scene
        counts = scene.counts
        item = int(item)
        if not 0 <= item < counts.shape[0]:
            raise IndexError(f"no bucket {item} (there are {counts.shape[0]})")
        width = scene.settings.width
        count = int(counts[item])
        expected = float(scene.ideal_pairs()[item])
        last = " and beyond (far corners)" if item == counts.shape[0] - 1 else ""
        return {
            "bucket": f"{item} of {counts.shape[0]}",
            "distance": f"{item * width:.6g} .. {(item + 1) * width:.6g}{last}",
            "pairs": f"{count:,}",
            "share": f"{count / max(scene.total_pairs(), 1):.4%} of all pairs"
            + (" (impossible: below 0 or above N(N-1)/2)" if scene.impossible(np.array(count, np.int64)) else ""),
            "g(r)": f"{count / expected:.4g} (an ideal gas in the cube: {expected:,.0f} pairs)"
            if expected > 0
            else "-",
            "counted on": f"{scene.backend.upper()} ({scene.counted_with if scene.backend == 'gpu' else 'numba'})",
        }

    def describe_check(self, item: int) -> list[tuple[str, str, str, str]]:
        """The bucket's count from the GPU kernel and from the exact CPU histogram."""
        reference = self.scene.reference
        if reference is None or not self.is_marked(item) or item >= reference.shape[0]:
            return []
        gpu, cpu = int(self.scene.counts[item]), int(reference[item])
        return [("pairs", f"{gpu:,}", f"{cpu:,}", f"{gpu - cpu:+,}")]
