"""Colour ramps for colouring items, written once for numpy and CuPy (``xp``); the colours
themselves are data (assets/colormaps.toml)."""

import numpy as np

import assets

_MAPS = assets.toml("colormaps.toml")
STOPS = np.array(_MAPS["viridis"]["stops"], np.float32)  # the default ramp
BLOCK_PALETTE = np.array(_MAPS["block"]["palette"], np.float32)  # for colouring by CUDA block
MISMATCH_RGBA = tuple(_MAPS["marks"]["mismatch"])


def stops(name: str) -> np.ndarray:
    """The (k, 3) float32 stops of a named colour map ("viridis", "inferno")."""
    return np.array(_MAPS[name]["stops"], np.float32)


def colormap(value, xp=np, out=None, ramp: np.ndarray = STOPS):
    """RGBA float32 (n, 4) for values in [0, 1] (clipped; NaN counts as 0)."""
    stops_ = xp.asarray(ramp)
    count = stops_.shape[0]
    v = xp.clip(xp.nan_to_num(xp.asarray(value, dtype=xp.float32)), 0.0, 1.0) * (count - 1)
    lo = xp.minimum(v.astype(xp.int32), count - 2)
    frac = (v - lo)[:, None]
    rgba = xp.ones((v.shape[0], 4), xp.float32) if out is None else out
    rgba[:, :3] = stops_[lo] * (1 - frac) + stops_[lo + 1] * frac
    rgba[:, 3] = 1.0
    return rgba


def block_colors(thread_index, block: int, xp=np, out=None):
    """Each item coloured by the CUDA block whose thread handled it (thread index // block)."""
    palette = xp.asarray(BLOCK_PALETTE)
    ids = (xp.asarray(thread_index) // block) % len(BLOCK_PALETTE)
    rgba = xp.ones((ids.shape[0], 4), xp.float32) if out is None else out
    rgba[:, :3] = palette[ids]
    rgba[:, 3] = 1.0
    return rgba
