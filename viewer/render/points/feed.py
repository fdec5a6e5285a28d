"""Fills the sphere renderer's GL buffers from a ``PointsView``, the same way for the window and headless.

A view whose items live on the GPU (``view.write`` set) writes positions and colours straight into
the GL buffers through CUDA–GL interop: map, ``view.write(positions, colours)``, unmap, no host
copy. Anywhere else, or when interop cannot be set up here (no cuda-bindings, a GL context that is
not on the CUDA device such as Mesa's), the feed uploads ``view.host()`` instead and keeps the
reason in ``fallback_reason``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from sim.contract import PointsView
from viewer.gpu.interop import GLBufferRegistration, InteropError, RegistrationHolder, cupy_view, current_stream_ptr
from viewer.render.points.spheres import SphereRenderer

DEVICE, HOST = "CUDA–GL interop", "host upload"


class PointsFeed(RegistrationHolder):
    def __init__(self, spheres: SphereRenderer):
        self.spheres = spheres
        self.fallback_reason: str | None = None  # why a device view goes through the host
        self.path: str | None = None  # how the last frame's items arrived (DEVICE or HOST)
        self.host_positions: np.ndarray | None = None  # the last host upload's (n, 4) positions (picking)
        self._registration: GLBufferRegistration | None = None

    def update(self, view: PointsView) -> None:
        """Make the renderer show the view's items."""
        if view.on_device and self.fallback_reason is None:
            try:
                self._write_on_device(view)
                self.path = DEVICE
                self.host_positions = None
                return
            except InteropError as exc:
                self.fallback_reason = str(exc)
                self._unregister_quietly()
        self._upload_from_host(view)
        self.path = HOST

    def _buffers(self) -> tuple:
        return self.spheres.position_buffer, self.spheres.color_buffer

    def _write_on_device(self, view: PointsView) -> None:
        n = int(view.count)
        if n > self.spheres.capacity:
            self._unregister()  # before reserve() releases the registered buffers
            self.spheres.reserve(n)
        if n == 0:
            self.spheres.set_count(0)
            return
        if self._registration is None or not self._registration.matches(self._buffers()):
            self._unregister()
            # Readable too: the splat reads the items back while drawing.
            self._registration = GLBufferRegistration(self._buffers(), write_only=False)
        with self._registration.mapped(current_stream_ptr()) as ((pos_ptr, pos_size), (col_ptr, col_size)):
            positions = cupy_view(pos_ptr, pos_size, (n, 4), "float32", self._registration)
            colors = cupy_view(col_ptr, col_size, (n, 4), "float32", self._registration)
            view.write(positions, colors)
        self.spheres.set_count(n)

    @contextmanager
    def mapped_items(self) -> Iterator[tuple]:
        """The items the last update wrote on the device, as CuPy (n, 4) positions and colours over
        the GL buffers, mapped on the current stream for the duration."""
        if self.path != DEVICE or self._registration is None:
            raise InteropError("the items were not written on the device")
        n = self.spheres.count
        with self._registration.mapped(current_stream_ptr()) as ((pos_ptr, pos_size), (col_ptr, col_size)):
            yield (cupy_view(pos_ptr, pos_size, (n, 4), "float32", self._registration),
                   cupy_view(col_ptr, col_size, (n, 4), "float32", self._registration))

    def _upload_from_host(self, view: PointsView) -> None:
        positions, colors = view.host()
        if self._registration is not None and len(positions) > self.spheres.capacity:
            self._unregister()  # upload() is about to reallocate the registered buffers
        self.spheres.upload(positions, colors)
        self.host_positions = positions

    def item_sphere(self, item: int) -> np.ndarray | None:
        """(x, y, z, radius) of one item of the last update: from the host copy, or 16 bytes read
        from the GL buffer the device wrote (None past the count)."""
        if not 0 <= item < self.spheres.count:
            return None
        if self.path == HOST and self.host_positions is not None and item < len(self.host_positions):
            return np.asarray(self.host_positions[item], dtype=np.float64)
        data = self.spheres.position_buffer.read(16, offset=16 * int(item))
        return np.frombuffer(data, np.float32).astype(np.float64)

    def close(self) -> None:
        """Unregister from CUDA; call before the GL buffers are released."""
        self._unregister()
