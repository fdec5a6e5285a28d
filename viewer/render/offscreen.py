"""Offscreen framebuffers and reading their pixels (top row first), for PNG output."""

from __future__ import annotations

import moderngl
import numpy as np


class Offscreen:
    """An RGBA8 + depth framebuffer of a fixed size."""

    def __init__(self, ctx: moderngl.Context, size: tuple[int, int]):
        self.size = (int(size[0]), int(size[1]))
        self.color = ctx.texture(self.size, 4)
        self.depth = ctx.depth_renderbuffer(self.size)
        self.fbo = ctx.framebuffer(color_attachments=[self.color], depth_attachment=self.depth)

    def read_rgb(self) -> np.ndarray:
        """(height, width, 3) uint8, first row at the top of the image."""
        width, height = self.size
        data = self.fbo.read(viewport=(0, 0, width, height), components=3, alignment=1)
        return np.frombuffer(data, dtype=np.uint8).reshape(height, width, 3)[::-1].copy()

    def release(self) -> None:
        for obj in (self.fbo, self.color, self.depth):
            obj.release()
