"""The id render pass: the item a ray hits first, from the positions already in a GL buffer.

Every item is drawn as one point into a 1x1 RGBA8 + depth target (``shaders/pick.glsl``): the
points the ray misses are culled, the others land at the depth of their hit carrying their index,
and the depth test keeps the nearest. Nothing of the state is copied to the host: the pass reads
the buffer the items were drawn from (written by CUDA on the GPU backend), and four bytes come back.
``request`` starts the read into a pixel buffer without waiting; ``collect`` (a frame later) maps
it, so the pick costs the frame no stall.
"""

from __future__ import annotations

import moderngl
import numpy as np

from viewer.render.shaders import load_program


class IdPass:
    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.program = load_program(ctx, "pick")
        self.color = ctx.texture((1, 1), 4)
        self.depth = ctx.depth_renderbuffer((1, 1))
        self.fbo = ctx.framebuffer(color_attachments=[self.color], depth_attachment=self.depth)
        self.result = ctx.buffer(reserve=4)
        self._vao: moderngl.VertexArray | None = None
        self._vao_buffer: int | None = None
        self.pending = False

    def _vertex_array(self, positions: moderngl.Buffer) -> moderngl.VertexArray:
        if self._vao is None or self._vao_buffer != positions.glo:
            if self._vao is not None:
                self._vao.release()
            self._vao = self.ctx.vertex_array(self.program, [(positions, "4f", "in_sphere")])
            self._vao_buffer = positions.glo
        return self._vao

    def request(self, positions: moderngl.Buffer, count: int, origin, direction, far: float) -> None:
        """Draw the pass for the ray (origin, unit direction) over ``count`` items of ``positions``
        ((x, y, z, radius) float32 each) and start reading its pixel back."""
        ctx = self.ctx
        previous = ctx.fbo
        self.fbo.use()
        self.fbo.viewport = (0, 0, 1, 1)
        self.fbo.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
        if count > 0:
            program = self.program
            program["u_origin"].value = tuple(float(v) for v in origin)
            program["u_dir"].value = tuple(float(v) for v in direction)
            program["u_far"].value = float(max(far, 1e-6))
            ctx.enable(moderngl.DEPTH_TEST)
            ctx.disable(moderngl.BLEND)
            self._vertex_array(positions).render(moderngl.POINTS, vertices=int(count))
            ctx.disable(moderngl.DEPTH_TEST)
        self.fbo.read_into(self.result, viewport=(0, 0, 1, 1), components=4, alignment=1)
        self.pending = True
        if previous is not None:
            previous.use()

    def collect(self) -> int | None:
        """The item of the last request (None: the ray hit nothing); None too if none was made."""
        if not self.pending:
            return None
        self.pending = False
        value = int.from_bytes(bytes(np.frombuffer(self.result.read(), np.uint8)), "little")
        return value - 1 if value else None

    def pick(self, positions: moderngl.Buffer, count: int, origin, direction, far: float) -> int | None:
        """Request and collect at once (waits for the GPU)."""
        self.request(positions, count, origin, direction, far)
        return self.collect()

    def release(self) -> None:
        for obj in (self._vao, self.fbo, self.color, self.depth, self.result, self.program):
            if obj is not None:
                obj.release()
        self._vao = None
