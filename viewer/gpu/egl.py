"""Which EGL driver and device headless rendering gets.

On NVIDIA machines set up for containers the driver's EGL vendor file lies outside glvnd's
search path, so EGL would open Mesa's software renderer, on which CUDA–GL interop cannot work.
Pointing glvnd at it must happen before libEGL is first loaded: ``viewer/__init__.py`` does it.

On a machine with several GPUs, EGL numbers its devices in its own order: its first need not be the
GPU that CUDA computes on, and CUDA cannot register the buffers of a context on another GPU.
``standalone_context`` (and the headless window, through pyglet's ``headless_device``) open the EGL
device whose contexts CUDA names as its current device.
"""

from __future__ import annotations

import functools
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


MOST_EGL_DEVICES = 16  # EGL devices tried in turn (NVIDIA's GPUs, then any software device)


# The GL version asked for first: 4.3 reads storage buffers in shaders (the splat, the field) and tells their
# limits; a driver may give exactly the version asked for (NVIDIA's EGL gives 3.3 for 3.3).
PREFERRED_GL = 430


def standalone_context(require: int = 330):
    """A moderngl context of its own (no window) on EGL, on the GPU CUDA computes on: GL 4.3 where the driver
    offers it, else ``require``."""
    import moderngl

    index = interop_device_index()
    options = {} if index is None else {"device_index": index}
    if require < PREFERRED_GL:
        try:
            return moderngl.create_standalone_context(backend="egl", require=PREFERRED_GL, **options)
        except Exception:  # noqa: BLE001  no 4.3 here: the version asked for
            pass
    return moderngl.create_standalone_context(backend="egl", require=require, **options)


@functools.cache
def interop_device_index() -> int | None:
    """The EGL device whose contexts CUDA–GL interop can use (CUDA's current device draws them), or None
    for EGL's default: where it is that GPU, where there is nothing to choose (no CUDA device; one, with
    every GPU visible to CUDA), and where no EGL device is CUDA's (interop then falls back to host
    uploads, saying why). EGL sees every GPU even when CUDA_VISIBLE_DEVICES shows CUDA fewer (a parallel
    GPU test run gives each worker one), so one visible device alone does not settle it."""
    devices = _cuda_device_count()
    if devices == 0 or (devices == 1 and not os.environ.get("CUDA_VISIBLE_DEVICES")):
        return None
    want = _cuda_current_device()
    if _draws(None, want):
        return None
    for index in range(MOST_EGL_DEVICES):
        found = _draws(index, want)
        if found is None:  # past the last device (or one that cannot open): stop looking
            return None
        if found:
            return index
    return None


def _draws(index: int | None, device: int) -> bool | None:
    """Whether CUDA's ``device`` draws a context of EGL device ``index`` (None: EGL's default); None if
    no context opens there."""
    import moderngl

    options = {} if index is None else {"device_index": index}
    try:
        ctx = moderngl.create_standalone_context(backend="egl", require=330, **options)
    except Exception:  # noqa: BLE001  any failure: no context there
        return None
    try:
        return device in _cuda_devices_of_current_gl()
    finally:
        ctx.release()


def _cuda_device_count() -> int:
    try:
        from cuda.bindings import runtime

        error, count = runtime.cudaGetDeviceCount()
    except Exception:  # noqa: BLE001  no cuda-bindings, or no driver: no CUDA device to match
        return 0
    return int(count) if error == runtime.cudaError_t.cudaSuccess else 0


def _cuda_current_device() -> int:
    from cuda.bindings import runtime

    error, device = runtime.cudaGetDevice()
    return int(device) if error == runtime.cudaError_t.cudaSuccess else 0


def _cuda_devices_of_current_gl() -> list[int]:
    """The CUDA devices that draw the current GL context (none for a software renderer)."""
    from cuda.bindings import runtime

    error, count, devices = runtime.cudaGLGetDevices(8, runtime.cudaGLDeviceList.cudaGLDeviceListAll)
    return [int(d) for d in devices[: int(count)]] if error == runtime.cudaError_t.cudaSuccess else []
