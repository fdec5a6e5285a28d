"""The outline of a 2D points view's box: the square [0, side]^2 at z = 0, drawn as a line loop."""

from __future__ import annotations

import moderngl
import numpy as np

from viewer.render.shaders import load_program

OUTLINE_COLOR = (0.72, 0.78, 0.86, 1.0)


class BoxOutline:
    def __init__(self, ctx: moderngl.Context, side: float):
        self.side = float(side)
        self.program = load_program(ctx, "outline")
        corners = np.array([[0, 0, 0], [side, 0, 0], [side, side, 0], [0, side, 0]], dtype="f4")
        self._vbo = ctx.buffer(corners.tobytes())
        self._vao = ctx.vertex_array(self.program, [(self._vbo, "3f", "in_position")])

    def draw(self, view: np.ndarray, proj: np.ndarray) -> None:
        self.program["u_view"].write(view.T.astype("f4").tobytes())
        self.program["u_proj"].write(proj.T.astype("f4").tobytes())
        self.program["u_color"].value = OUTLINE_COLOR
        self._vao.render(moderngl.LINE_LOOP)

    def release(self) -> None:
        for obj in (self._vao, self._vbo, self.program):
            obj.release()
