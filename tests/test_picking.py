"""Picking: the host's ray test agrees with a brute force, and the CUDA ray test with it; in a window (Xvfb)
the tooltip of a ball placed under the pointer shows that ball's values from the state, a click pins
it and Esc unpins; a field's cell and a plot's bucket are picked; under verification the tooltip of
a marked item shows the GPU and CPU values side by side (GPU tests: the CUDA ray test over CUDA-written
buffers, a planted kernel fault)."""

import types
from contextlib import contextmanager

import numpy as np
import pytest

from sim import create_scene
from sim.registry import SCENES
from viewer.pick.picker import DEVICE_RAY, RAY, field_cell
from viewer.pick.ray import ray_hit
from viewer.window.display import display_problem

_PROBLEM = display_problem()  # with no display, pyglet's headless (EGL) window stands in


def brute_force(spheres, origin, direction):
    best = None
    for i, (x, y, z, r) in enumerate(spheres.astype(float)):
        oc = np.array([x, y, z]) - origin
        t = oc @ direction
        d2 = np.sum((oc - t * direction) ** 2)
        if d2 <= r * r:
            hit = t - np.sqrt(r * r - d2)
            hit = hit if hit >= 0 else t + np.sqrt(r * r - d2)
            if hit >= 0 and (best is None or hit < best[1]):
                best = (i, hit)
    return best


def random_spheres(n, seed):
    rng = np.random.default_rng(seed)
    spheres = np.empty((n, 4), np.float32)
    spheres[:, :3] = rng.uniform(-20, 20, (n, 3))
    spheres[:, 3] = rng.uniform(0.3, 2.0, n)
    return spheres, rng


def test_the_ray_test_finds_the_nearest_sphere_hit():
    spheres, rng = random_spheres(400, 5)
    origin = np.array([0.0, 0.0, 80.0])
    hits = 0
    for _ in range(60):
        direction = np.array([*rng.normal(0, 0.15, 2), -1.0])
        direction /= np.linalg.norm(direction)
        want, got = brute_force(spheres, origin, direction), ray_hit(spheres, origin, direction)
        assert (want is None) == (got is None)
        if want is not None:
            hits += 1
            assert got[0] == want[0] and got[1] == pytest.approx(want[1])
    assert hits > 20
    assert ray_hit(np.empty((0, 4), np.float32), origin, direction) is None


@pytest.mark.gpu
def test_the_cuda_ray_test_picks_what_the_host_ray_test_picks():
    """Its twin: the same index and the same distance, bit for bit, over fresh random spheres, with the answer
    buffer poisoned before each request (a stale answer cannot pass)."""
    import cupy

    from viewer.pick.device import DeviceRayTest

    spheres, rng = random_spheres(200_000, None)
    spheres[rng.integers(0, len(spheres), 50), 3] = 0.0  # radius 0: never hit
    device = cupy.asarray(spheres)
    test = DeviceRayTest()
    assert test.collect() is None, "nothing requested yet"
    picked = 0
    for _ in range(60):
        origin = np.array([*rng.uniform(-5, 5, 2), 60.0])
        direction = np.array([*rng.normal(0, 0.2, 2), -1.0])
        direction /= np.linalg.norm(direction)
        test.answer[:] = 12345  # poison: a request that wrote nothing would read back as item 12345
        test.request(device, origin, direction)
        got = test.collect()
        assert got == ray_hit(spheres, origin, direction)
        picked += got is not None
    assert picked > 30
    test.request(device, np.array([0.0, 0.0, 60.0]), np.array([0.0, 0.0, 1.0]))  # pointing away from them all
    assert test.collect() is None
    test.request(device[:0], np.zeros(3), np.array([0.0, 0.0, 1.0]))
    assert test.collect() is None, "no items: nothing hit"


class _RecordingRayTest:
    """DeviceRayTest's part the picker uses, on host arrays: ``request`` notes the ray and keeps the host
    ray test's answer for ``collect``."""

    def __init__(self):
        self.rays, self.done, self._answer = [], None, None

    def request(self, spheres, origin, direction):
        self.rays.append((tuple(origin), tuple(direction)))
        self.done, self._answer = True, ray_hit(spheres, origin, direction)

    def collect(self):
        found, self._answer = (self._answer if self.done else None), None
        self.done = None
        return found


class _Spheres:
    capacity = 0

    def upload(self, positions, quantity):
        self.capacity = len(positions)


def test_a_device_pick_is_launched_inside_the_next_mapping_of_the_items_and_read_a_frame_later():
    from types import SimpleNamespace

    from sim.contract import Box
    from sim.framework.views import PointsView
    from viewer.pick.picker import Picking
    from viewer.render.points.feed import DEVICE, PointsFeed

    spheres, _ = random_spheres(400, 7)
    feed = PointsFeed(_Spheres())
    feed.path = DEVICE
    picking = Picking()
    picking._device = device = _RecordingRayTest()
    renderer = SimpleNamespace(feed=feed)
    down = np.array([0.0, 0.0, -1.0])
    rays = [(np.array([*spheres[i, :2], 60.0]), down) for i in (3, 9)]

    assert picking._points(renderer, rays[0]) is None and device.rays == [], "nothing is launched outside a mapping"
    feed._run_work(spheres)  # the draw maps the items: the test of the latest ray runs there, once
    feed._run_work(spheres)
    assert device.rays == [(tuple(rays[0][0]), tuple(down))]
    assert picking._points(renderer, rays[1]) == ray_hit(spheres, *rays[0])[0], "the answer comes a frame later"
    picking.clear_hover()  # the pointer left the view: the test still queued asks about nothing
    feed._run_work(spheres)
    assert len(device.rays) == 1 and picking._points(renderer, rays[1]) is None

    view = PointsView(
        count=len(spheres),
        dims=3,
        surroundings=Box(40.0),
        spacing=1.0,
        host=lambda: (spheres, np.ones(len(spheres), np.float32)),
    )
    feed.update(view)  # the items come from the host: nothing maps them, the queue is dropped
    feed._run_work(spheres)
    assert len(device.rays) == 1


class _FakeMapping:
    """GLBufferRegistration's mapping for the feed's two buffers, on host memory: ``mapped`` counts the
    mappings; ``refuse`` makes mapping fail as CUDA would."""

    def __init__(self, refuse=False):
        self.mapped_count, self.refuse = 0, refuse

    @contextmanager
    def mapped(self, stream_ptr):
        from viewer.gpu.interop import InteropError

        if self.refuse:
            raise InteropError("mapping refused")
        self.mapped_count += 1
        yield [(0, 4096), (1, 1024)]


def test_queued_work_runs_once_on_the_draws_mapping_or_on_its_own_and_is_dropped_when_mapping_fails(monkeypatch):
    from viewer.render.points import feed as feed_module

    spheres = _Spheres()
    spheres.count = 3
    feed = feed_module.PointsFeed(spheres)
    feed.path = feed_module.DEVICE
    monkeypatch.setattr(feed_module, "current_stream_ptr", lambda: 0)
    monkeypatch.setattr(feed_module, "cupy_view", lambda ptr, size, shape, dtype, owner: np.full(shape, ptr, dtype))
    feed._registration = mapping = _FakeMapping()
    seen = []
    feed.with_next_items("pick", lambda positions: seen.append(positions.shape))
    with feed.mapped_items() as (positions, quantity):  # the splat's mapping
        assert seen == [(3, 4)] and quantity.shape == (3,)
    feed.run_work_now()  # nothing queued: no mapping of its own
    assert mapping.mapped_count == 1 and seen == [(3, 4)]
    feed.with_next_items("pick", lambda positions: seen.append("again"))
    feed.run_work_now()  # impostors map nothing: the work maps for itself
    assert mapping.mapped_count == 2 and seen[-1] == "again"
    feed._registration = _FakeMapping(refuse=True)
    feed.with_next_items("pick", lambda positions: seen.append("never"))
    feed.run_work_now()
    assert "never" not in seen and not feed._with_items, "work that cannot be mapped is dropped, not kept"


class _Arriving:
    """A description on its way that arrives when the test says so."""

    def __init__(self, item, values):
        self.item, self._values, self.arrived = item, values, False

    def ready(self):
        return self.arrived

    def values(self):
        return self._values


class _DeviceInspector:
    def __init__(self):
        self.asked = []

    def prefetch(self, item):
        self.asked.append(_Arriving(item, {"ball": f"#{item}"}))
        return self.asked[-1]

    def describe(self, item):
        raise AssertionError("a device scene's tooltip must not be described at once")


class _DeviceScene:
    def __init__(self):
        self.checks = types.SimpleNamespace(on=False)
        self.inspector = _DeviceInspector()
        self.asked = self.inspector.asked


def test_a_device_scene_s_tooltip_shows_a_frame_late_and_never_waits():
    from viewer.pick.tooltip import LateReports

    scene, reports = _DeviceScene(), LateReports()
    assert reports.report(scene, 4, "hover") is None, "nothing has arrived yet"
    assert reports.report(scene, 4, "hover") is None and len(scene.asked) == 1, "no new request before it arrives"
    scene.asked[-1].arrived = True
    shown = reports.report(scene, 4, "hover")
    assert shown.item == 4 and shown.values == {"ball": "#4"} and len(scene.asked) == 2
    assert reports.report(scene, 9, "hover").item == 4, "kept while the next is on its way"
    scene.asked[-1].arrived = True
    shown = reports.report(scene, 9, "hover")
    assert shown.item == 4, "the second request was still for item 4"
    scene.asked[-1].arrived = True
    assert reports.report(scene, 9, "hover").values == {"ball": "#9"}
    assert reports.report(scene, 4, "pinned") is None, "slots are separate"
    reports.forget("hover")
    assert reports.report(scene, 9, "hover") is None, "forgotten when the pointer leaves"


def test_a_scene_without_prefetch_is_described_at_once():
    from viewer.pick.tooltip import LateReports

    scene = create_scene("heat", preset="plate", n=400)
    rep = LateReports().report(scene, 7, "hover")
    assert rep is not None and rep.values == scene.inspector.describe(7)
    assert LateReports().report(scene, 10**9, "hover").error, "a bad item is an error in the report"


def test_field_cells_by_arithmetic():
    from sim.contract import FieldView, Legend

    view = FieldView((4, 6), (10.0, 20.0, 16.0, 24.0), (0, 1), Legend("v", 0, 1), host=lambda: None)
    assert field_cell(view, 10.5, 20.5) == 0
    assert field_cell(view, 15.9, 23.9) == 3 * 6 + 5
    assert field_cell(view, 13.2, 22.1) == 2 * 6 + 3
    assert field_cell(view, 9.9, 21.0) is None and field_cell(view, 12.0, float("nan")) is None


@pytest.mark.parametrize("name", list(SCENES))
def test_every_scene_describes_its_items(name):
    spec = SCENES[name]
    preset = spec.preset(spec.start_preset)
    scene = spec.create(preset=preset.name, n=300 if preset.count is not None else None)
    scene.advance_frame()
    values = scene.inspector.describe(0)
    assert values and all(isinstance(k, str) and isinstance(v, str) and v for k, v in values.items())
    assert scene.inspector.describe_check(0) == [], "nothing marked without verification"
    assert scene.inspector.item_of_key(scene.inspector.item_key(0)) == 0


# --- in a window ---------------------------------------------------------------------------------------------
KNOWN = np.array(
    [
        [0.0, 10.0, 0.0, 2.0],
        [9.0, 12.0, 3.0, 1.5],
        [-9.0, 8.0, -4.0, 2.5],
        [0.0, 25.0, -30.0, 3.0],
        [15.0, 5.0, 30.0, 2.0],
    ],
    np.float32,
)
VELOCITIES = np.array(
    [[1.0, -2.0, 0.5, 0], [0, 0, 0, 0], [3.0, 0, -1.0, 0], [0, -9.5, 0, 0], [0.25, 0, 0, 0]], np.float32
)


def window_point(v, world):
    """The window pixel (pyglet: y up) where ``world`` is drawn."""
    fb = v.window.get_framebuffer_size()
    proj = v.camera.projection_matrix(fb[0] / fb[1], v.covered_right(fb) / fb[0])
    clip = proj @ v.camera.view_matrix() @ np.array([*world, 1.0])
    ndc = clip[:3] / clip[3]
    width, height = v.window.get_size()
    return (ndc[0] + 1) / 2 * width, (ndc[1] + 1) / 2 * height


def hover(v, point, ticks=2):
    v.window.dispatch_event("on_mouse_motion", int(round(point[0])), int(round(point[1])), 0, 0)
    for _ in range(ticks):
        v.tick()


def click(v, point):
    x, y = (int(round(c)) for c in point)
    v.window.dispatch_event("on_mouse_press", x, y, 1, 0)  # left
    v.window.dispatch_event("on_mouse_release", x, y, 1, 0)
    v.tick()
    v.tick()


def press_key(v, symbol, modifiers=0):
    v.window.dispatch_event("on_key_press", symbol, modifiers)
    v.window.dispatch_event("on_key_release", symbol, modifiers)
    v.tick()


def numbers(text):
    return [float(t) for t in text.split(")")[0].strip("(").split(",")]


@pytest.fixture
def window(tmp_path):
    """Viewers in a window, or in pyglet's headless (EGL) window where there is no display: a GPU
    machine draws through NVIDIA's EGL there, so the scene writes the GL buffers through CUDA."""
    from viewer.window.app import Viewer

    opened = []

    def make(scene):
        try:
            v = Viewer(scene, 1000, 700, visible=_PROBLEM is None, max_fps=None, screenshot_dir=tmp_path)
        except Exception as exc:  # noqa: BLE001  no window of either kind here
            pytest.skip(f"no window: {exc}")
        v.controller.paused = True
        for _ in range(3):
            v.tick()
        opened.append(v)
        return v

    yield make
    for v in opened:
        v.close()


def balls_with_known_state(backend="cpu"):
    scene = create_scene("balls", preset="block", n=len(KNOWN), backend=backend)  # no dripper adding balls
    scene.set_state(KNOWN, VELOCITIES)
    scene.run_frame(1)  # a proximity pass
    return scene


def check_tooltip_is_the_state(v, item):
    report = v.pointing.hover_report
    assert report is not None and report.item == item and not report.error
    assert report.values == v.scene.inspector.describe(item)
    pos, vel, _ = v.scene.state()
    assert numbers(report.values["position"]) == pytest.approx(pos[item, :3].tolist(), rel=1e-5, abs=1e-5)
    assert numbers(report.values["velocity"]) == pytest.approx(vel[item, :3].tolist(), rel=1e-5, abs=1e-5)
    assert report.values["radius"] == f"{pos[item, 3]:.4g}"


def test_the_tooltip_shows_the_values_of_the_ball_under_the_pointer(window):
    v = window(balls_with_known_state())
    for item in (0, 2, 3):
        hover(v, window_point(v, v.scene.state()[0][item, :3]), ticks=3)
        assert v.pointing.picking.hovered == item and v.pointing.picking.used == RAY
        check_tooltip_is_the_state(v, item)
    hover(v, (20, 680))  # the sky: nothing
    assert v.pointing.picking.hovered is None and v.pointing.hover_report is None


def test_a_click_pins_the_ball_and_esc_unpins_it(window):
    from viewer.keys import key

    v = window(balls_with_known_state())
    target = window_point(v, KNOWN[1, :3])
    hover(v, target)
    click(v, target)
    assert v.pointing.picking.pinned is not None and "pinned ball #1" in v.message
    hover(v, (20, 680))
    assert v.pointing.pinned_report.values == v.scene.inspector.describe(1), "the pinned window stays"
    v.controller.paused = False
    v.tick()
    moved = v.scene.inspector.describe(1)["position"]
    assert v.pointing.pinned_report.values["position"] == moved, "followed as it moves"
    press_key(v, key.ESCAPE)
    assert v.pointing.picking.pinned is None and not v.closed and v.message == "unpinned"


def test_the_camera_follows_the_pinned_ball(window):
    v = window(balls_with_known_state())
    target = window_point(v, KNOWN[3, :3])
    hover(v, target)
    click(v, target)
    v.pointing.picking.follow = True
    v.controller.paused = False
    for _ in range(3):
        v.tick()
    assert v.camera.target == pytest.approx(v.scene.state()[0][3, :3], abs=0.05)


def test_a_density_cell_is_picked_with_its_count(window):
    v = window(create_scene("density", n=3000))
    counts = v.scene.host_counts()
    row, col = np.unravel_index(int(np.argmax(counts)), counts.shape)
    cells = v.scene.cells
    width = v.scene.size / cells
    hover(v, window_point(v, ((col + 0.5) * width, (row + 0.5) * width, 0.0)))
    assert v.pointing.picking.hovered == row * cells + col
    assert v.pointing.hover_report.values["particles"].startswith(f"{int(counts[row, col])} ")


def test_a_histogram_bucket_is_picked_with_its_count(window):
    v = window(create_scene("sdh", n=2000))
    v.controller.single_step()
    for _ in range(3):
        v.tick()
    width, height = v.window.get_size()
    hover(v, (width * 0.15, height * 0.75), ticks=3)  # inside the top plot (the histogram), y up
    bucket = v.pointing.picking.hovered
    assert bucket is not None
    assert v.pointing.hover_report.values["pairs"] == f"{int(v.scene.counts[bucket]):,}"
    click(v, (width * 0.15, height * 0.75))
    assert v.pointing.picking.pinned is not None and v.view.plots.pinned_pixel is not None


def test_a_marked_particle_shows_gpu_and_cpu_values_side_by_side(window):
    """On the CPU, a check record is planted as the GPU verification would leave it."""
    scene = create_scene("particles", n=400)
    scene.advance_frame()
    n = scene.n
    cpu = np.stack([scene.x, scene.y, scene.vx, scene.vy]).astype(float)
    gpu = cpu.copy()
    gpu[0, 7] += 1e-3  # particle 7 moved differently "on the GPU"
    scene.checked = (gpu, cpu, np.arange(n))
    scene.checks.mismatch = np.zeros(n, bool)
    scene.checks.mismatch[7] = True
    scene.checks.on = True
    v = window(scene)
    hover(v, window_point(v, (scene.x[7], scene.y[7], 0.0)), ticks=3)
    assert v.pointing.picking.hovered == 7
    rows = {name: (g, c, d) for name, g, c, d in v.pointing.hover_report.check}
    assert rows["x"] == (f"{gpu[0, 7]:.10g}", f"{cpu[0, 7]:.10g}", f"{gpu[0, 7] - cpu[0, 7]:+.3g}")
    assert rows["y"][2] == "+0"


# --- on a GPU ------------------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_gpu_tooltip_values_come_from_the_device_state(window):
    v = window(balls_with_known_state("gpu"))
    assert v.view.points.feed.path == "CUDA–GL interop"
    for item in range(len(KNOWN)):
        pos = v.scene.state()[0]
        hover(v, window_point(v, pos[item, :3]), ticks=3)
        assert v.pointing.picking.used == DEVICE_RAY
        check_tooltip_is_the_state(v, v.pointing.picking.hovered)
        assert v.pointing.picking.hovered == item
        assert v.pointing.hover_report.values["CUDA"].startswith(f"block {item // v.scene.knobs.block}, thread ")


@pytest.mark.gpu
def test_a_planted_gpu_fault_shows_both_values_in_the_tooltip(window):
    from sim.gpu import cuda

    with cuda.planted("sim/balls/proximity.cu", "-DPLANT_MARGIN=1.0f"):
        scene = create_scene("balls", preset="t", backend="gpu", variant="global")
    scene.checks.set_on(True)
    for _ in range(3):
        scene.advance_frame()
    marked = np.flatnonzero(scene.checks.mismatch)
    assert marked.size, "the wrong margin makes the GPU miss pairs"
    v = window(scene)
    pos = scene.state()[0]
    shown = None
    for item in marked[:40]:
        hover(v, window_point(v, pos[item, :3]), ticks=3)
        if v.pointing.picking.hovered in set(marked.tolist()) and v.pointing.hover_report.check:
            shown = v.pointing.hover_report
            break
    assert shown is not None, "a red ball on the surface is hovered"
    rows = {name: (g, c, d) for name, g, c, d in shown.check}
    gpu_count, cpu_count, difference = rows["partners"]
    assert int(gpu_count) != int(cpu_count) and difference == f"{int(gpu_count) - int(cpu_count):+d}"
    assert "only" in rows["partner ids"][2]


@pytest.mark.gpu
def test_a_gpu_ball_is_described_from_one_gather():
    """The gather (inspect.cu) against the GPU state read back array by array, for the ball with the most
    partners and random others, the pinned copies poisoned before each request."""
    scene = create_scene("balls", preset="block", n=3000, backend="gpu")
    for _ in range(6):
        scene.advance_frame()
    scene.finish()
    g, n = scene.gpu, scene.n
    count, slots = g.count[:n].get(), g.partners.reshape(g.capacity, g.stride)[:, :n].get()
    pos, vel, spin, ids = (a[:n].get() for a in (g.pos, g.vel, g.spin_yz, g.ids))
    assert count.max() > 0
    items = [int(np.argmax(count)), *np.random.default_rng().choice(n, 20, replace=False).tolist()]
    for item in items:
        if scene.inspector._gather is not None:
            for words in scene.inspector._gather.host:
                words[:] = np.nan
        got = scene.inspector.prefetch(item).values()
        partners = slots[: count[item], item]
        velocity = vel[item].copy()
        velocity[3] = 0.0
        spin_now = np.array([vel[item, 3], *spin[item], 0.0], np.float32)
        want = scene.inspector._values(
            item, int(ids[item]), pos[item], velocity, spin_now, pos[partners], [int(k) for k in ids[partners]]
        )
        assert got == want
        assert got["partners"].startswith(str(count[item]))
