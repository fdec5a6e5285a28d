"""The host's pick: the first sphere a ray meets, tested against every item at once with numpy."""

from __future__ import annotations

import numpy as np


def ray_hit(spheres: np.ndarray, origin, direction) -> tuple[int, float] | None:
    """(index, distance along the ray) of the first of the (n, 4) spheres (x, y, z, radius) the ray
    (origin, unit direction) meets in front of its origin; None when it meets none."""
    spheres = np.asarray(spheres, dtype=np.float64)
    if spheres.shape[0] == 0:
        return None
    origin = np.asarray(origin, dtype=np.float64)
    direction = np.asarray(direction, dtype=np.float64)
    offset = spheres[:, :3] - origin
    along = offset @ direction
    r2 = spheres[:, 3] ** 2
    perp = offset - along[:, None] * direction
    d2 = np.einsum("ij,ij->i", perp, perp)
    inside = (d2 <= r2) & (spheres[:, 3] > 0)
    if not inside.any():
        return None
    half_chord = np.sqrt(np.maximum(r2 - d2, 0.0))
    near = along - half_chord
    hit = np.where(near >= 0, near, along + half_chord)  # from inside a sphere: its far side
    hit = np.where(inside & (hit >= 0), hit, np.inf)
    index = int(np.argmin(hit))
    return (index, float(hit[index])) if np.isfinite(hit[index]) else None
