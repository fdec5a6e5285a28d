"""Picking: the host's ray test agrees with a brute force, and the CUDA ray test with it; a field's cell is
found by arithmetic and every scene describes its items; on a GPU a ball's description gathered on the device
(inspect.cu) is the state read back array by array. The device pick's way on host stand-ins is in
test_picking_device.py, the tooltips in a window in test_picking_window.py."""

import numpy as np
import pytest

from sim import create_scene
from sim.registry import SCENES
from viewer.pick.picker import field_cell
from viewer.pick.ray import ray_hit


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
