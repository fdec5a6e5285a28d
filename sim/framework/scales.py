"""Colour scales: the range a colour mode maps onto its colours, fixed from the panel or the data's
own; the scene holds one ``ColorScales`` (``sim.framework.scene.Scene.color_scales``)."""

from __future__ import annotations

import math
import warnings

import numpy as np


class ColorScales:
    """``ranges``: mode -> (low, high) fixed from the panel; modes not in it are automatic."""

    def __init__(self) -> None:
        self.ranges: dict[str, tuple[float, float]] = {}

    def set(self, mode: str, span: tuple[float, float] | None) -> None:
        """Fix the range colour mode ``mode`` maps onto its colours (None: automatic, the data's own).

        The scene passes the fixed range as its view's ``value_range`` (points and fields alike); when
        there is none the viewer takes the values' own range every frame.
        """
        if span is None:
            self.ranges.pop(mode, None)
            return
        lo, hi = (float(v) for v in span)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"a colour range needs finite low < high, got {lo:g} .. {hi:g}")
        self.ranges[mode] = (lo, hi)


def data_span(values, xp=np) -> tuple[float, float]:
    """(lowest, highest) finite value, read back in one transfer (two when an inf is among them: NaN and
    inf have no colour on the scale, the viewer marks them); (0, 1) when there is none, and a flat range
    widened so that it can be divided by."""
    values = xp.asarray(values)
    if values.size == 0:
        return 0.0, 1.0
    lo, hi = _nan_span(values, xp)
    if (math.isinf(lo) or math.isinf(hi)) and values.dtype.kind == "f":  # an inf: the range of the rest
        lo, hi = _nan_span(xp.where(xp.isinf(values), xp.nan, values), xp)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return 0.0, 1.0
    if hi <= lo:
        return lo, lo + max(abs(lo) * 1e-6, 1e-6)
    return lo, hi


def _nan_span(values, xp) -> tuple[float, float]:
    """(nanmin, nanmax) as floats, in one transfer from the device (NaN, NaN when all are NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all NaN: the caller answers
        both = xp.stack([xp.nanmin(values), xp.nanmax(values)]).astype(xp.float64)
    lo, hi = (float(v) for v in (both.get() if hasattr(both, "get") else both))
    return lo, hi
