"""CUDA–OpenGL interop on an NVIDIA GPU: GL buffers written by CUDA read back exactly, survive a
reallocation, and a GPU scene drawn through interop looks as it does through host uploads.

Run on the GPU machine: ``python -m pytest -m gpu tests/test_viewer_interop.py`` (no display
needed: standalone EGL contexts).
"""

import dataclasses

import numpy as np
import pytest
from gl_support import HostOnly

import viewer  # noqa: F401  first: it picks NVIDIA's EGL before any context loads libEGL
from sim.gpu.backend import gpu_status

pytestmark = pytest.mark.gpu


@pytest.fixture
def cp():
    if not gpu_status().available:
        pytest.skip(f"needs a GPU: {gpu_status().reason}")
    import cupy

    return cupy


def _round_trip(gl, cp, n: int, seed: int) -> None:
    from viewer.gpu.interop import GLBufferRegistration, cupy_view, current_stream_ptr

    buffer = gl.buffer(reserve=n * 16)
    registration = GLBufferRegistration([buffer])
    try:
        expected = cp.random.default_rng(seed).random((n, 4), dtype=cp.float32)
        with registration.mapped(current_stream_ptr()) as [(ptr, size)]:
            assert size >= n * 16
            mapped = cupy_view(ptr, size, (n, 4), "float32", registration)
            mapped[...] = expected
        got = np.frombuffer(buffer.read(), np.float32).reshape(n, 4)
        np.testing.assert_array_equal(got, cp.asnumpy(expected))
    finally:
        registration.close()
        buffer.release()


def test_gl_buffer_holds_exactly_what_cuda_wrote(gl, cp):
    _round_trip(gl, cp, 4096, seed=1)


def test_round_trip_after_a_larger_buffer(gl, cp):
    _round_trip(gl, cp, 1000, seed=2)
    _round_trip(gl, cp, 250_000, seed=3)


class DeviceBalls:
    """A device view reduced to what the feed reads: ``write`` fills the mapped GL buffers."""

    def __init__(self, cp, n: int, seed: int):
        rng = cp.random.default_rng(seed)
        self.pos = rng.random((n, 4), dtype=cp.float32)
        self.speed = rng.random(n, dtype=cp.float32)

    @property
    def n(self) -> int:
        return self.pos.shape[0]

    def view(self):
        from sim.contract import PointsView, Trough

        def write(pos, speed):
            assert pos.shape == (self.n, 4) and speed.shape == (self.n,)
            pos[...] = self.pos
            speed[...] = self.speed

        def host():
            raise AssertionError("a device view must not be copied to the host")

        return PointsView(self.n, 3, Trough(40.0, -80.0, 80.0), 1.0, host=host, write=write)


def test_feed_reregisters_when_the_renderer_grows(gl, cp):
    from viewer.render.points.feed import DEVICE, PointsFeed
    from viewer.render.points.spheres import SphereRenderer

    spheres = SphereRenderer(gl)
    feed = PointsFeed(spheres)
    try:
        for n, seed in ((500, 4), (300_000, 5), (1000, 6)):
            scene = DeviceBalls(cp, n, seed)
            feed.update(scene.view())
            assert feed.fallback_reason is None and feed.path == DEVICE
            assert spheres.count == n
            for buffer, expected in ((spheres.position_buffer, scene.pos), (spheres.quantity_buffer, scene.speed)):
                got = np.frombuffer(buffer.read(size=expected.nbytes), np.float32).reshape(expected.shape)
                np.testing.assert_array_equal(got, cp.asnumpy(expected))
            assert feed.data_range == (float(scene.speed.min()), float(scene.speed.max()))
    finally:
        feed.close()
        spheres.release()


class CountingWrites(HostOnly):
    """Counts the view's device writes; a host read fails the test."""

    def __init__(self, scene):
        super().__init__(scene)
        self.writes = 0

    def view(self, color_mode):
        view = self._scene.view(color_mode)

        def write(*arrays):
            self.writes += 1
            view.write(*arrays)

        def host():
            raise AssertionError("an interop frame must not copy the view to the host")

        return dataclasses.replace(view, write=write, host=host)


def test_gpu_scene_looks_the_same_through_interop_and_host_uploads(cp):
    from sim import create_scene
    from viewer.headless import render_pixels
    from viewer.render.camera import OrbitCamera

    scene = create_scene("balls", preset="t", backend="gpu", seed=1)
    for _ in range(20):
        scene.advance_frame()
    camera = OrbitCamera.for_trough(scene.trough)
    mode = next(iter(scene.color_modes))
    spy = CountingWrites(scene)
    through_interop = render_pixels(spy, 800, 500, camera=camera, color_mode=mode).astype(int)
    assert spy.writes == 1
    through_host = render_pixels(HostOnly(scene), 800, 500, camera=camera, color_mode=mode).astype(int)
    differing = np.any(np.abs(through_interop - through_host) > 2, axis=2)
    assert differing.sum() <= 20, f"{differing.sum()} pixels differ"
    assert through_interop.std() > 10, "the picture should show balls and trough"
