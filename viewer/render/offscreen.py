"""Offscreen framebuffers: reading their pixels (top row first), for PNG output, and showing them in a
window."""

from __future__ import annotations

import moderngl
import numpy as np


class Offscreen:
    """An RGBA8 + depth framebuffer of a fixed size."""

    def __init__(self, ctx: moderngl.Context, size: tuple[int, int]):
        self.ctx = ctx
        self.size = (int(size[0]), int(size[1]))
        self.color = ctx.texture(self.size, 4)
        self.depth = ctx.depth_renderbuffer(self.size)
        self.fbo = ctx.framebuffer(color_attachments=[self.color], depth_attachment=self.depth)
        # The picture alone, for copies out: moderngl's copy_framebuffer blits depth too, and a depth
        # format other than the window's (Mesa: our DEPTH24 against the window's DEPTH24_STENCIL8) makes
        # GL refuse the whole blit (GL_INVALID_OPERATION, nothing copied). Without a depth attachment on
        # the source the depth part is ignored.
        self.picture = ctx.framebuffer(color_attachments=[self.color])

    def show(self, screen: moderngl.Framebuffer) -> None:
        """Copy the picture into ``screen`` (the window's framebuffer, of the same size), bottom-left aligned."""
        self.ctx.copy_framebuffer(screen, self.picture)

    def read_rgb(self) -> np.ndarray:
        """(height, width, 3) uint8, first row at the top of the image."""
        width, height = self.size
        data = self.fbo.read(viewport=(0, 0, width, height), components=3, alignment=1)
        return np.frombuffer(data, dtype=np.uint8).reshape(height, width, 3)[::-1].copy()

    def release(self) -> None:
        for obj in (self.picture, self.fbo, self.color, self.depth):
            obj.release()
