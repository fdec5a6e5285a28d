"""The host's pick: the first sphere a ray meets, tested against every item in one pass (numba: no
temporaries over the items, a few milliseconds for a million)."""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True)
def _first_hit(spheres, ox, oy, oz, dx, dy, dz):
    best, best_t = -1, math.inf
    for i in range(spheres.shape[0]):
        r = np.float64(spheres[i, 3])
        if r <= 0.0:
            continue
        px, py, pz = spheres[i, 0] - ox, spheres[i, 1] - oy, spheres[i, 2] - oz
        along = px * dx + py * dy + pz * dz
        # The perpendicular offset itself, not |p|^2 - along^2: that cancels badly far from the origin.
        qx, qy, qz = px - along * dx, py - along * dy, pz - along * dz
        d2 = qx * qx + qy * qy + qz * qz
        if d2 > r * r:
            continue
        half_chord = math.sqrt(r * r - d2)
        t = along - half_chord
        if t < 0.0:
            t = along + half_chord  # from inside a sphere: its far side
        if 0.0 <= t < best_t:
            best, best_t = i, t
    return best, best_t


def ray_hit(spheres: np.ndarray, origin, direction) -> tuple[int, float] | None:
    """(index, distance along the ray) of the first of the (n, 4) spheres (x, y, z, radius) the ray
    (origin, unit direction) meets in front of its origin; None when it meets none."""
    spheres = np.ascontiguousarray(spheres)
    if spheres.shape[0] == 0:
        return None
    (ox, oy, oz), (dx, dy, dz) = (float(v) for v in origin), (float(v) for v in direction)
    index, distance = _first_hit(spheres, ox, oy, oz, dx, dy, dz)
    return (int(index), float(distance)) if index >= 0 else None
