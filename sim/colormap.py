"""A perceptual colour ramp (viridis-like) for colouring by a scalar, in numpy."""

import numpy as np

_STOPS = np.array([
    (0.267, 0.005, 0.329), (0.283, 0.141, 0.458), (0.254, 0.265, 0.530), (0.207, 0.372, 0.553),
    (0.164, 0.471, 0.558), (0.128, 0.567, 0.551), (0.135, 0.659, 0.518), (0.267, 0.749, 0.441),
    (0.478, 0.821, 0.318), (0.741, 0.873, 0.150), (0.993, 0.906, 0.144),
], np.float32)


def colormap(value: np.ndarray) -> np.ndarray:
    """RGBA float32 (n, 4) for values in [0, 1] (clipped)."""
    v = np.clip(np.nan_to_num(np.asarray(value, np.float32)), 0.0, 1.0) * (len(_STOPS) - 1)
    lo = np.minimum(v.astype(np.int64), len(_STOPS) - 2)
    frac = (v - lo)[:, None]
    rgba = np.ones((v.shape[0], 4), np.float32)
    rgba[:, :3] = _STOPS[lo] * (1 - frac) + _STOPS[lo + 1] * frac
    return rgba
