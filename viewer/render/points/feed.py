"""Fills the sphere renderer's GL buffers from a ``PointsView``, the same way for the window and headless.

A view whose items live on the GPU (``view.write`` set) writes positions and its quantity straight
into the GL buffers through CUDA–GL interop: map, ``view.write(positions, quantity)``, unmap, no
host copy. Anywhere else, or when interop cannot be set up here (no cuda-bindings, a GL context
that is not on the CUDA device such as Mesa's), the feed uploads ``view.host()`` instead and keeps
the reason in ``fallback_reason``. Either way the values' own range is taken (two numbers back
from the device) unless the view fixes one, and the items the view's mask marks are written as
``MARKED``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from sim.contract import PointsView
from sim.framework.scales import data_span
from viewer.gpu.interop import GLBufferRegistration, InteropError, InteropFeed, cupy_view, current_stream_ptr
from viewer.render.points.colours import MARKED
from viewer.render.points.spheres import SphereRenderer

DEVICE, HOST = "CUDA–GL interop", "host upload"


class PointsFeed(InteropFeed):
    def __init__(self, spheres: SphereRenderer):
        self.spheres = spheres
        self.fallback_reason: str | None = None  # why a device view goes through the host
        self.path: str | None = None  # how the last frame's items arrived (DEVICE or HOST)
        self.host_positions: np.ndarray | None = None  # the last host upload's (n, 4) positions (picking)
        self.data_range: tuple[float, float] = (0.0, 1.0)  # lowest and highest value of the last frame
        self._registration: GLBufferRegistration | None = None
        self._with_items: dict[str, Callable] = {}  # owner -> work for the next mapping of the device items

    def update(self, view: PointsView) -> None:
        """Make the renderer show the view's items."""
        if view.on_device and self.fallback_reason is None:
            try:
                self._write_on_device(view)
                self.path = DEVICE
                self.host_positions = None
                return
            except InteropError as exc:
                self.fall_back(str(exc))
        self._upload_from_host(view)
        self.path = HOST

    def _buffers(self) -> tuple:
        return self.spheres.position_buffer, self.spheres.quantity_buffer

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
        with self._registration.mapped(current_stream_ptr()) as ((pos_ptr, pos_size), (q_ptr, q_size)):
            positions = cupy_view(pos_ptr, pos_size, (n, 4), "float32", self._registration)
            quantity = cupy_view(q_ptr, q_size, (n,), "int32" if view.categorical else "float32", self._registration)
            view.write(positions, quantity)
            import cupy

            self._take_range(view, quantity, cupy)
            if view.mask is not None:
                quantity.view(cupy.uint32)[cupy.asarray(view.mask)] = MARKED
            self._run_work(positions)
        self.spheres.set_count(n)

    def _take_range(self, view: PointsView, quantity, xp) -> None:
        """The values' own range, unless the view fixes one or colours categories."""
        if not view.categorical and view.value_range is None:
            self.data_range = data_span(quantity, xp)

    def with_next_items(self, owner: str, work: Callable) -> None:
        """Run ``work(positions)`` (CuPy (n, 4) float32) the next time the device items are mapped: the
        draw's splat, or the next update's write. A pick rides on a mapping the frame makes anyway (each
        costs about 0.07 ms of host time); the owner's later call replaces its earlier one."""
        self._with_items[owner] = work

    def _run_work(self, positions) -> None:
        if not self._with_items:  # the usual frame: nothing queued, nothing made
            return
        work, self._with_items = self._with_items, {}
        for run in work.values():
            run(positions)

    def run_work_now(self) -> None:
        """Run the queued work on a mapping of its own, for a draw that maps nothing (impostors); dropped
        when the items cannot be mapped."""
        if not self._with_items:
            return
        try:
            with self.mapped_items():
                pass  # mapping runs the work
        except InteropError:
            self._with_items.clear()

    @contextmanager
    def mapped_items(self) -> Iterator[tuple]:
        """The items the last update wrote on the device, as CuPy (n, 4) float32 positions and (n,)
        uint32 quantities over the GL buffers, mapped on the current stream for the duration (the work
        ``with_next_items`` queued runs first)."""
        if self.path != DEVICE or self._registration is None:
            raise InteropError("the items were not written on the device")
        n = self.spheres.count
        with self._registration.mapped(current_stream_ptr()) as ((pos_ptr, pos_size), (q_ptr, q_size)):
            positions = cupy_view(pos_ptr, pos_size, (n, 4), "float32", self._registration)
            self._run_work(positions)
            yield positions, cupy_view(q_ptr, q_size, (n,), "uint32", self._registration)

    def _upload_from_host(self, view: PointsView) -> None:
        self._with_items.clear()  # the items are not on the device: nothing maps them
        positions, quantity = view.host()
        quantity = np.asarray(quantity, np.int32 if view.categorical else np.float32)
        self._take_range(view, quantity, np)
        if view.mask is not None:
            quantity = quantity.copy()  # the scene's own array stays as it is
            quantity.view(np.uint32)[np.asarray(view.mask, bool)] = MARKED
        if self._registration is not None and len(positions) > self.spheres.capacity:
            self._unregister()  # upload() is about to reallocate the registered buffers
        self.spheres.upload(positions, quantity)
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
