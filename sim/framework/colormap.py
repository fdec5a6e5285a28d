"""Colour ramps and palettes the viewer colours quantities with; the colours themselves are data
(assets/colormaps.toml)."""

from functools import cache

import numpy as np

import assets

_MAPS = assets.colormaps()  # checked: the colours read below are there
STOPS = np.array(_MAPS["viridis"]["stops"], np.float32)  # the default ramp
BLOCK_PALETTE = np.array(_MAPS["block"]["palette"], np.float32)  # for colouring by CUDA block
GOLDEN_STEP = 0.618034  # neighbouring categories this far apart along a ramp (the golden ratio's part)
SPREAD_COLOURS = 64
MISMATCH_RGBA = tuple(_MAPS["marks"]["mismatch"])


def stops(name: str) -> np.ndarray:
    """The (k, 3) float32 stops of a named colour map ("viridis", "inferno")."""
    return np.array(_MAPS[name]["stops"], np.float32)


def colormap(value, ramp: np.ndarray = STOPS) -> np.ndarray:
    """RGBA float32 (n, 4) for values in [0, 1] (clipped; NaN counts as 0)."""
    count = ramp.shape[0]
    v = np.clip(np.nan_to_num(np.asarray(value, dtype=np.float32)), 0.0, 1.0) * (count - 1)
    lo = np.minimum(v.astype(np.int32), count - 2)
    frac = (v - lo)[:, None]
    rgba = np.ones((v.shape[0], 4), np.float32)
    rgba[:, :3] = ramp[lo] * (1 - frac) + ramp[lo + 1] * frac
    return rgba


@cache
def spread(name: str, count: int = SPREAD_COLOURS) -> np.ndarray:
    """A palette of ``count`` colours of a named ramp, category k at (k * GOLDEN_STEP) mod 1 along it:
    neighbouring categories (bins) far apart in colour."""
    palette = colormap((np.arange(count) * GOLDEN_STEP) % 1.0, ramp=stops(name))[:, :3].copy()
    palette.flags.writeable = False
    return palette
