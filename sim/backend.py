"""Backend choice: "cpu" (numpy + numba) or "gpu" (CuPy).

The GPU is optional. ``gpu_status()`` answers once per process whether CuPy can use a device,
and if not, why; the viewer shows that reason beside the disabled GPU entry.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from sim.cuda import device_properties

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
        return GpuStatus(False, f"CuPy is not installed ({type(exc).__name__}); install the [gpu] extra")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count < 1:
            return GpuStatus(False, "no CUDA device found")
        name = device_properties(0)["name"]
    except Exception as exc:  # CUDARuntimeError without a driver or device
        msg = str(exc).strip() or type(exc).__name__
        return GpuStatus(False, f"no usable CUDA device: {msg}")
    return GpuStatus(True, name, name)


def device_name(backend: str) -> str:
    """A human name for where a backend runs, for benchmark records."""
    if backend == "gpu":
        return gpu_status().device_name
    import numba

    return f"CPU: {cpu_model()} ({numba.config.NUMBA_NUM_THREADS} threads)"


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
