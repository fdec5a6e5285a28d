"""Backend choice: "cpu" (numpy + numba) or "gpu" (CuPy).

The GPU is optional. ``gpu_status()`` answers once per process whether CuPy can use a device,
and if not, why; the viewer shows that reason beside the disabled GPU entry. The reason names what is
missing: on a machine with no NVIDIA GPU or driver it says so rather than suggest installing CuPy, which
would not help there.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from dataclasses import dataclass

from sim.gpu.cuda import device_properties

BACKENDS = ("cpu", "gpu")


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here; the message says why."""


@dataclass(frozen=True)
class GpuStatus:
    available: bool
    reason: str  # why not, or the device name when available
    device_name: str = ""


@functools.lru_cache(maxsize=1)
def gpu_status() -> GpuStatus:
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA install raising on import
        missing = nvidia_driver_problem()
        if missing:
            return GpuStatus(False, missing)
        return GpuStatus(
            False, f"CuPy is not installed ({type(exc).__name__}) though an NVIDIA GPU is here; install the [gpu] extra"
        )
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count < 1:
            return GpuStatus(False, "no CUDA device found")
        name = device_properties(0)["name"]
    except Exception as exc:  # CUDARuntimeError without a driver or device
        # Without a driver CuPy's runtime says the driver is "insufficient": say what is really missing.
        missing = nvidia_driver_problem()
        if missing:
            return GpuStatus(False, missing)
        msg = str(exc).strip() or type(exc).__name__
        return GpuStatus(False, f"no usable CUDA device: {msg}")
    return GpuStatus(True, name, name)


DRIVER_LIBRARY = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"
CUDA_ERROR_NO_DEVICE = 100


def nvidia_driver_problem(library: str = DRIVER_LIBRARY) -> str:
    """ "" when an NVIDIA driver is installed and sees a GPU, else what is missing.

    The probe is the driver's own library, the one every CUDA program (CuPy included) loads: it is
    there exactly when the driver is (``/dev/nvidia*`` is absent under WSL, ``nvidia-smi`` may be left out
    of a container, and the toolkit's link stub is ``libcuda.so``, not ``.so.1``). Loading it costs a
    dlopen; ``cuInit`` then tells a driver with a GPU from one without.
    """
    try:
        driver = _open_driver(library)
    except OSError:
        return f"no NVIDIA GPU driver on this machine ({library} not found): the GPU backend needs an NVIDIA GPU"
    try:
        code = driver.cuInit(0)
        count = ctypes.c_int(0)
        if code == 0:
            code = driver.cuDeviceGetCount(ctypes.byref(count))
    except AttributeError:  # not the CUDA driver after all
        return f"no usable NVIDIA GPU driver ({library} has no cuInit): the GPU backend needs an NVIDIA GPU"
    if code == CUDA_ERROR_NO_DEVICE or (code == 0 and count.value < 1):
        return "no NVIDIA GPU found (the NVIDIA driver is installed but sees no GPU)"
    if code != 0:
        return f"the NVIDIA driver did not start (cuInit error {code}); nvidia-smi shows its state"
    return ""


def _open_driver(library: str):
    return ctypes.CDLL(library)


def device_name(backend: str) -> str:
    """A human name for where a backend runs, for benchmark records."""
    if backend == "gpu":
        return gpu_status().device_name
    import numba

    threads = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]  # numba sets it at import
    return f"CPU: {cpu_model()} ({threads} threads)"


def cpu_model() -> str:
    """The processor's model name (/proc/cpuinfo), else what the platform says."""
    import platform

    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def choose_backend(requested: str, supported: tuple[str, ...]) -> tuple[str, str]:
    """Resolve "auto"/"cpu"/"gpu" to a backend a scene supports, with the reason for any fallback.

    Returns (backend, note): note is "" when the request was honoured.
    """
    if requested not in ("auto", *BACKENDS):
        raise ValueError(f"unknown backend {requested!r} (choose cpu, gpu or auto)")
    if requested == "cpu":
        return "cpu", ""
    status = gpu_status()
    why = ""
    if not status.available:
        why = status.reason
    elif "gpu" not in supported:
        why = "this scene has no GPU kernels yet"
    if not why:
        return "gpu", ""
    if requested == "gpu":
        raise BackendUnavailable(f"GPU backend unavailable: {why}")
    return "cpu", why
