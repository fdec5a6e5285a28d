"""The device pick's way, on host stand-ins (no GPU needed): the ray test is launched inside the next mapping
of the items and read a frame later, queued work runs once on the draw's mapping or on its own and is dropped
when mapping fails; a device scene's tooltip shows a frame late and never waits, a scene without prefetch is
described at once."""

import types
from contextlib import contextmanager

import numpy as np
from test_picking import random_spheres

from sim import create_scene
from viewer.pick.ray import ray_hit


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
