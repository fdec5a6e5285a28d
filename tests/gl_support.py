"""What several viewer tests share: whether an EGL context can be had, and a scene sent through host uploads."""

import dataclasses
import functools

import pytest

import viewer  # noqa: F401  first: it picks NVIDIA's EGL before any context loads libEGL


@functools.cache
def egl_problem() -> str | None:
    """None when a standalone EGL OpenGL 3.3 context opens here, else why not."""
    try:
        import moderngl

        moderngl.create_standalone_context(backend="egl", require=330).release()
    except Exception as exc:  # noqa: BLE001  any failure means: skip with the reason
        return f"no EGL OpenGL 3.3 context: {exc}"
    return None


needs_egl = pytest.mark.skipif(egl_problem() is not None, reason=str(egl_problem()))


class HostOnly:
    """A device scene made to go through host uploads: its views lose ``write``, so the viewer reads
    ``host()`` (a copy to the host)."""

    def __init__(self, scene):
        self._scene = scene

    def __getattr__(self, name):
        return getattr(self._scene, name)

    def view(self, color_mode):
        return dataclasses.replace(self._scene.view(color_mode), write=None)
