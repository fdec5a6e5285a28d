"""Instanced sphere impostors for (n, 4) arrays of spheres (3D points) or discs (2D points, seen from above).

Positions (x, y, z, radius) and the quantity each item is coloured by (32 bits: ``colours.py``)
live in two GL buffers of their own so that a caller, e.g. a CUDA backend mapping GL buffers, can
fill them directly instead of calling ``upload``; then call ``set_count`` with the number of valid
balls. The colouring's uniforms and textures are bound by ``PointColours.bind``.
"""

from __future__ import annotations

import moderngl
import numpy as np

from viewer.render.shaders import load_program

BYTES_PER_ITEM = 16  # four float32 per ball: its position and radius
QUANTITY_BYTES = 4  # one 32-bit quantity per ball

# A square around the unit circle, one triangle strip. (A hexagon covers 13% fewer pixels but
# draws markedly slower on llvmpipe: twice the triangles to set up.)
_CORNERS = np.array([[-1, -1], [1, -1], [-1, 1], [1, 1]], dtype="f4")


class SphereRenderer:
    def __init__(self, ctx: moderngl.Context, capacity: int = 1024):
        self.ctx = ctx
        self.program = load_program(ctx, "spheres")
        self.set_min_radius(0.0, 1)
        self._corners = ctx.buffer(_CORNERS.tobytes())
        self._count = 0
        self._capacity = 0
        self.position_buffer: moderngl.Buffer | None = None
        self.quantity_buffer: moderngl.Buffer | None = None
        self._vao: moderngl.VertexArray | None = None
        self.reserve(capacity)

    @property
    def capacity(self) -> int:
        """How many balls the buffers hold without reallocating."""
        return self._capacity

    @property
    def count(self) -> int:
        return self._count

    def reserve(self, n: int) -> bool:
        """Make room for ``n`` balls; returns True when the buffers were reallocated (new GL names)."""
        if n <= self._capacity:
            return False
        capacity = max(int(n), 2 * self._capacity, 1024)
        for buf in (self.position_buffer, self.quantity_buffer, self._vao):
            if buf is not None:
                buf.release()
        self.position_buffer = self.ctx.buffer(reserve=capacity * BYTES_PER_ITEM, dynamic=True)
        self.quantity_buffer = self.ctx.buffer(reserve=capacity * QUANTITY_BYTES, dynamic=True)
        self._vao = self.vertex_array(self.position_buffer, self.quantity_buffer)
        self._capacity = capacity
        return True

    def vertex_array(self, positions: moderngl.Buffer, quantities: moderngl.Buffer) -> moderngl.VertexArray:
        """Impostors for the balls of two buffers laid out like this renderer's own."""
        return self.ctx.vertex_array(
            self.program,
            [
                (self._corners, "2f", "in_corner"),
                (positions, "4f/i", "in_sphere"),
                (quantities, "1u/i", "in_quantity"),
            ],
        )

    def set_count(self, n: int) -> None:
        if not 0 <= n <= self._capacity:
            raise ValueError(f"count {n} outside the buffer capacity {self._capacity}")
        self._count = int(n)

    def upload(self, positions: np.ndarray, quantity: np.ndarray) -> None:
        """Copy (n, 4) float32 positions+radii and (n,) 32-bit quantities into the GL buffers."""
        positions = np.ascontiguousarray(positions, dtype=np.float32)
        quantity = np.ascontiguousarray(quantity)
        if (
            positions.ndim != 2
            or positions.shape[1] != 4
            or quantity.shape != positions.shape[:1]
            or quantity.itemsize != QUANTITY_BYTES
        ):
            raise ValueError(
                f"expected (n, 4) positions and n 32-bit quantities, got {positions.shape} and "
                f"{quantity.shape} {quantity.dtype}"
            )
        n = positions.shape[0]
        self.reserve(n)
        if n:
            self.position_buffer.write(positions)
            self.quantity_buffer.write(quantity)
        self._count = n

    def set_camera(self, view: np.ndarray, proj: np.ndarray, light_dir_view: np.ndarray, near: float) -> None:
        self.program["u_near"].value = float(near)
        self.program["u_view"].write(view.T.astype("f4").tobytes())
        self.program["u_proj"].write(proj.T.astype("f4").tobytes())
        self.program["u_light_dir"].value = tuple(float(x) for x in light_dir_view)

    def set_min_radius(self, pixels: float, viewport_height: int) -> None:
        """Draw no ball smaller than ``pixels`` in radius on a view ``viewport_height`` pixels high
        (0: every ball at its own size)."""
        self.program["u_min_radius"].value = float(pixels)
        self.program["u_viewport_height"].value = float(max(viewport_height, 1))

    def draw(self, view: np.ndarray, proj: np.ndarray, light_dir_view: np.ndarray, near: float) -> None:
        if self._count == 0:
            return
        self.set_camera(view, proj, light_dir_view, near)
        self._vao.render(moderngl.TRIANGLE_STRIP, vertices=len(_CORNERS), instances=self._count)

    def release(self) -> None:
        for obj in (self._vao, self.position_buffer, self.quantity_buffer, self._corners, self.program):
            if obj is not None:
                obj.release()
