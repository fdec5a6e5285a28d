"""The trough (lower half of a cylinder along z) and a floor grid beneath it."""

from __future__ import annotations

import itertools
import math

import moderngl
import numpy as np

from viewer.render.shaders import load_program


def half_cylinder_mesh(radius: float, z_min: float, z_max: float, segments: int = 96) -> np.ndarray:
    """Triangles (x, y, z, nx, ny, nz) for the surface y <= 0 of a cylinder with its axis on z.

    Normals point inwards, towards the axis, where the balls rest.
    """
    angles = np.linspace(math.pi, 2.0 * math.pi, segments + 1)
    verts = []
    for a0, a1 in itertools.pairwise(angles):
        quad = []
        for a in (a0, a1):
            c, s = math.cos(a), math.sin(a)
            for z in (z_min, z_max):
                quad.append((radius * c, radius * s, z, -c, -s, 0.0))
        p00, p01, p10, p11 = quad  # (angle, z) corners
        verts += [p00, p10, p11, p00, p11, p01]
    return np.array(verts, dtype="f4")


def grid_spacing(radius: float) -> float:
    """Grid lines about a quarter radius apart, on a 1-2-5 scale: 10 for the spec's trough."""
    target = max(radius / 4.0, 1e-3)
    decade = 10.0 ** math.floor(math.log10(target))
    return next(step * decade for step in (1.0, 2.0, 5.0, 10.0) if step * decade >= target * 0.999)


def floor_mesh(y: float, half_size: float) -> np.ndarray:
    h = half_size
    corners = [(-h, y, -h), (h, y, -h), (h, y, h), (-h, y, h)]
    order = [0, 2, 1, 0, 3, 2]
    return np.array([(*corners[i], 0.0, 1.0, 0.0) for i in order], dtype="f4")


class TroughRenderer:
    """Draws the trough as a translucent two-sided surface, and a floor grid below it."""

    trough_color = (0.45, 0.55, 0.68, 0.38)
    floor_color = (0.16, 0.17, 0.20, 0.85)

    def __init__(self, ctx: moderngl.Context, radius: float = 40.0, z_min: float = -80.0, z_max: float = 80.0):
        self.ctx = ctx
        self.program = load_program(ctx, "surface")
        self.floor_program = load_program(ctx, "surface", ("FLAT_SURFACE",))
        self.geometry = (radius, z_min, z_max)
        self._trough_vbo = ctx.buffer(half_cylinder_mesh(radius, z_min, z_max).tobytes())
        floor_y = -radius - 0.6 * radius
        self._floor_half = 2.5 * max(radius, 0.5 * (z_max - z_min))
        self._floor_vbo = ctx.buffer(floor_mesh(floor_y, self._floor_half).tobytes())
        self._trough_vao = self._vao(self.program, self._trough_vbo)
        self._floor_vao = self._vao(self.floor_program, self._floor_vbo)
        self._grid_spacing = grid_spacing(radius)

    def _vao(self, program: moderngl.Program, vbo: moderngl.Buffer) -> moderngl.VertexArray:
        return self.ctx.vertex_array(program, [(vbo, "3f 3f", "in_position", "in_normal")])

    @classmethod
    def for_trough(cls, ctx: moderngl.Context, trough) -> TroughRenderer:
        return cls(ctx, float(trough.radius), float(trough.z_min), float(trough.z_max))

    def _set_uniforms(
        self,
        program: moderngl.Program,
        view: np.ndarray,
        proj: np.ndarray,
        light_dir_view: np.ndarray,
        color,
        fade_radius: float,
    ) -> None:
        program["u_view"].write(view.T.astype("f4").tobytes())
        program["u_proj"].write(proj.T.astype("f4").tobytes())
        program["u_light_dir"].value = tuple(float(x) for x in light_dir_view)
        program["u_color"].value = color
        program["u_grid_axes"].value = (1.0, 0.0, 1.0)
        program["u_grid_spacing"].value = self._grid_spacing
        program["u_fade_radius"].value = fade_radius

    def draw_floor(self, view: np.ndarray, proj: np.ndarray, light_dir_view: np.ndarray) -> None:
        """Nearly opaque, blended for its faded rim: call after the balls, with depth writes on."""
        self._set_uniforms(self.floor_program, view, proj, light_dir_view, self.floor_color, self._floor_half)
        self._floor_vao.render(moderngl.TRIANGLES)

    def draw_trough(self, view: np.ndarray, proj: np.ndarray, light_dir_view: np.ndarray) -> None:
        """Translucent pass: call after the balls, with blending on and depth writes off."""
        self._set_uniforms(self.program, view, proj, light_dir_view, self.trough_color, 0.0)
        self._trough_vao.render(moderngl.TRIANGLES)

    def release(self) -> None:
        for obj in (
            self._trough_vao,
            self._floor_vao,
            self._trough_vbo,
            self._floor_vbo,
            self.program,
            self.floor_program,
        ):
            obj.release()
