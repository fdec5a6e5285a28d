"""Spheres on the device drawn by CUDA: small ones splatted per pixel, big ones as GL impostors.

The GPUs this targets (H100/H200) run the graphics pipeline on a few of their SMs, where a
million instanced impostors cost their vertex and primitive work however few pixels each covers.
``splat`` runs ``splat.cu`` over the balls already in the GL buffers: each ball no wider than
``MAX_BOX`` pixels is ray-cast by one thread into an image of (depth, colour) kept per pixel by a
64-bit atomicMin; the others are copied to a list. ``draw`` then writes that image, read as a
storage buffer, into the framebuffer with its depth, and draws the list as impostors through an
indirect draw whose instance count the kernel wrote: nothing comes back to the host.
"""

from __future__ import annotations

import moderngl
import numpy as np

from sim.gpu import cuda
from sim.gpu.render_builds import SPLAT
from viewer.gpu.interop import GLBufferRegistration, RegistrationHolder, cupy_view, current_stream_ptr
from viewer.render.points.colours import PointColours
from viewer.render.points.spheres import BYTES_PER_ITEM, QUANTITY_BYTES, SphereRenderer
from viewer.render.shaders import load_program

MAX_BOX = 16  # pixels: wider balls go to the impostors (one thread would shade too many pixels)
BLOCK = 256
# A DrawArraysIndirectCommand: 4 vertices (the quad's strip), instance count, first, base instance.
COMMAND = np.array([4, 0, 0, 0], dtype=np.uint32)


def gl_problem(ctx: moderngl.Context) -> str | None:
    """Why this GL context cannot draw the splat (None when it can)."""
    if ctx.version_code >= 430:
        return None
    missing = [
        name
        for name in ("GL_ARB_multi_draw_indirect", "GL_ARB_shader_storage_buffer_object")
        if name not in ctx.extensions
    ]
    return f"GL {ctx.version_code} lacks {' and '.join(missing)} (GL 4.3)" if missing else None


class SphereSplat(RegistrationHolder):
    def __init__(self, ctx: moderngl.Context, spheres: SphereRenderer):
        self.ctx = ctx
        self.spheres = spheres
        self.resolve = load_program(ctx, "splat_resolve")
        self._fullscreen = ctx.vertex_array(self.resolve, [])
        self.command = ctx.buffer(COMMAND.tobytes())
        self.size = (0, 0)
        self.capacity = 0
        self.image_buffer: moderngl.Buffer | None = None  # what CUDA writes, read by the resolve
        self.big_positions: moderngl.Buffer | None = None
        self.big_quantity: moderngl.Buffer | None = None
        self._big_vao: moderngl.VertexArray | None = None
        self._registration: GLBufferRegistration | None = None
        self._command_template = None  # on the device, copied into the command each frame

    def _buffers(self) -> tuple:
        return self.image_buffer, self.big_positions, self.big_quantity, self.command

    def reserve(self, size: tuple[int, int], n: int) -> None:
        """An image of ``size`` pixels and an impostor list with room for all ``n`` balls."""
        if size != self.size:
            self._unregister()
            if self.image_buffer is not None:
                self.image_buffer.release()
            self.image_buffer = self.ctx.buffer(reserve=size[0] * size[1] * 8)
            self.size = size
        if n > self.capacity:
            self._unregister()
            for obj in (self._big_vao, self.big_positions, self.big_quantity):
                if obj is not None:
                    obj.release()
            capacity = max(int(n), 2 * self.capacity, 1024)
            self.big_positions = self.ctx.buffer(reserve=capacity * BYTES_PER_ITEM)
            self.big_quantity = self.ctx.buffer(reserve=capacity * QUANTITY_BYTES)
            self._big_vao = self.spheres.vertex_array(self.big_positions, self.big_quantity)
            self.capacity = capacity

    def splat(
        self,
        positions,
        quantity,
        colours: PointColours,
        view: np.ndarray,
        proj: np.ndarray,
        light_dir_view: np.ndarray,
        near: float,
        size: tuple[int, int],
        min_radius: float = 0.0,
    ) -> None:
        """Run the kernel over CuPy (n, 4) ``positions`` and (n,) ``quantity``, coloured as ``colours``
        says, for this camera and size; no ball is drawn smaller than ``min_radius`` pixels (the
        impostors' ``set_min_radius``)."""
        import cupy

        n = positions.shape[0]
        self.reserve(size, n)
        if self._registration is None:
            self._registration = GLBufferRegistration(self._buffers())
        if self._command_template is None:
            self._command_template = cupy.asarray(COMMAND)
        stream = current_stream_ptr()
        width, height = size
        f = np.float32
        with self._registration.mapped(stream) as [
            (image_ptr, image_size),
            (pos_ptr, pos_size),
            (q_ptr, q_size),
            (command_ptr, command_size),
        ]:
            command = cupy_view(command_ptr, command_size, (4,), "uint32", self._registration)
            command[...] = self._command_template
            cupy.cuda.runtime.memsetAsync(image_ptr, 0xFF, width * height * 8, stream)  # no ball: all ones
            if n == 0:
                return
            args = (
                positions,
                quantity,
                np.int32(n),
                *(f(x) for x in view[:3].ravel()),
                f(proj[0, 0]),
                f(proj[0, 2]),
                f(proj[1, 1]),
                f(proj[1, 2]),
                f(proj[2, 2]),
                f(proj[2, 3]),
                f(near),
                *(f(x) for x in light_dir_view),
                np.int32(width),
                np.int32(height),
                np.int32(MAX_BOX),
                f(min_radius),
                *colours.kernel_args(),
                cupy_view(image_ptr, image_size, (height, width), "uint64", self._registration),
                cupy_view(pos_ptr, pos_size, (self.capacity, 4), "float32", self._registration),
                cupy_view(q_ptr, q_size, (self.capacity,), "uint32", self._registration),
                command,
            )
            cuda.kernel(SPLAT, cupy.cuda.Device().id)((cuda.ceil_div(n, BLOCK),), (BLOCK,), args)

    def draw(self, view: np.ndarray, proj: np.ndarray, light_dir_view: np.ndarray, near: float) -> None:
        """The last splat into the current framebuffer (depth test on), then the big balls."""
        self.image_buffer.bind_to_storage_buffer(0)
        self.resolve["u_width"].value = self.size[0]
        self._fullscreen.render(moderngl.TRIANGLES, vertices=3)
        self.spheres.set_camera(view, proj, light_dir_view, near)
        self._big_vao.render_indirect(self.command, moderngl.TRIANGLE_STRIP, count=1)

    def release(self) -> None:
        """Unregister from CUDA, then free the GL objects."""
        try:
            self._unregister()
        finally:
            for obj in (
                self._big_vao,
                self.big_positions,
                self.big_quantity,
                self.image_buffer,
                self.command,
                self._fullscreen,
                self.resolve,
            ):
                if obj is not None:
                    obj.release()
