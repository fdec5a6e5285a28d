"""Reading frames back from GL without stalling: a ring of pixel buffer objects.

``PixelRing.read(fbo, viewport)`` asks GL to copy the framebuffer's pixels into the next buffer of
the ring (``glReadPixels`` into a PIXEL_PACK buffer returns at once; the copy runs on the GPU after
the frame's drawing) and hands back the frame read ``depth - 1`` calls earlier, whose copy has long
finished, so mapping it does not wait. ``drain()`` returns the frames still in the ring, oldest
first. Frames come back as (height, width, 3) uint8, top row first, with whatever the caller
attached to them (e.g. how many times the video should show them).
"""

from __future__ import annotations

from collections import deque

import moderngl
import numpy as np

DEPTH = 3  # buffers in the ring: a frame is mapped two frames after it was drawn


class PixelRing:
    def __init__(self, ctx: moderngl.Context, size: tuple[int, int], depth: int = DEPTH):
        self.ctx = ctx
        self.size = (int(size[0]), int(size[1]))
        width, height = self.size
        self._buffers = [ctx.buffer(reserve=width * height * 3) for _ in range(max(int(depth), 1))]
        self._pending: deque[tuple[moderngl.Buffer, object]] = deque()
        self._next = 0

    def read(
        self, fbo: moderngl.Framebuffer, origin: tuple[int, int] = (0, 0), tag: object = None
    ) -> tuple[np.ndarray, object] | None:
        """Start reading ``size`` pixels of ``fbo`` from ``origin`` (bottom-left, GL pixels); returns
        (pixels, tag) of the oldest read when the ring is full, else None."""
        ready = self._pop() if len(self._pending) == len(self._buffers) else None
        buffer = self._buffers[self._next]
        self._next = (self._next + 1) % len(self._buffers)
        fbo.read_into(buffer, viewport=(int(origin[0]), int(origin[1]), *self.size), components=3, alignment=1)
        self._pending.append((buffer, tag))
        return ready

    def drain(self) -> list[tuple[np.ndarray, object]]:
        """Every frame still in the ring, oldest first."""
        out = []
        while self._pending:
            out.append(self._pop())
        return out

    def _pop(self) -> tuple[np.ndarray, object]:
        buffer, tag = self._pending.popleft()
        width, height = self.size
        pixels = np.frombuffer(buffer.read(), dtype=np.uint8).reshape(height, width, 3)
        return pixels[::-1].copy(), tag  # GL's first row is the bottom one

    def release(self) -> None:
        self._pending.clear()
        for buffer in self._buffers:
            buffer.release()
        self._buffers = []
