"""The heat scene's presets (sim/heat/presets.toml) as fields: the grid of a preset at its own size
or about n cells of its shape, the DLI's random field after srand(seed), the cold plate with hot discs."""

from __future__ import annotations

import math

import numpy as np

import assets
from sim.crand import RAND_MAX, glibc_rand
from sim.heat.stencil_cpu import paint_box, paint_mask


def preset_table(name: str) -> dict:
    return assets.presets("heat")[name]


def grid_shape(table: dict, n: int | None) -> tuple[int, int]:
    """(ni, nj) of a preset: its own, or about ``n`` cells of the same shape (at least 3x3)."""
    ni, nj = int(table["ni"]), int(table["nj"])
    if n is None:
        return ni, nj
    across = max(3, round(math.sqrt(n * ni / nj)))
    return across, max(3, round(n / across))


def rand_field(ni: int, nj: int, seed: int) -> np.ndarray:
    """The DLI's initial field after srand(seed): (float)rand() / (float)(RAND_MAX / 100.0f) in memory
    order (seed 1 is the DLI's own: ``sim.heat.course.initial_field``)."""
    field = glibc_rand(seed, ni * nj).astype(np.float32)  # (float)rand(): rounded to nearest
    field /= np.float32(RAND_MAX) / np.float32(100.0)
    return field.reshape(nj, ni)


def plate_field(ni: int, nj: int, sources) -> np.ndarray:
    """A cold plate (0) with hot discs: centres as fractions of the width and height, radius of the smaller side."""
    field = np.zeros((nj, ni), np.float32)
    side = min(ni, nj)
    for s in sources:
        x, y, r = s["x"] * ni - 0.5, s["y"] * nj - 0.5, max(s["r"] * side, 0.75)
        box = paint_box(ni, nj, x, y, r)
        if box is not None:
            i0, j0, w, h = box
            field[j0 : j0 + h, i0 : i0 + w][paint_mask(i0, j0, w, h, x, y, r)] = np.float32(s["t"])
    return field


def initial_field(table: dict, ni: int, nj: int, seed: int) -> np.ndarray:
    if table["init"] == "rand":
        return rand_field(ni, nj, seed)
    return plate_field(ni, nj, table["sources"])
