"""The field view kind: a known field drawn where and in the colours it should be, NaN in the
highlight colour, tiles and halos over it in block-colour mode, the host fallback when interop is
refused; the density scene (CS 267 particles counted per cell) headless, in a window, and on a GPU
through CUDA–GL interop exactly as through host uploads."""

import dataclasses

import numpy as np
import pytest
from gl_support import HostOnly, field_through_interop, needs_egl

from sim.contract import BLOCK_COLORS, FieldView, Legend, Tiles
from sim.registry import create_scene
from viewer.headless import render_pixels
from viewer.render.camera import OrbitCamera
from viewer.render.colormaps import highlight_color, ramp
from viewer.render.field import TILE_COLOR
from viewer.render.view import BACKGROUND

SIZE = (600, 400)
ROWS, COLS = 4, 6
NAN_CELL = (3, 5)


def known_values() -> np.ndarray:
    """Row r, column c: (c + r / 4) / 6, one cell NaN; never all zeros."""
    r, c = np.mgrid[0:ROWS, 0:COLS]
    values = ((c + r / 4) / COLS).astype(np.float32)
    values[NAN_CELL] = np.nan
    return values


class FieldScene:
    """A scene reduced to what the viewer reads for a field: colour modes and the view."""

    color_modes = {"value": "Value", BLOCK_COLORS: "CUDA block"}

    def __init__(self, values=None, tiles=None, write=None, fixed=(0.0, 1.0)):
        self.values = known_values() if values is None else values
        self.tiles, self.write = tiles, write
        self.color_ranges = {"value": fixed, BLOCK_COLORS: fixed} if fixed else {}  # None: the data's range

    def view(self, color_mode):
        return FieldView(
            shape=self.values.shape,
            extent=(0.0, 0.0, float(COLS), float(ROWS)),
            value_range=self.color_ranges.get(color_mode),  # None: the values' own range
            legend=Legend("value", 0.0, 1.0),
            host=lambda: self.values,
            write=self.write,
            colormap="inferno",
            tiles=self.tiles,
        )


CAMERA = OrbitCamera.plan_view((0.0, 0.0, COLS, ROWS), 1.0)


def pixel(x: float, y: float) -> tuple[int, int]:
    """(row from the top, column) of the world point (x, y, 0) in an image of SIZE."""
    width, height = SIZE
    clip = CAMERA.projection_matrix(width / height) @ CAMERA.view_matrix() @ np.array([x, y, 0.0, 1.0])
    ndc = clip[:3] / clip[3]
    return int((1 - ndc[1]) / 2 * height), int((ndc[0] + 1) / 2 * width)


def cell_centre(row: int, col: int) -> tuple[int, int]:
    return pixel(col + 0.5, row + 0.5)


def expected_rgb(value: float) -> np.ndarray:
    colours = ramp("inferno")
    position = np.clip(value, 0, 1) * (len(colours) - 1)
    return np.array([np.interp(position, np.arange(len(colours)), colours[:, k]) for k in range(3)]) * 255


def draw(scene, mode="value"):
    return render_pixels(scene, *SIZE, camera=CAMERA, color_mode=mode).astype(int)


pytestmark = needs_egl


def test_each_cell_shows_its_value_through_the_colour_map():
    scene = FieldScene()
    pixels = draw(scene)
    for row in range(ROWS):
        for col in range(COLS):
            if (row, col) == NAN_CELL:
                continue
            got = pixels[cell_centre(row, col)]
            want = expected_rgb(scene.values[row, col])
            assert np.all(np.abs(got - want) <= 3), f"cell {(row, col)}: {got} instead of {want}"
    # Row 0 is at the bottom: the same column is darker (lower value) lower down.
    assert pixels[cell_centre(0, 2)].sum() < pixels[cell_centre(3, 2)].sum()
    outside = pixels[pixel(-0.5, 2.0)]
    assert np.all(np.abs(outside - np.array(BACKGROUND) * 255) <= 2), "nothing is drawn beyond the extent"


def test_nan_cells_are_drawn_in_the_highlight_colour():
    pixels = draw(FieldScene())
    highlight = np.array(highlight_color("inferno")) * 255
    assert np.all(np.abs(pixels[cell_centre(*NAN_CELL)] - highlight) <= 2)
    colours = ramp("inferno") * 255
    assert np.min(np.linalg.norm(colours - highlight, axis=1)) > 150, "the highlight is far from every colour"


def test_block_mode_outlines_the_tiles_and_tints_their_halos():
    plain = draw(FieldScene(tiles=Tiles(size=(3, 3), halo=1)), mode="value")
    blocks = draw(FieldScene(tiles=Tiles(size=(3, 3), halo=1)), mode=BLOCK_COLORS)
    no_tiles = draw(FieldScene(), mode=BLOCK_COLORS)
    assert np.array_equal(plain, no_tiles), "a view without tiles draws the same in block mode"
    edge = pixel(3.0, 1.5)  # between columns 2 and 3: the tiles' edge
    assert np.all(np.abs(blocks[edge] - np.array(TILE_COLOR) * 255) <= 2)
    assert not np.all(np.abs(plain[edge] - np.array(TILE_COLOR) * 255) <= 2)
    # Tiles of 3: cell (row 1, column 1) is inside its tile; (1, 0) and (1, 2) are read as a neighbour's halo.
    assert np.array_equal(blocks[cell_centre(1, 1)], plain[cell_centre(1, 1)])
    for cell in ((1, 0), (1, 2), (0, 1)):
        assert np.abs(blocks[cell_centre(*cell)] - plain[cell_centre(*cell)]).max() > 20, f"cell {cell} not tinted"
    untinted = draw(FieldScene(tiles=Tiles(size=(3, 3), halo=0)), mode=BLOCK_COLORS)
    assert np.array_equal(untinted[cell_centre(1, 0)], plain[cell_centre(1, 0)]), "no halo: no tint"


def drawn_through(monkeypatch, limit, scene, mode):
    """The scene's field drawn with storage buffers of at most ``limit`` bytes readable by the shader (None:
    the context's own): (pixels, whether the shader read the buffer itself, the values it read, whether a GL
    buffer was made)."""
    import viewer.render.field
    from viewer.headless import HeadlessRenderer

    if limit is not None:
        monkeypatch.setattr(viewer.render.field, "storage_limit", lambda ctx: limit)
    with HeadlessRenderer(*SIZE) as renderer:
        renderer.render(scene, CAMERA, mode)
        feed = renderer.view.field.feed
        return renderer.pixels().astype(int), feed.in_storage, feed.read(), feed.buffer is not None


@pytest.mark.parametrize("mode", ["value", BLOCK_COLORS])
def test_the_shader_reading_the_buffer_draws_what_the_texture_draws(monkeypatch, mode):
    """Where the context reads storage buffers the field is drawn from its buffer, no texture copy; a
    context without them, or a field larger than one, draws from the texture: the same pixels, cell for
    cell, NaN and tiles included."""
    scene = FieldScene(tiles=Tiles(size=(3, 3), halo=1))
    own, in_storage, read, _ = drawn_through(monkeypatch, None, scene, mode)
    assert in_storage, "this context reads storage buffers (GL 4.3): the field is drawn from its buffer"
    np.testing.assert_array_equal(read, scene.values)
    too_small = ROWS * COLS * 4 - 4
    for limit in (0, too_small):
        pixels, in_storage, read, made_buffer = drawn_through(monkeypatch, limit, scene, mode)
        assert not in_storage, f"limit {limit}: the texture"
        assert not made_buffer, "values from the host go straight into the texture: no field-sized buffer"
        np.testing.assert_array_equal(read, scene.values)
        assert np.array_equal(pixels, own), f"limit {limit}: {np.argwhere(np.any(pixels != own, axis=2))[:5]}"


@pytest.mark.parametrize("limit", [None, 0])
def test_a_released_feed_takes_a_field_of_the_same_shape_again(gl, monkeypatch, limit):
    """Released, the feed has no GL objects; the same shape again makes them anew and holds the values,
    in the storage buffer (limit None: the context's own) and in the texture (limit 0)."""
    import viewer.render.field
    from viewer.render.field import FieldFeed

    if limit is not None:
        monkeypatch.setattr(viewer.render.field, "storage_limit", lambda ctx: limit)
    scene = FieldScene()
    feed = FieldFeed(gl)
    feed.update(scene.view("value"))
    feed.release()
    assert feed.buffer is None and feed.texture is None
    scene.values = known_values()[::-1].copy()
    feed.update(scene.view("value"))
    np.testing.assert_array_equal(feed.read(), scene.values)
    feed.release()


def test_the_colours_span_the_fields_own_range_unless_it_is_fixed(monkeypatch):
    """Automatic: the field's finite range, taken every frame; fixed: that range, and no pass over the
    field for its own (on the GPU: no reduction over the field, no wait for its two numbers)."""
    import viewer.render.field
    from viewer.headless import HeadlessRenderer

    spans = []
    take_span = viewer.render.field.data_span
    monkeypatch.setattr(viewer.render.field, "data_span", lambda *args: spans.append(1) or take_span(*args))
    values = known_values()
    finite = values[np.isfinite(values)]
    with HeadlessRenderer(*SIZE) as renderer:
        renderer.render(FieldScene(fixed=None), CAMERA, "value")
        assert renderer.view.field.value_range == (float(finite.min()), float(finite.max()))
        assert len(spans) == 1
        renderer.render(FieldScene(fixed=(0.25, 0.5)), CAMERA, "value")
        assert renderer.view.field.value_range == (0.25, 0.5)
        assert len(spans) == 1, "a fixed range takes no span of the field"


def test_a_device_field_falls_back_to_the_host_when_interop_is_refused(monkeypatch):
    import viewer.render.field
    from viewer.gpu.egl import standalone_context
    from viewer.gpu.interop import InteropError
    from viewer.render.view import SceneView

    def refuse(*args, **kwargs):
        raise InteropError("cudaGraphicsGLRegisterBuffer(buffer 1) failed: cudaErrorOperatingSystem")

    def write(out):
        raise AssertionError("interop was refused: the view's write must not be called")

    monkeypatch.setattr(viewer.render.field, "GLBufferRegistration", refuse)
    ctx = standalone_context()
    view = SceneView(ctx)
    try:
        scene = FieldScene(write=write)
        view.show(scene, "value")
        assert view.feed.path == "host upload" and "cudaGraphicsGLRegisterBuffer" in view.feed.fallback_reason
        uploaded = view.field.feed.read()
        np.testing.assert_array_equal(uploaded, scene.values)
    finally:
        view.release()
        ctx.release()
    assert np.array_equal(draw(FieldScene(write=write)), draw(FieldScene()))


# --- the density scene --------------------------------------------------------------------------


def field_area(scene) -> np.s_:
    """The pixels inside the density field's extent (default camera, no panel)."""
    camera = OrbitCamera.plan_view((0.0, 0.0, scene.size, scene.size), 1.0)
    width, height = SIZE
    clip = camera.projection_matrix(width / height) @ camera.view_matrix()

    def at(x, y):
        p = clip @ np.array([x, y, 0.0, 1.0])
        return int((1 - p[1] / p[3]) / 2 * height), int((p[0] / p[3] + 1) / 2 * width)

    (top, left), (bottom, right) = at(0.0, scene.size), at(scene.size, 0.0)
    return np.s_[top + 2 : bottom - 2, left + 2 : right - 2]


def test_density_counts_every_particle_once():
    scene = create_scene("density", n=3000)
    counts = scene.host_counts()
    assert counts.shape == (scene.cells, scene.cells) and counts.dtype == np.float32
    assert counts.sum() == scene.n
    cell = scene.size / scene.cells
    row, col = (
        np.minimum((scene.y / cell).astype(int), scene.cells - 1),
        np.minimum((scene.x / cell).astype(int), scene.cells - 1),
    )
    np.testing.assert_array_equal(
        counts, np.bincount(row * scene.cells + col, minlength=scene.cells**2).reshape(scene.cells, scene.cells)
    )


def test_density_is_drawn_headless_and_changes_as_the_particles_move():
    scene = create_scene("density", n=3000)
    area = field_area(scene)
    before = render_pixels(scene, *SIZE).astype(int)
    assert before[area].std() > 20, "the field should show cells of different counts"
    for _ in range(40):
        scene.advance_frame()
    after = render_pixels(scene, *SIZE).astype(int)
    moved = np.any(np.abs(after[area] - before[area]) > 20, axis=2)
    assert moved.mean() > 0.02, "counts change as the particles move"


def test_density_panel_shows_the_legend():
    from viewer.panel.style import PANEL_WIDTH

    scene = create_scene("density", n=3000)
    pixels = render_pixels(scene, 1000, 700, panel=True).astype(int)
    panel = pixels[:, 1000 - PANEL_WIDTH : 1000]
    colours = ramp("inferno")[[64, 128, 192]] * 255
    for colour in colours:  # the colour bar holds the map's colours
        assert np.min(np.abs(panel - colour).max(axis=2)) <= 6


def _display_problem():
    from viewer.window.display import display_problem

    return display_problem()


@pytest.mark.window
@pytest.mark.skipif(_display_problem() is not None, reason=f"needs a display: {_display_problem()}")
def test_density_in_a_window(tmp_path):
    from viewer.image import read_image
    from viewer.keys import key
    from viewer.window.app import Viewer

    v = Viewer(create_scene("density", n=3000), 900, 600, max_fps=None, screenshot_dir=tmp_path)
    try:
        for _ in range(3):
            assert v.tick()
        assert v.view.kind == "field" and not v.camera.orbit_enabled
        shots = []
        for _ in range(2):
            v.window.dispatch_event("on_key_press", key.F12, 0)
            v.tick()
            v.tick()
            shots.append(read_image(v.last_screenshot).astype(int))
            for _ in range(20):
                v.tick()
        width = shots[0].shape[1]
        scene_part = np.s_[:, : width - 420]
        assert shots[0][scene_part].std() > 20
        assert np.any(np.abs(shots[1][scene_part] - shots[0][scene_part]) > 20, axis=2).mean() > 0.01
        distance = v.camera.distance
        v.camera.zoom(1e-9)  # all the way in: a couple of cells across
        cell = v.scene.size / v.scene.cells
        assert 2 * v.camera.distance * np.tan(np.radians(v.camera.fov_y) / 2) <= 2.01 * cell < distance
    finally:
        v.close()


# --- on a GPU ------------------------------------------------------------------------------------


@pytest.mark.gpu
def test_density_through_interop_equals_the_host_upload():
    scene = create_scene("density", n=20000, backend="gpu")
    for _ in range(5):
        scene.advance_frame()
    drawn = field_through_interop(scene, "count", (scene.cells, scene.cells))
    np.testing.assert_array_equal(drawn, scene.host_counts())
    assert drawn.sum() == scene.n
    through_interop = render_pixels(scene, *SIZE).astype(int)
    through_host = render_pixels(HostOnly(scene), *SIZE).astype(int)
    differ = np.any(through_interop != through_host, axis=2)
    rows, cols = np.nonzero(differ)
    assert not differ.any(), (
        f"{differ.sum()} pixels differ, rows {rows.min()}-{rows.max()}, "
        f"columns {cols.min()}-{cols.max()} of {differ.shape}"
    )
    host_view = HostOnly(scene).view("count")
    assert dataclasses.replace(host_view).write is None
