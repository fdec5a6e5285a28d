"""The balls' quantities with numpy or CuPy (``xp``): the twin of render.cu."""

from __future__ import annotations

import numpy as np

QUANTITY_MODES = {"speed": 0, "height": 1, "pairs": 2, "uniform": 3, "block": 4}  # render.cu's modes
UNIFORM_PALETTE = np.array([[0.85, 0.55, 0.25]], np.float32)
UNITS = {"speed": "units/s", "height": "units (y)", "pairs": "partners"}  # the modes that map a quantity


def mapped_values(scene, mode: str, xp):
    """The quantity a colour mode maps: speed, height (y) or partners per ball, as float32."""
    n = scene.n
    if scene.backend == "gpu":
        pos, vel = scene.gpu.pos[:n], scene.gpu.vel[:n]
    else:
        pos, vel = scene.host.pos, scene.host.vel
    if mode == "speed":  # summed in render.cu's order, so both round alike
        vx, vy, vz = vel[:, 0], vel[:, 1], vel[:, 2]
        return xp.sqrt(vx * vx + vy * vy + vz * vz)
    if mode == "height":
        return pos[:, 1]
    if mode == "pairs":
        return scene.pair_counts(xp).astype(xp.float32)
    raise ValueError(f"unknown colour mode {mode!r} (choose from {', '.join(scene.color_modes)})")
