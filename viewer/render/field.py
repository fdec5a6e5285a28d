"""The field view kind: a 2D scalar grid drawn as a colour-mapped texture over its extent.

The values live in an R32F texture, one texel per cell (nearest filtering: zoomed in, a cell is a
square). A ``FieldView`` on the GPU (``view.write`` set) writes into a CuPy float32 (rows, columns)
view of a GL pixel-unpack buffer registered with CUDA: map, write, unmap, then GL copies the
buffer into the texture; nothing passes through the host. Otherwise, or when interop cannot be
set up here, ``view.host()`` is uploaded and the reason kept in ``fallback_reason``.

The colour map is the view's (``FieldView.colormap``, from assets/colormaps.toml); NaN cells are
drawn in a highlight colour far from every colour of the map. The map spans the range fixed from
the panel (``Scene.color_scales``), else the values' own range, taken every frame (on the GPU two
numbers come back, not the field). In block-colour mode the view's
tiles (``FieldView.tiles``) are outlined, their halos tinted.
"""

from __future__ import annotations

from dataclasses import replace

import moderngl
import numpy as np

from sim.contract import FieldView, Legend
from sim.framework.scales import data_span
from viewer.gpu.interop import GLBufferRegistration, InteropError, InteropFeed, cupy_view, current_stream_ptr
from viewer.render.camera import OrbitCamera
from viewer.render.colormaps import ColourTexture, highlight_color
from viewer.render.shaders import load_program

DEVICE, HOST = "CUDA–GL interop", "host upload"
TILE_COLOR = (0.95, 0.95, 0.95)
HALO_COLOR = (0.3, 0.85, 1.0)


def field_camera(view: FieldView) -> OrbitCamera:
    """Top view of the field's extent; zooms in down to a couple of cells."""
    x0, y0, x1, y1 = view.extent
    rows, cols = view.shape
    return OrbitCamera.plan_view(view.extent, min((x1 - x0) / max(cols, 1), (y1 - y0) / max(rows, 1)))


class FieldFeed(InteropFeed):
    """The view's values into the field texture: through a CUDA-mapped pixel buffer or from the host."""

    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.texture: moderngl.Texture | None = None
        self.buffer: moderngl.Buffer | None = None  # the pixel-unpack buffer CUDA writes
        self.fallback_reason: str | None = None  # why a device view goes through the host
        self.path: str | None = None  # how the last frame's values arrived (DEVICE or HOST)
        self.data_range: tuple[float, float] = (0.0, 1.0)  # lowest and highest value of the last frame
        self._registration: GLBufferRegistration | None = None

    def _reserve(self, shape: tuple[int, int]) -> None:
        rows, cols = shape
        if self.texture is not None and self.texture.size == (cols, rows):
            return
        self._unregister()
        for obj in (self.texture, self.buffer):
            if obj is not None:
                obj.release()
        self.buffer = None
        self.texture = self.ctx.texture((cols, rows), 1, dtype="f4")
        self.texture.filter = (moderngl.NEAREST, moderngl.NEAREST)
        self.texture.repeat_x = self.texture.repeat_y = False

    def update(self, view: FieldView) -> None:
        rows, cols = (int(v) for v in view.shape)
        if rows < 1 or cols < 1:
            raise ValueError(f"a field needs at least one cell, got shape {view.shape}")
        self._reserve((rows, cols))
        if view.on_device and self.fallback_reason is None:
            try:
                self._write_on_device(view, rows, cols)
                self.path = DEVICE
                return
            except InteropError as exc:
                self.fall_back(str(exc))
        values = np.ascontiguousarray(view.host(), dtype=np.float32)
        if values.shape != (rows, cols):
            raise ValueError(f"field values have shape {values.shape}, the view says {(rows, cols)}")
        self.texture.write(values, alignment=4)
        self.data_range = data_span(values)
        self.path = HOST

    def _write_on_device(self, view: FieldView, rows: int, cols: int) -> None:
        if self.buffer is None:
            self.buffer = self.ctx.buffer(reserve=rows * cols * 4)
        if self._registration is None or not self._registration.matches([self.buffer]):
            self._unregister()
            self._registration = GLBufferRegistration([self.buffer])
        with self._registration.mapped(current_stream_ptr()) as [(ptr, size)]:
            values = cupy_view(ptr, size, (rows, cols), "float32", self._registration)
            view.write(values)
            import cupy

            self.data_range = data_span(values, cupy)  # two numbers back, not the field
        self.texture.write(self.buffer, alignment=4)  # GL copies buffer -> texture on the device

    def release(self) -> None:
        """Unregister from CUDA, then free the GL objects."""
        try:
            self._unregister()
        finally:
            for obj in (self.texture, self.buffer):
                if obj is not None:
                    obj.release()
            self.texture = self.buffer = None


class FieldRenderer:
    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.program = load_program(ctx, "field")
        self.feed = FieldFeed(ctx)
        self._quad: moderngl.Buffer | None = None
        self._vao: moderngl.VertexArray | None = None
        self._colormap = ColourTexture(ctx, moderngl.LINEAR)
        self.extent: tuple[float, ...] | None = None
        self.view: FieldView | None = None
        self.show_tiles = False
        self.value_range: tuple[float, float] = (0.0, 1.0)  # what the colour map spans now
        self.fixed = False  # whether that range was fixed from the panel (else the data's)

    def show(self, view: FieldView, block_colors: bool = False, fixed: tuple[float, float] | None = None) -> bool:
        """Take the view's values (and, in block-colour mode, its tiles) for the next draws, coloured
        over ``fixed`` or else the values' own range; True when the extent changed: the camera should
        frame it anew."""
        self.feed.update(view)
        self._set_colormap(view.colormap)
        self.view = view
        self.fixed = fixed is not None
        self.value_range = tuple(float(v) for v in fixed) if fixed is not None else self.feed.data_range
        self.show_tiles = block_colors and view.tiles is not None
        extent = tuple(float(v) for v in view.extent)
        if extent == self.extent:
            return False
        self._set_extent(extent)
        return True

    @property
    def legend(self) -> Legend | None:
        """The view's legend over the range the colours span now."""
        if self.view is None:
            return None
        lo, hi = self.value_range
        return replace(self.view.legend, lo=lo, hi=hi, colormap=self.view.legend.colormap or self.view.colormap)

    def _set_colormap(self, name: str) -> None:
        if name == self._colormap.name:
            return
        self._colormap.set_colormap(name)
        self.program["u_highlight"].value = highlight_color(name)

    def _set_extent(self, extent: tuple[float, ...]) -> None:
        x0, y0, x1, y1 = extent
        quad = np.array([[x0, y0, 0, 0, 0], [x1, y0, 0, 1, 0], [x0, y1, 0, 0, 1], [x1, y1, 0, 1, 1]], "f4")
        for obj in (self._vao, self._quad):
            if obj is not None:
                obj.release()
        self._quad = self.ctx.buffer(quad.tobytes())
        self._vao = self.ctx.vertex_array(self.program, [(self._quad, "3f 2f", "in_position", "in_uv")])
        self.extent = extent

    def draw(self, view_matrix: np.ndarray, proj: np.ndarray) -> None:
        if self.view is None:
            return
        program, field = self.program, self.view
        program["u_view"].write(view_matrix.T.astype("f4").tobytes())
        program["u_proj"].write(proj.T.astype("f4").tobytes())
        program["u_range"].value = self.value_range
        rows, cols = field.shape
        program["u_shape"].value = (float(cols), float(rows))
        program["u_tiles"].value = self.show_tiles
        if self.show_tiles:
            tiles = field.tiles
            program["u_tile_size"].value = tuple(float(max(v, 1)) for v in tiles.size)
            program["u_tile_origin"].value = tuple(float(v) for v in tiles.origin)
            program["u_halo"].value = float(tiles.halo)
            program["u_tile_color"].value = TILE_COLOR
            program["u_halo_color"].value = HALO_COLOR
        self.feed.texture.use(0)
        self._colormap.use(1)
        program["u_field"].value = 0
        program["u_colormap"].value = 1
        self._vao.render(moderngl.TRIANGLE_STRIP)

    def release(self) -> None:
        try:
            self.feed.release()
        finally:
            self._colormap.release()
            for obj in (self._vao, self._quad, self.program):
                if obj is not None:
                    obj.release()
