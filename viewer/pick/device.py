"""The device's pick: the first sphere a ray meets, found by CUDA over the positions the device wrote
into the renderer's GL buffer (``raytest.cu``, the twin of ``ray.ray_hit``).

``request`` launches the test on the current stream and starts copying its 16-byte answer into
pinned host memory; ``collect`` (a frame later) reads it, so a pick costs the frame two small
launches and no host wait: nothing of the state is copied to the host.
"""

from __future__ import annotations

import numpy as np

from sim.gpu import cuda
from sim.gpu.render_builds import RAY_TEST

BLOCK = 256
NOTHING = np.uint64(0xFFFFFFFFFFFFFFFF)


class DeviceRayTest:
    def __init__(self):
        import cupy

        self.device = cupy.cuda.Device().id
        self.best = cupy.empty(2, cupy.uint64)  # smallest hit distance's bits, then the lowest index at it
        self.host = cupy.cuda.alloc_pinned_memory(16)
        self.answer = np.frombuffer(self.host, np.uint64, 2)
        self.done = None  # the event after the copy of the last request; None: nothing requested

    def request(self, spheres, origin, direction) -> None:
        """Start the test of the ray (origin, unit direction) against the (n, 4) float32 CuPy array of
        spheres (x, y, z, radius) on the current stream."""
        import cupy

        stream = cupy.cuda.get_current_stream()
        n = int(spheres.shape[0])
        runtime = cupy.cuda.runtime
        runtime.memsetAsync(self.best.data.ptr, 0xFF, 16, stream.ptr)
        if n:
            k = cuda.kernels(RAY_TEST, self.device)
            args = (
                spheres,
                np.int32(n),
                *(np.float64(v) for v in origin),
                *(np.float64(v) for v in direction),
                self.best,
            )
            for name in ("nearest_hit", "first_of_nearest"):
                k[name]((cuda.ceil_div(n, BLOCK),), (BLOCK,), args)
        runtime.memcpyAsync(self.answer.ctypes.data, self.best.data.ptr, 16, runtime.memcpyDeviceToHost, stream.ptr)
        self.done = stream.record()

    def collect(self) -> tuple[int, float] | None:
        """(index, distance) of the last request (None: the ray met nothing, or none was made); waits only
        if the request has not finished yet."""
        if self.done is None:
            return None
        self.done.synchronize()
        self.done = None
        if self.answer[1] == NOTHING:
            return None
        return int(self.answer[1]), float(self.answer[:1].view(np.float64)[0])
