"""The balls' colours written with numpy or CuPy (``xp``): the twin of render.cu."""

from __future__ import annotations

import numpy as np

from sim.colormap import MISMATCH_RGBA, block_colors, colormap

RENDER_MODES = {"speed": 0, "height": 1, "pairs": 2, "uniform": 3, "block": 4}  # render.cu's modes
UNIFORM_RGBA = (0.85, 0.55, 0.25, 1.0)
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


def span_factors(span: tuple[float, float]) -> tuple[np.float32, np.float32]:
    """(low, 1 / (high - low)) as float32: value -> (value - low) * scale, the same on both backends."""
    lo, hi = span
    return np.float32(lo), np.float32(1.0 / (hi - lo))


def fill_colors(scene, mode: str, xp, out, span: tuple[float, float] | None = None):
    """(n, 4) RGBA of the scene's balls into ``out``; balls that differ under verification in red.
    ``span``: the range mapped onto the colour map (default: the scene's, ``color_span``)."""
    n = scene.n
    if mode == "block":
        if not scene.block_colors_available():
            raise ValueError("colour by CUDA block needs CUDA proximity on a GPU")
        if scene.backend == "gpu":
            threads = xp.arange(n, dtype=xp.int32)
        else:
            threads = scene.thread_of if scene.thread_of is not None else np.arange(n)
        block_colors(threads, scene.block, xp, out)
    elif mode == "uniform":
        out[:] = xp.asarray(UNIFORM_RGBA, dtype=xp.float32)
    else:
        value = mapped_values(scene, mode, xp)
        lo, scale = span_factors(span or scene.color_span(mode, value, xp))
        colormap((value - lo) * scale, xp, out)
    marked = scene.marked(n)
    if marked is not None:
        out[xp.asarray(marked)] = xp.asarray(MISMATCH_RGBA, dtype=xp.float32)
    return out
