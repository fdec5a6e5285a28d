"""Whether a window can open here, and opening one with an OpenGL 3.3 context. Kept apart from the
viewer so that the CLI, the tests and the frame bench can ask and open without building a viewer."""

from __future__ import annotations

import os
import sys

from viewer import AUTO_HEADLESS, pyglet
from viewer.gpu.egl import interop_device_index


def display_problem() -> str | None:
    """None when a window can be opened here, else a one-line reason. Never raises."""
    try:
        if pyglet.options.get("headless") and not AUTO_HEADLESS:
            return "no display: pyglet runs headless (PYGLET_HEADLESS is set)"
        if sys.platform.startswith("linux"):
            name = os.environ.get("DISPLAY")
            if not name:
                if os.environ.get("WAYLAND_DISPLAY"):
                    return "no display: DISPLAY is not set (the viewer needs X11 or XWayland)"
                return "no display: DISPLAY is not set"
            # Ask X directly: pyglet keeps its first connection, so it would not notice a change.
            from pyglet.libs.x11 import xlib

            connection = xlib.XOpenDisplay(name.encode())
            if not connection:
                return f"cannot open display {name!r}"
            xlib.XCloseDisplay(connection)
        else:
            pyglet.display.get_display()
    except Exception as exc:  # noqa: BLE001  any failure here is the answer, not a crash
        return f"cannot open a display: {exc}"
    if AUTO_HEADLESS:
        return "no display when the viewer was imported: pyglet runs headless"
    return None


def _make_window(width: int, height: int, visible: bool, caption: str):
    if pyglet.options.get("headless"):  # (EGL: on the GPU CUDA computes on, where there are several)
        index = interop_device_index()
        if index is not None:
            pyglet.options["headless_device"] = index
    base = dict(width=width, height=height, caption=caption, resizable=True, vsync=False, visible=visible)
    configs = (
        # 4.3 first (storage buffers, viewer.gpu.egl.PREFERRED_GL): a driver may give exactly the version asked for
        pyglet.gl.Config(major_version=4, minor_version=3, forward_compatible=True, double_buffer=True, depth_size=24),
        pyglet.gl.Config(major_version=3, minor_version=3, forward_compatible=True, double_buffer=True, depth_size=24),
        None,  # whatever the platform offers; the viewer checks the version through moderngl
    )
    error = None
    for config in configs:
        try:
            return pyglet.window.Window(config=config, **base)
        except pyglet.window.NoSuchConfigException as exc:
            error = exc
    raise RuntimeError(f"no OpenGL 3.3 window configuration: {error}")
