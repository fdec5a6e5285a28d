"""Colour ramps for colouring balls, written once for numpy and CuPy (``xp``)."""

import numpy as np

STOPS = np.array([  # viridis-like, perceptually ordered
    (0.267, 0.005, 0.329), (0.283, 0.141, 0.458), (0.254, 0.265, 0.530), (0.207, 0.372, 0.553),
    (0.164, 0.471, 0.558), (0.128, 0.567, 0.551), (0.135, 0.659, 0.518), (0.267, 0.749, 0.441),
    (0.478, 0.821, 0.318), (0.741, 0.873, 0.150), (0.993, 0.906, 0.144),
], np.float32)

BLOCK_PALETTE = np.array([  # distinct hues, for colouring by CUDA block
    (0.90, 0.30, 0.25), (0.25, 0.60, 0.90), (0.95, 0.75, 0.20), (0.40, 0.80, 0.40),
    (0.70, 0.40, 0.85), (0.95, 0.55, 0.15), (0.20, 0.80, 0.80), (0.90, 0.45, 0.65),
    (0.60, 0.65, 0.20), (0.55, 0.35, 0.25), (0.45, 0.45, 0.95), (0.85, 0.85, 0.85),
], np.float32)

MISMATCH_RGBA = (1.0, 0.0, 0.0, 1.0)


def colormap(value, xp=np, out=None):
    """RGBA float32 (n, 4) for values in [0, 1] (clipped; NaN counts as 0)."""
    stops = xp.asarray(STOPS)
    v = xp.clip(xp.nan_to_num(xp.asarray(value, dtype=xp.float32)), 0.0, 1.0) * (len(STOPS) - 1)
    lo = xp.minimum(v.astype(xp.int32), len(STOPS) - 2)
    frac = (v - lo)[:, None]
    rgba = xp.ones((v.shape[0], 4), xp.float32) if out is None else out
    rgba[:, :3] = stops[lo] * (1 - frac) + stops[lo + 1] * frac
    rgba[:, 3] = 1.0
    return rgba


def block_colors(thread_index, block: int, xp=np, out=None):
    """Each ball coloured by the CUDA block whose thread handled it (thread index // block)."""
    palette = xp.asarray(BLOCK_PALETTE)
    ids = (xp.asarray(thread_index) // block) % len(BLOCK_PALETTE)
    rgba = xp.ones((ids.shape[0], 4), xp.float32) if out is None else out
    rgba[:, :3] = palette[ids]
    rgba[:, 3] = 1.0
    return rgba
