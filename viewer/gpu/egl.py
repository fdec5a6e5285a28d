"""Which EGL driver headless rendering gets.

On NVIDIA machines set up for containers the driver's EGL vendor file lies outside glvnd's
search path, so EGL would open Mesa's software renderer, on which CUDA–GL interop cannot work.
Pointing glvnd at it must happen before libEGL is first loaded: ``viewer/__init__.py`` does it.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

VENDOR_VARIABLE = "__EGL_VENDOR_LIBRARY_FILENAMES"
NVIDIA_VENDOR_FILE = Path("/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json")
SYSTEM_VENDOR_DIR = Path("/usr/share/glvnd/egl_vendor.d")


def prefer_nvidia_egl(
    environ: MutableMapping[str, str] = os.environ,
    nvidia_file: Path = NVIDIA_VENDOR_FILE,
    system_dir: Path = SYSTEM_VENDOR_DIR,
) -> bool:
    """Put NVIDIA's EGL first, the system's vendors (Mesa) after it as a fallback; True if set.

    Does nothing when the user chose vendors already or when the NVIDIA file is not there.
    """
    if VENDOR_VARIABLE in environ or not nvidia_file.is_file():
        return False
    others = sorted(str(p) for p in system_dir.glob("*.json")) if system_dir.is_dir() else []
    environ[VENDOR_VARIABLE] = ":".join([str(nvidia_file), *others])
    return True
