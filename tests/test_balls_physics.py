"""Contact physics of the balls scene on the CPU backend."""

import numpy as np
import pytest

from sim import create_scene
from sim.balls import world


def scene_with(balls, velocities=None, **params):
    scene = create_scene("balls", preset="T")
    pos = np.array(balls, np.float32)
    vel = np.zeros_like(pos) if velocities is None else np.array(velocities, np.float32)
    scene.set_state(pos, vel)
    for name, value in params.items():
        scene.controls.set_param(name, value)
    return scene


def run(scene, seconds):
    for _ in range(round(seconds * 60)):
        scene.advance_frame()


def contact_overlaps(scene):
    """Overlap / radius of every touching pair in the current pair list."""
    p = scene.pos
    a, b = scene.pairs[:, 0], scene.pairs[:, 1]
    dist = np.linalg.norm(p[a, :3] - p[b, :3], axis=1)
    overlap = (p[a, 3] + p[b, 3] - dist) / np.minimum(p[a, 3], p[b, 3])
    return overlap[overlap > 0]


def test_one_ball_rests_on_the_trough_bottom():
    r = world.DEFAULT_RADIUS
    scene = scene_with([(0.3, -20.0, 10.0, r)])
    run(scene, 5.0)
    x, y, z, _ = scene.pos[0]
    w0 = scene.settings.contact_freq
    sag = world.GRAVITY / w0**2  # static spring compression under its own weight
    assert y == pytest.approx(-world.TROUGH_RADIUS + r - sag, abs=2e-3)
    # rolling resistance may hold it a little off the lowest line (tan angle < mu_r)
    assert abs(x) < world.TROUGH_RADIUS * scene.settings.rolling and z == pytest.approx(10.0, abs=1e-3)
    assert np.linalg.norm(scene.vel[0, :3]) < 1e-2


def test_two_balls_collide_and_separate():
    r = 1.5
    e = 0.5
    scene = scene_with([(-5, 10, 0, r), (5, 10, 0, r)], [(4, 0, 0, 0), (-4, 0, 0, 0)], gravity=0.0, restitution=e)
    run(scene, 2.0)
    v = scene.vel[:, :3]
    assert v[0, 0] < 0 < v[1, 0], "the balls bounced back"
    assert np.linalg.norm(scene.pos[0, :3] - scene.pos[1, :3]) > 2 * r + 1.0, "and moved apart"
    assert np.abs(v.sum(axis=0)).max() < 1e-4, "equal masses: momentum stays zero"
    # the dashpot is tuned for restitution e; a contact lets go once the force would pull
    # (before the overlap is gone), which returns a little more: measured e = 0.58 for 0.5
    assert e * 8.0 < v[1, 0] - v[0, 0] < (e + 0.15) * 8.0
    assert np.abs(scene.omega).max() == 0.0, "head-on: no friction, no spin"


def test_benchmark_pile_settles():
    # two tiers of the benchmark lattice (t has five): a pile, small enough to step on one core
    # (sim/cmdline/threads.py);
    # t's 8575 balls step on every thread, where a busy 2-core machine spends 10 ms a launch in numba's workers
    scene = create_scene("balls", preset="block", n=2 * 1715)
    assert scene.pos[:, 1].max() > 2.0 * scene.pos[:, 3].max(), "a second tier above the first"
    n0 = scene.n
    peak = 0.0
    for second in range(10):
        run(scene, 1.0)
        assert np.isfinite(scene.pos).all() and np.isfinite(scene.vel).all()
        peak = max(peak, scene.kinetic_energy())
        if second >= 5:
            # a falling pile compresses briefly; at rest overlaps stay a small fraction of r
            assert contact_overlaps(scene).max() < 0.1
    assert scene.kinetic_energy() < 1e-3 * peak, "kinetic energy decays"
    assert scene.n >= n0 - 10, "the pile stays on the platform"
    assert scene.pos[:, 1].max() < 0.0, "everything sits in the trough"


def test_fallen_balls_are_removed():
    r = world.DEFAULT_RADIUS
    inside = (0.0, -35.0, 0.0, r)
    beyond_side = (55.0, 0.0, 0.0, r)
    beyond_end = (0.0, 0.0, 90.0, r)
    scene = scene_with([beyond_side, inside, beyond_end])
    run(scene, 1.0)
    assert scene.n == 3, "still falling"
    run(scene, 4.0)
    assert scene.n == 1
    assert scene.pos[0, 1] == pytest.approx(-world.TROUGH_RADIUS + r, abs=0.01)


def test_drip_fills_towards_the_ball_count_without_overlaps():
    scene = create_scene("balls", preset="drip", n=300)
    assert scene.n == 0
    scene.advance_frame()
    first = scene.n
    assert first > 0
    gap = np.linalg.norm(scene.pos[:, None, :3] - scene.pos[None, :, :3], axis=2)
    np.fill_diagonal(gap, np.inf)
    assert gap.min() >= 2 * world.DEFAULT_RADIUS, "new balls never start inside each other"
    run(scene, 3.0)
    assert first < scene.n <= 300


def test_sliders_clamp_and_ignore_junk():
    scene = create_scene("balls", preset="T")
    assert scene.controls.set_param("gravity", 1e9) == 30.0
    assert scene.controls.set_param("gravity", float("nan")) == 30.0
    assert scene.controls.set_param("friction", "abc") == scene.controls.param_value("friction")
    scene.advance_frame()
    assert np.isfinite(scene.pos).all()
