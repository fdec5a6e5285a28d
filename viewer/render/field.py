"""The field view kind: a 2D scalar grid drawn through a colour map over its extent.

The values live in a GL buffer, one float32 a cell, row after row. Where the context reads storage
buffers in its fragment shaders (GL 4.3) and the field fits one, the shader reads that buffer
itself, cell by cell (nearest: zoomed in, a cell is a square); elsewhere GL copies the buffer into
an R32F texture first, every frame (10000² cells on an H200: a draw of 9.5 ms with the copy, 0.8
without). A ``FieldView`` on the GPU (``view.write`` set) writes into a CuPy float32 (rows, columns)
view of the buffer registered with CUDA: map, write, unmap; nothing passes through the host.
Otherwise, or when interop cannot be set up here, ``view.host()`` is uploaded and the reason kept
in ``fallback_reason``.

The colour map is the view's (``FieldView.colormap``, from assets/colormaps.toml); NaN cells are
drawn in a highlight colour far from every colour of the map. The map spans the range fixed from
the panel (``Scene.color_scales``, the view's ``value_range``), else the values' own range, taken
every frame (on the GPU two numbers come back, not the field). In block-colour mode the view's
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


def storage_limit(ctx: moderngl.Context) -> int:
    """The most bytes a fragment shader reads from one storage buffer here; 0 where it reads none."""
    if ctx.version_code < 430 and "GL_ARB_shader_storage_buffer_object" not in ctx.extensions:
        return 0
    # moderngl reads the limits of a 4.3 context only: a 3.3 one with the extension draws from the texture
    if int(ctx.info.get("GL_MAX_FRAGMENT_SHADER_STORAGE_BLOCKS") or 0) < 1:
        return 0
    return int(ctx.info.get("GL_MAX_SHADER_STORAGE_BLOCK_SIZE") or 0)


class FieldFeed(InteropFeed):
    """The view's values into the field's buffer, through CUDA or from the host, and from there into the
    texture where the shader cannot read the buffer itself (``in_storage`` False)."""

    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.storage_bytes = storage_limit(ctx)
        self.shape: tuple[int, int] | None = None  # rows, columns
        self.in_storage = False  # whether the shader reads the buffer itself (else the texture)
        self.buffer: moderngl.Buffer | None = None  # the values, row after row; CUDA writes it (made when first needed)
        self.texture: moderngl.Texture | None = None  # their copy, where the shader cannot read the buffer
        self.fallback_reason: str | None = None  # why a device view goes through the host
        self.path: str | None = None  # how the last frame's values arrived (DEVICE or HOST)
        self.data_range: tuple[float, float] = (0.0, 1.0)  # lowest and highest value of the last frame
        self._registration: GLBufferRegistration | None = None

    def _reserve(self, shape: tuple[int, int]) -> None:
        if shape == self.shape:
            return
        self._unregister()
        for obj in (self.texture, self.buffer):
            if obj is not None:
                obj.release()
        rows, cols = shape
        self.shape = shape
        self.in_storage = rows * cols * 4 <= self.storage_bytes
        self.buffer = self.texture = None
        if not self.in_storage:
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
        if self.in_storage:
            self.values_buffer().write(values)
        else:
            self.texture.write(values, alignment=4)
        self._take_range(view, values, np)
        self.path = HOST

    def values_buffer(self) -> moderngl.Buffer:
        """The buffer of the field's shape, made on first use: a host upload into the texture needs none."""
        if self.buffer is None:
            rows, cols = self.shape
            self.buffer = self.ctx.buffer(reserve=rows * cols * 4)
        return self.buffer

    def _write_on_device(self, view: FieldView, rows: int, cols: int) -> None:
        buffer = self.values_buffer()
        if self._registration is None or not self._registration.matches([buffer]):
            self._unregister()
            self._registration = GLBufferRegistration([buffer])
        with self._registration.mapped(current_stream_ptr()) as [(ptr, size)]:
            values = cupy_view(ptr, size, (rows, cols), "float32", self._registration)
            view.write(values)
            import cupy

            self._take_range(view, values, cupy)
        if not self.in_storage:
            self.texture.write(buffer, alignment=4)  # GL copies buffer -> texture on the device

    def _take_range(self, view: FieldView, values, xp) -> None:
        """The values' own range (on the GPU two numbers back, not the field), unless the view fixes one:
        then no pass over the field and no wait for it."""
        if view.value_range is None:
            self.data_range = data_span(values, xp)

    def bind(self) -> None:
        """The values where the shader reads them: storage buffer binding 0, or texture unit 0."""
        if self.in_storage:
            self.buffer.bind_to_storage_buffer(0)
        else:
            self.texture.use(0)

    def read(self) -> np.ndarray:
        """The values the shader reads, back on the host: float32 (rows, columns)."""
        source = self.buffer if self.in_storage else self.texture
        return np.frombuffer(source.read(), np.float32).reshape(self.shape)

    def release(self) -> None:
        """Unregister from CUDA, then free the GL objects."""
        try:
            self._unregister()
        finally:
            for obj in (self.texture, self.buffer):
                if obj is not None:
                    obj.release()
            self.texture = self.buffer = None
            self.shape = None  # a feed used again reserves anew


class FieldRenderer:
    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.feed = FieldFeed(ctx)
        # by whether the shader reads a storage buffer (else the texture): built when first drawn, each with
        # its vertex array over the extent's quad
        self._programs: dict[bool, moderngl.Program] = {}
        self._vaos: dict[bool, moderngl.VertexArray] = {}
        self._quad: moderngl.Buffer | None = None
        self._colormap = ColourTexture(ctx, moderngl.LINEAR)
        self._highlight = (1.0, 0.0, 1.0)  # set with the colour map
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
    def drawn_as(self) -> str:
        return "colour map over the values' buffer" if self.feed.in_storage else "colour-mapped texture"

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
        self._highlight = highlight_color(name)

    def _set_extent(self, extent: tuple[float, ...]) -> None:
        x0, y0, x1, y1 = extent
        quad = np.array([[x0, y0, 0, 0, 0], [x1, y0, 0, 1, 0], [x0, y1, 0, 0, 1], [x1, y1, 0, 1, 1]], "f4")
        for obj in (*self._vaos.values(), self._quad):
            if obj is not None:
                obj.release()
        self._vaos = {}
        self._quad = self.ctx.buffer(quad.tobytes())
        self.extent = extent

    def _program(self, in_storage: bool) -> tuple[moderngl.Program, moderngl.VertexArray]:
        if in_storage not in self._programs:
            self._programs[in_storage] = load_program(self.ctx, "field", ("FIELD_STORAGE",) if in_storage else ())
        program = self._programs[in_storage]
        if in_storage not in self._vaos:
            self._vaos[in_storage] = self.ctx.vertex_array(program, [(self._quad, "3f 2f", "in_position", "in_uv")])
        return program, self._vaos[in_storage]

    def draw(self, view_matrix: np.ndarray, proj: np.ndarray) -> None:
        if self.view is None:
            return
        field, in_storage = self.view, self.feed.in_storage
        program, vao = self._program(in_storage)
        program["u_view"].write(view_matrix.T.astype("f4").tobytes())
        program["u_proj"].write(proj.T.astype("f4").tobytes())
        program["u_range"].value = self.value_range
        program["u_highlight"].value = self._highlight
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
        self.feed.bind()
        self._colormap.use(1)
        if not in_storage:
            program["u_field"].value = 0
        program["u_colormap"].value = 1
        vao.render(moderngl.TRIANGLE_STRIP)

    def release(self) -> None:
        try:
            self.feed.release()
        finally:
            self._colormap.release()
            for obj in (*self._vaos.values(), self._quad, *self._programs.values()):
                if obj is not None:
                    obj.release()
