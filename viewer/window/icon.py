"""The window icon: three lit spheres resting in a trough over a faint grid, drawn with numpy.

``python -m viewer.window.icon`` redraws assets/icon.png (256 x 256) and assets/icon-64.png
(64 x 64) with the project's picture writer (viewer.image); ``set_window_icon`` gives both to a pyglet window.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import assets
from viewer.image import read_image, write_image

SIZES = {"icon.png": 256, "icon-64.png": 64}
SUPERSAMPLE = 4
BACKGROUND = np.array([0.075, 0.085, 0.105])  # the viewer's background
GRID = np.array([0.16, 0.19, 0.24])
TROUGH = np.array([0.45, 0.55, 0.68])
# (centre x, centre y, radius) in units of the icon's side, y down; colours from the viridis ramp's
# upper half and the balls' uniform orange.
SPHERES = (
    ((0.33, 0.60, 0.17), (0.128, 0.567, 0.551)),
    ((0.67, 0.60, 0.17), (0.478, 0.821, 0.318)),
    ((0.50, 0.33, 0.17), (0.85, 0.55, 0.25)),
)
LIGHT = np.array([-0.45, -0.6, 0.66]) / np.linalg.norm([-0.45, -0.6, 0.66])  # from the upper left, towards us


def draw_icon(size: int) -> np.ndarray:
    """(size, size, 4) uint8 RGBA, first row at the top."""
    n = size * SUPERSAMPLE
    y, x = (np.mgrid[0:n, 0:n] + 0.5) / n
    rgb = np.empty((n, n, 3))
    rgb[:] = BACKGROUND
    # A rounded square: transparent corners.
    corner = 0.18
    cx, cy = np.clip(x, corner, 1 - corner), np.clip(y, corner, 1 - corner)
    alpha = (np.hypot(x - cx, y - cy) <= corner).astype(float)
    # A faint grid, the field view's cells.
    cells = 8
    fx, fy = (x * cells) % 1.0, (y * cells) % 1.0
    line = (np.minimum(fx, 1 - fx) < 0.035) | (np.minimum(fy, 1 - fy) < 0.035)
    rgb[line] = GRID
    # The trough: the lower half of a circle around the spheres.
    ring = np.hypot(x - 0.5, y - 0.42)
    trough = (np.abs(ring - 0.40) < 0.03) & (y > 0.42)
    rgb[trough] = TROUGH
    for (sx, sy, r), colour in SPHERES:
        dx, dy = (x - sx) / r, (y - sy) / r
        inside = dx * dx + dy * dy <= 1.0
        dz = np.sqrt(np.clip(1.0 - dx * dx - dy * dy, 0.0, 1.0))
        normal = np.stack([dx, dy, dz], axis=-1)
        diffuse = np.clip(normal @ LIGHT, 0.0, 1.0)
        half = (LIGHT + np.array([0.0, 0.0, 1.0])) / np.linalg.norm(LIGHT + np.array([0.0, 0.0, 1.0]))
        specular = np.clip(normal @ half, 0.0, 1.0) ** 40
        shaded = np.array(colour) * (0.25 + 0.75 * diffuse)[..., None] + 0.6 * specular[..., None]
        rgb[inside] = np.clip(shaded[inside], 0.0, 1.0)
    rgba = np.concatenate([rgb, alpha[..., None]], axis=-1)
    # Average the supersamples (colours weighted by coverage, so the edges do not darken).
    blocks = rgba.reshape(size, SUPERSAMPLE, size, SUPERSAMPLE, 4).mean(axis=(1, 3))
    cover = blocks[..., 3:]
    weighted = (rgba[..., :3] * rgba[..., 3:]).reshape(size, SUPERSAMPLE, size, SUPERSAMPLE, 3).mean(axis=(1, 3))
    colour = np.divide(weighted, cover, out=np.zeros_like(weighted), where=cover > 0)
    out = np.concatenate([colour, cover], axis=-1)
    return np.round(np.clip(out, 0.0, 1.0) * 255).astype(np.uint8)


def set_window_icon(window) -> None:
    """Give the window the icon in both sizes; a missing or unreadable icon is reported, not fatal."""
    import pyglet

    try:
        images = []
        for name in SIZES:
            pixels = read_image(assets.path(name))
            height, width, channels = pixels.shape
            fmt = "RGBA" if channels == 4 else "RGB"
            images.append(pyglet.image.ImageData(width, height, fmt, pixels.tobytes(), -width * channels))
        window.set_icon(*images)
    except Exception as exc:  # noqa: BLE001  an icon is never worth failing the window for
        print(f"viewer: no window icon: {exc}", file=sys.stderr)


def main() -> int:
    root = Path(assets.__file__).parent
    for name, size in SIZES.items():
        print(write_image(root / name, draw_icon(size), what="icon"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
