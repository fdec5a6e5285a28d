"""Fills the sphere renderer's GL buffers from a scene, the same way for the window and headless.

A scene whose state lives on the GPU (``scene.render_on_device``) writes positions and colours
straight into the GL buffers through CUDA–GL interop: map, ``scene.write_render``, unmap, no
host copy. Anywhere else, or when interop cannot be set up here (no cuda-bindings, a GL context
that is not on the CUDA device such as Mesa's), the feed uploads ``positions()`` / ``colors()``
from the host instead and keeps the reason in ``fallback_reason``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from viewer.interop import GLBufferRegistration, InteropError, cupy_view, current_stream_ptr
from viewer.spheres import SphereRenderer

DEVICE, HOST = "CUDA–GL interop", "host upload"


class BallFeed:
    def __init__(self, spheres: SphereRenderer):
        self.spheres = spheres
        self.fallback_reason: str | None = None  # why a device scene goes through the host
        self.path: str | None = None  # how the last frame's balls arrived (DEVICE or HOST)
        self._registration: GLBufferRegistration | None = None

    def update(self, scene, color_mode: str) -> None:
        """Make the renderer show the scene's current balls in ``color_mode``."""
        if getattr(scene, "render_on_device", False) and self.fallback_reason is None:
            try:
                self._write_on_device(scene, color_mode)
                self.path = DEVICE
                return
            except InteropError as exc:
                self.fallback_reason = str(exc)
                self._unregister_quietly()
        self._upload_from_host(scene, color_mode)
        self.path = HOST

    def _buffers(self) -> tuple:
        return self.spheres.position_buffer, self.spheres.color_buffer

    def _write_on_device(self, scene, color_mode: str) -> None:
        n = int(scene.n)
        if n > self.spheres.capacity:
            self._unregister()  # before reserve() releases the registered buffers
            self.spheres.reserve(n)
        if n == 0:
            self.spheres.set_count(0)
            return
        if self._registration is None or not self._registration.matches(self._buffers()):
            self._unregister()
            # Readable too: the splat reads the balls back while drawing.
            self._registration = GLBufferRegistration(self._buffers(), write_only=False)
        with self._registration.mapped(current_stream_ptr()) as ((pos_ptr, pos_size), (col_ptr, col_size)):
            positions = cupy_view(pos_ptr, pos_size, (n, 4), "float32", self._registration)
            colors = cupy_view(col_ptr, col_size, (n, 4), "float32", self._registration)
            scene.write_render(positions, colors, color_mode)
        self.spheres.set_count(n)

    @contextmanager
    def mapped_balls(self) -> Iterator[tuple]:
        """The balls the last update wrote on the device, as CuPy (n, 4) positions and colours over
        the GL buffers, mapped on the current stream for the duration."""
        if self.path != DEVICE or self._registration is None:
            raise InteropError("the balls were not written on the device")
        n = self.spheres.count
        with self._registration.mapped(current_stream_ptr()) as ((pos_ptr, pos_size), (col_ptr, col_size)):
            yield (cupy_view(pos_ptr, pos_size, (n, 4), "float32", self._registration),
                   cupy_view(col_ptr, col_size, (n, 4), "float32", self._registration))

    def _upload_from_host(self, scene, color_mode: str) -> None:
        positions = scene.positions()
        if self._registration is not None and len(positions) > self.spheres.capacity:
            self._unregister()  # upload() is about to reallocate the registered buffers
        self.spheres.upload(positions, scene.colors(color_mode))

    def _unregister(self) -> None:
        registration, self._registration = self._registration, None
        if registration is not None:
            registration.close()

    def _unregister_quietly(self) -> None:
        try:
            self._unregister()
        except InteropError:
            pass  # already falling back: the first error is the one worth reporting

    def close(self) -> None:
        """Unregister from CUDA; call before the GL buffers are released."""
        self._unregister()
