"""The CUDA splat of device balls (viewer/render/points/splat.py, splat.cu).

Without a GPU (the kernel's NVRTC build is in test_cuda_sources.py): the GL half (the splat image
shown with its depth, the kernel's list of big balls drawn as impostors, the fallback to
impostors) runs on any GL 4.3 context, with the buffers the kernel would write filled from the
host. On a GPU (``pytest -m gpu``): device balls splatted look like the same balls drawn as
impostors, far away, mid-range and close up.
"""

import struct

import numpy as np
import pytest
from gl_support import HostOnly

import viewer  # noqa: F401  first: it picks NVIDIA's EGL before any context loads libEGL
from sim.contract import PointsView, Trough
from viewer.render.camera import OrbitCamera
from viewer.render.view import BACKGROUND, LIGHT_DIR_VIEW

SIZE = (64, 48)


@pytest.fixture
def gl():
    pytest.importorskip("moderngl")
    from viewer.gpu.egl import standalone_context

    try:
        ctx = standalone_context()
    except Exception as exc:  # noqa: BLE001  any failure means: skip with the reason
        pytest.skip(f"no EGL OpenGL context: {exc}")
    from viewer.render.points.splat import gl_problem

    if gl_problem(ctx):
        ctx.release()
        pytest.skip(gl_problem(ctx))
    yield ctx
    ctx.release()


def _packed(depth: float, rgba8: tuple[int, int, int, int]) -> int:
    colour = rgba8[0] | rgba8[1] << 8 | rgba8[2] << 16 | rgba8[3] << 24
    return struct.unpack("<I", struct.pack("<f", depth))[0] << 32 | colour


GREEN_PALETTE = np.array([[0.0, 1.0, 0.0]], np.float32)


def _green_balls(positions: np.ndarray) -> PointsView:
    """Balls of category 0 in a palette of green."""
    return PointsView(
        len(positions),
        3,
        Trough(40.0, -80.0, 80.0),
        1.0,
        lambda: (positions, np.zeros(len(positions), np.int32)),
        palette=GREEN_PALETTE,
    )


def _draw(gl, fill):
    """Clear an offscreen target, let ``fill(splat)`` stand in for the kernel, draw; (rgb, depth).
    Listed big balls are coloured by category in a palette of green."""
    import moderngl

    from viewer.render.offscreen import Offscreen
    from viewer.render.points.colours import PointColours
    from viewer.render.points.spheres import SphereRenderer
    from viewer.render.points.splat import SphereSplat

    spheres = SphereRenderer(gl)
    splat = SphereSplat(gl, spheres)
    colours = PointColours(gl)
    target = Offscreen(gl, SIZE)
    try:
        colours.take(_green_balls(np.zeros((0, 4), np.float32)), (0.0, 1.0))
        colours.bind(spheres.program)
        splat.reserve(SIZE, 4)
        fill(splat)
        target.fbo.use()
        target.fbo.clear(*BACKGROUND, 1.0, depth=1.0)
        gl.enable(moderngl.DEPTH_TEST)
        camera = OrbitCamera.looking_at((0.0, 0.0, 0.0), 10.0)
        proj = camera.projection_matrix(SIZE[0] / SIZE[1])
        splat.draw(camera.view_matrix(), proj, LIGHT_DIR_VIEW, camera.near)
        depth = target.fbo.read(components=1, attachment=-1, dtype="f4")
        depth = np.frombuffer(depth, np.float32).reshape(SIZE[1], SIZE[0])
        return target.read_rgb(), depth[::-1]
    finally:
        target.release()
        splat.release()
        colours.release()
        spheres.release()


def _image(pixels: dict[tuple[int, int], int]) -> bytes:
    """A splat image, all ones but at ``pixels`` ((x, y) from the bottom left -> packed value)."""
    image = np.full(SIZE[1] * SIZE[0], np.iinfo(np.uint64).max, np.uint64)
    for (x, y), value in pixels.items():
        image[y * SIZE[0] + x] = value
    return image.tobytes()


def _command(instances: int) -> bytes:
    return np.array([4, instances, 0, 0], np.uint32).tobytes()


def test_splatted_pixels_show_with_their_depth_and_the_rest_stays_clear(gl):
    def fill(splat):
        splat.image_buffer.write(
            _image({(10, 5): _packed(0.25, (255, 0, 0, 255)), (11, 5): _packed(0.75, (0, 0, 255, 255))})
        )
        splat.command.write(_command(0))

    rgb, depth = _draw(gl, fill)
    row = SIZE[1] - 1 - 5  # images are top row first
    assert tuple(rgb[row, 10]) == (255, 0, 0) and tuple(rgb[row, 11]) == (0, 0, 255)
    assert depth[row, 10] == pytest.approx(0.25, abs=1e-6) and depth[row, 11] == pytest.approx(0.75, abs=1e-6)
    rest = np.ones(rgb.shape[:2], bool)
    rest[row, 10:12] = False
    assert np.all(depth[rest] == 1.0)
    assert np.all(np.abs(rgb[rest].astype(int) - np.round(np.array(BACKGROUND) * 255)) <= 1)


def test_listed_big_balls_are_drawn_as_impostors_behind_nearer_splats(gl):
    ball = np.array([[0.0, 0.0, 0.0, 2.0]], np.float32)
    centre = (SIZE[0] // 2, SIZE[1] // 2)

    def fill(splat):
        splat.image_buffer.write(_image({centre: _packed(1e-4, (255, 0, 0, 255))}))
        splat.big_positions.write(ball.tobytes())
        splat.big_quantity.write(np.zeros(1, np.uint32).tobytes())  # category 0: green
        splat.command.write(_command(1))

    rgb, depth = _draw(gl, fill)
    row, col = SIZE[1] - 1 - centre[1], centre[0]
    assert tuple(rgb[row, col]) == (255, 0, 0), "the nearer splatted pixel stays in front"
    # The ball is about 13 pixels in radius here: everything around the centre is the ball.
    around = rgb[row - 3 : row + 4, col - 3 : col + 4].astype(int)
    around[3, 3] = (0, 255, 0)
    assert np.all(around[..., 1] > around[..., 0] + 40) and np.all(around[..., 1] > around[..., 2] + 40)
    assert 0.5 < depth[row - 2, col] < 1.0


def test_a_failing_splat_falls_back_to_impostors_with_the_reason(gl, monkeypatch):
    from viewer.gpu.interop import InteropError
    from viewer.render.offscreen import Offscreen
    from viewer.render.points.feed import DEVICE
    from viewer.render.view import IMPOSTORS, SceneView

    view = SceneView(gl)
    target = Offscreen(gl, SIZE)
    try:
        points = view.points
        points.show_trough = points.show_floor = False
        view.take(_green_balls(np.array([[0.0, 0.0, 0.0, 2.0]], np.float32)))
        points.feed.path = DEVICE  # as if CUDA had written the balls

        def refuse():
            raise InteropError("mapping refused")

        monkeypatch.setattr(points.feed, "mapped_items", refuse)
        view.draw(target.fbo, OrbitCamera.looking_at((0.0, 0.0, 0.0), 10.0), SIZE)
        assert view.drawn_as == IMPOSTORS and "mapping refused" in view.splat_problem
        r, g, b = target.read_rgb()[SIZE[1] // 2, SIZE[0] // 2].astype(int)
        assert g > r + 40 and g > b + 40, "the ball is drawn all the same"
    finally:
        target.release()
        view.release()


# --- on a GPU: splatted device balls look like impostors -------------------------------------------


def _render(scene, camera: OrbitCamera, size=(800, 500)):
    """(rgb as int, how the balls were drawn) through a fresh EGL context."""

    from viewer.gpu.egl import standalone_context
    from viewer.render.offscreen import Offscreen
    from viewer.render.view import SceneView

    ctx = standalone_context()
    try:
        view = SceneView(ctx)
        target = Offscreen(ctx, size)
        try:
            view.show(scene, next(iter(scene.color_modes)))
            view.draw(target.fbo, camera, size)
            ctx.finish()
            return target.read_rgb().astype(int), view.drawn_as, view.splat_problem
        finally:
            view.release()
            target.release()
    finally:
        ctx.release()


@pytest.mark.gpu
@pytest.mark.parametrize("distance", [None, 120.0, 8.0], ids=["whole trough", "mid-range", "close-up"])
def test_device_balls_splatted_look_like_impostors(distance):
    from sim import create_scene
    from viewer.render.view import IMPOSTORS, SPLAT

    scene = create_scene("balls", preset="t", backend="gpu", seed=1)
    for _ in range(20):
        scene.advance_frame()
    camera = OrbitCamera.for_trough(scene.trough)
    if distance is not None:  # from above onto the top of the pile
        top = scene.positions()[:, :3][np.argmax(scene.positions()[:, 1])]
        camera = OrbitCamera.looking_at(top, distance, yaw=20.0, pitch=50.0)
    splatted, drawn, problem = _render(scene, camera)
    assert drawn == SPLAT, problem
    impostors, drawn, _ = _render(HostOnly(scene), camera)
    assert drawn == IMPOSTORS
    differing = np.any(np.abs(splatted - impostors) > 2, axis=2)
    assert differing.sum() <= 0.002 * differing.size, f"{differing.sum()} pixels differ"
    assert splatted.std() > 10, "the picture should show balls"


@pytest.mark.gpu
def test_small_device_discs_splat_at_the_impostors_minimum_size():
    """A 2D view's discs far out are 3 pixels across however they are drawn."""
    from sim import create_scene
    from viewer.render.view import IMPOSTORS, SPLAT

    scene = create_scene("particles", n=20000, backend="gpu")
    camera = OrbitCamera.top_view(scene.size, 0.01)  # 500 pixels high: the discs are 1.2 pixels across
    splatted, drawn, problem = _render(scene, camera)
    assert drawn == SPLAT, problem
    impostors, drawn, _ = _render(HostOnly(scene), camera)
    assert drawn == IMPOSTORS
    lit = np.any(np.abs(impostors - np.array(BACKGROUND) * 255) > 8, axis=2)
    assert lit.sum() > 2.5 * scene.n, "the impostors draw the discs 3 pixels across (about 7 pixels each)"
    differing = np.any(np.abs(splatted - impostors) > 2, axis=2)
    assert differing.sum() <= 0.002 * differing.size, f"{differing.sum()} pixels differ"
