"""The balls' colours written with numpy or CuPy (``xp``): the twin of render.cu."""

from __future__ import annotations

import numpy as np

from sim.colormap import MISMATCH_RGBA, block_colors, colormap

RENDER_MODES = {"speed": 0, "height": 1, "pairs": 2, "uniform": 3, "block": 4}  # render.cu's modes
UNIFORM_RGBA = (0.85, 0.55, 0.25, 1.0)
SPEED_SCALE = 20.0  # a speed that reaches the top of the colour map
PAIRS_SCALE = 12.0


def fill_colors(scene, mode: str, xp, out):
    """(n, 4) RGBA of the scene's balls into ``out``; balls that differ under verification in red."""
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
        if scene.backend == "gpu":
            pos, vel = scene.gpu.pos[:n], scene.gpu.vel[:n]
        else:
            pos, vel = scene.host.pos, scene.host.vel
        if mode == "speed":
            value = xp.sqrt(xp.sum(vel[:, :3] * vel[:, :3], axis=1)) / SPEED_SCALE
        elif mode == "height":
            value = (pos[:, 1] + scene.trough.radius) / (1.5 * scene.trough.radius)
        elif mode == "pairs":
            value = scene.pair_counts(xp) / PAIRS_SCALE
        else:
            raise ValueError(f"unknown colour mode {mode!r} (choose from {', '.join(scene.color_modes)})")
        colormap(value, xp, out)
    marked = scene.marked(n)
    if marked is not None:
        out[xp.asarray(marked)] = xp.asarray(MISMATCH_RGBA, dtype=xp.float32)
    return out
