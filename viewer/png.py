"""PNG pictures through Pillow (``viewer.image``): the names older callers and tests use."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from viewer.image import encode_image, read_image, write_image


def encode_png(pixels: np.ndarray) -> bytes:
    """PNG bytes for an (height, width, 3|4) uint8 array whose first row is the top of the image."""
    return encode_image(pixels, "PNG")


def write_png(path: str | Path, pixels: np.ndarray) -> Path:
    """Written as PNG whatever the extension, atomically through sim.writer (folder created if
    missing); OutputError if it cannot be written."""
    return write_image(path, pixels, fmt="PNG")


def read_png(path: str | Path) -> np.ndarray:
    """Decode a PNG (any the format allows) to (h, w, 3|4) uint8; for tests and tools."""
    return read_image(path)
