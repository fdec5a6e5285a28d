"""A minimal PNG writer (8-bit RGB or RGBA), so screenshots need no imaging library."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

from sim.writer import OutputError, write_bytes


def _chunk(tag: bytes, data: bytes) -> bytes:
    body = tag + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def encode_png(pixels: np.ndarray) -> bytes:
    """PNG bytes for an (height, width, 3|4) uint8 array whose first row is the top of the image."""
    pixels = np.asarray(pixels)
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] not in (3, 4):
        raise ValueError(f"expected (h, w, 3|4) uint8 pixels, got {pixels.dtype} {pixels.shape}")
    height, width, channels = pixels.shape
    color_type = 2 if channels == 3 else 6
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    # Filter type 0 (none) in front of every row.
    rows = np.zeros((height, 1 + width * channels), dtype=np.uint8)
    rows[:, 1:] = pixels.reshape(height, width * channels)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
        + _chunk(b"IEND", b"")
    )


def write_png(path: str | Path, pixels: np.ndarray) -> Path:
    """Encode, then write atomically through sim.writer (its folder created if missing); OutputError
    if the picture cannot be written (a device or link in the way, a full disk): nothing half-written."""
    path = Path(path)
    data = encode_png(pixels)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write screenshot {str(path)!r}: {exc.strerror or exc}") from None
    write_bytes(str(path), data, what="screenshot")
    return path


def read_png(path: str | Path) -> np.ndarray:
    """Decode a PNG written by ``encode_png`` (8-bit RGB/RGBA, filter 0 only); for tests and tools."""
    data = Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        tag = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if tag == b"IHDR":
            width, height, depth, color_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color_type not in (2, 6) or interlace:
                raise ValueError("only 8-bit RGB/RGBA non-interlaced PNGs are supported")
            channels = 3 if color_type == 2 else 4
        elif tag == b"IDAT":
            idat += body
    rows = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, 1 + width * channels)
    if np.any(rows[:, 0] != 0):
        raise ValueError("PNG uses row filters this reader does not decode")
    return rows[:, 1:].reshape(height, width, channels).copy()
