"""Pictures (screenshots, headless renders) written by Pillow in the format their extension names.

PNG, JPEG and WebP; any other extension is refused before the work (``check_image_target``: exit 2
on the command line). Every picture is written atomically through ``sim.cmdline.writer``: a reader sees the
previous file or the whole new one.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from sim.cmdline.cli import UsageError
from sim.cmdline.writer import OutputError, check_target, make_folder, write_bytes

FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".webp": "WEBP"}
JPEG_QUALITY = 92
WEBP_QUALITY = 90


def image_format(path: str | Path) -> str:
    """Pillow's format name for the path's extension; UsageError naming the choices otherwise."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        found = f"extension {suffix!r}" if suffix else "no extension"
        raise UsageError(f"picture {str(path)!r} has {found}: choose {', '.join(FORMATS)}")
    return FORMATS[suffix]


def check_image_target(path: str | Path, what: str = "screenshot") -> None:
    """Before any work: a known picture format and a path that can be written (UsageError, exit 2)."""
    check_target(str(path), what)  # a folder or a device in the way is the first thing to say
    image_format(path)


def encode_image(pixels: np.ndarray, fmt: str = "PNG") -> bytes:
    """The bytes of an (height, width, 3|4) uint8 picture, first row at the top, in ``fmt``."""
    from PIL import Image

    pixels = np.asarray(pixels)
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] not in (3, 4):
        raise ValueError(f"expected (h, w, 3|4) uint8 pixels, got {pixels.dtype} {pixels.shape}")
    picture = Image.fromarray(np.ascontiguousarray(pixels), "RGB" if pixels.shape[2] == 3 else "RGBA")
    if fmt == "JPEG" and picture.mode == "RGBA":
        picture = picture.convert("RGB")  # JPEG has no alpha
    out = io.BytesIO()
    options = {"JPEG": {"quality": JPEG_QUALITY}, "WEBP": {"quality": WEBP_QUALITY}}.get(fmt, {"compress_level": 6})
    picture.save(out, fmt, **options)
    return out.getvalue()


def write_image(path: str | Path, pixels: np.ndarray, what: str = "screenshot", fmt: str | None = None) -> Path:
    """Encode in the extension's format (or ``fmt``) and write atomically, the folder created if
    missing; OutputError if the picture cannot be written: nothing half-written."""
    path = Path(path)
    try:
        fmt = fmt or image_format(path)
    except UsageError as exc:
        raise OutputError(str(exc)) from None
    data = encode_image(pixels, fmt)
    make_folder(path.parent, what)
    write_bytes(str(path), data, what=what)
    return path


def read_image(path: str | Path) -> np.ndarray:
    """(height, width, 3|4) uint8, first row at the top: RGB, or RGBA when the file has alpha."""
    from PIL import Image

    with Image.open(path) as picture:
        if picture.mode not in ("RGB", "RGBA"):
            picture = picture.convert("RGBA" if "A" in picture.getbands() else "RGB")
        return np.asarray(picture).copy()
