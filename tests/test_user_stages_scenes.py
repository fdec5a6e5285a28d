"""Each scene's replaceable stage on its own data: the live scene's hand-over (its state in, the user's
result back: sdh's counts, durbin's frames, particles' forces, balls' pairs), and durbin's, particles' and
balls' CPU twins against a solution of their own (SciPy's Toeplitz solve, the course's O(n^2) starter, the
balls' sweep) with comparisons that name the damaged items. Every stage's compile, inputs and launch:
test_user_stages.py."""

from __future__ import annotations

import numpy as np
import pytest
from test_user_stages import adapter_of

from sim.framework.user_stages import item_rows


# --- the live scene: its state in, the user's result back ------------------------------------------------
def test_sdh_scene_takes_the_users_counts_and_marks_the_wrong_bins():
    from sim.sdh.scene import HistogramScene

    scene = HistogramScene(n=300)
    adapter = adapter_of("sdh", "histogram")
    inputs = scene.user_stage_inputs("histogram")
    assert int(inputs["n"]) == 300 and int(inputs["nb"]) == scene.buckets
    np.testing.assert_array_equal(inputs["y"], scene.points[:, 1])
    expected = adapter.expected(inputs)
    got = expected["hist"].copy()
    got[5] += 2
    result = adapter.compare(inputs, expected, {"hist": got})
    scene.apply_user_stage("histogram", inputs, {"hist": got}, result)
    assert scene.counts.dtype == np.int64 and scene.counts[5] == int(expected["hist"][5]) + 2
    assert np.flatnonzero(scene.checks.mismatch).tolist() == [5]
    assert scene.checks.verification.unit == "buckets" and scene.checks.verification.differing == 1


def test_durbin_expected_is_the_twin_and_solves_each_system():
    import scipy.linalg

    from sim.durbin import durbin_cpu
    from sim.durbin.inputs import toeplitz_column

    adapter = adapter_of("durbin", "batched")
    inputs = adapter.inputs(65, 3)
    r = inputs["r"]
    assert r.shape == (65, int(inputs["order"])) and int(inputs["systems"]) == 65
    expected = adapter.expected(inputs)
    for s in (0, 31, 64):
        twin = durbin_cpu.DurbinCpu(r[s])
        twin.run()
        np.testing.assert_array_equal(expected["y"][s], twin.y)
        np.testing.assert_array_equal(expected["alphas"][s], twin.alphas)
        assert expected["betas"][s] == twin.betas[-1]
        np.testing.assert_allclose(
            expected["y"][s], scipy.linalg.solve_toeplitz(toeplitz_column(r[s]), -r[s]), rtol=0, atol=1e-10
        )
    assert np.all(expected["y"] != 0) and np.all(expected["alphas"] != 0)
    assert {o.start for o in adapter.outputs(inputs).values()} == {"poison"}


def test_durbin_compare_names_the_system_and_coefficient():
    adapter = adapter_of("durbin", "batched")
    inputs = adapter.inputs(9, 1)
    expected = adapter.expected(inputs)
    got = {name: value.copy() for name, value in expected.items()}
    got["y"][4, 7] += 1e-3
    got["alphas"][6, 2] = -got["alphas"][6, 2]
    got["betas"][2] = np.nan
    result = adapter.compare(inputs, expected, got)
    assert np.flatnonzero(result.mismatch).tolist() == [2, 4, 6]
    labels = [w.label for w in result.worst]
    assert labels == ["system 2 beta", "system 6 alpha 2", "system 4 coefficient 7"]
    assert [w.index for w in result.worst] == [2, 6, 4]
    assert abs(result.worst[2].difference - 1e-3) < 1e-12
    assert adapter.compare(inputs, expected, {k: v.copy() for k, v in expected.items()}).correct
    almost = {k: v.copy() for k, v in expected.items()}
    almost["y"][0, 0] = np.nextafter(almost["y"][0, 0], 1.0)  # one ulp off: exact means exact
    assert np.flatnonzero(adapter.compare(inputs, expected, almost).mismatch).tolist() == [0]


def test_durbin_scene_solves_its_frames_with_the_users_result():
    from sim import create_scene

    adapter = adapter_of("durbin", "batched")
    with pytest.raises(ValueError, match="lpc preset"):
        create_scene("durbin", preset="ar").user_stage_inputs("batched")
    scene = create_scene("durbin", preset="lpc")
    frame = int(scene.settings.frame)
    inputs = scene.user_stage_inputs("batched")
    assert inputs["r"].shape == (scene.lpc.frames, scene.lpc.order)
    expected = adapter.expected(inputs)
    got = {k: v.copy() for k, v in expected.items()}
    got["y"][3, 1] = 0.0
    result = adapter.compare(inputs, expected, got)
    scene.apply_user_stage("batched", inputs, got, result)
    assert scene.lpc.y[3, 1] == 0.0 and scene.checked == {}
    assert int(scene.settings.frame) == (frame + 1) % scene.lpc.frames  # a step moves the selected frame on
    assert np.flatnonzero(scene.checks.mismatch).tolist() == [3] and scene.checks.verification.unit == "frames"


def starter_forces(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The course's O(n^2) starter: every j in increasing order, sqrt and divisions."""
    from sim.particles.world import CUTOFF, MASS, MIN_R

    ax, ay = np.zeros(x.size), np.zeros(x.size)
    for i in range(x.size):
        for j in range(x.size):
            dx, dy = x[j] - x[i], y[j] - y[i]
            r2 = dx * dx + dy * dy
            if r2 > CUTOFF * CUTOFF:
                continue
            r2 = max(r2, MIN_R * MIN_R)
            coef = (1 - CUTOFF / np.sqrt(r2)) / r2 / MASS
            ax[i] += coef * dx
            ay[i] += coef * dy
    return ax, ay


def test_particles_expected_is_the_starters_forces_from_the_twins_bins():
    adapter = adapter_of("particles", "forces")
    inputs = adapter.inputs(129, 4)
    x, y, nb = inputs["x"], inputs["y"], int(inputs["nb"])
    assert inputs["start"].shape == (nb * nb + 1,) and inputs["start"][-1] == 129
    assert sorted(inputs["members"].tolist()) == list(range(129))
    expected = adapter.expected(inputs)
    ax, ay = starter_forces(x, y)
    np.testing.assert_array_equal(expected["ax"], ax)
    np.testing.assert_array_equal(expected["ay"], ay)
    assert np.count_nonzero(ax) > 10


def test_particles_compare_marks_particles_beyond_the_verifiers_tolerance():
    from sim.particles import user_stage

    adapter = adapter_of("particles", "forces")
    inputs = adapter.inputs(127, 2)
    expected = adapter.expected(inputs)
    atol = user_stage.tolerance(float(inputs["size"]))
    got = {k: v.copy() for k, v in expected.items()}
    got["ax"][12] += 1.0
    got["ay"][40] = np.nan
    got["ax"][7] += 0.5 * atol  # rounding: within what a step's check allows
    result = adapter.compare(inputs, expected, got)
    assert np.flatnonzero(result.mismatch).tolist() == [12, 40]
    assert [w.label for w in result.worst] == ["particle 40 (y)", "particle 12 (x)"]
    assert result.worst[1].difference == pytest.approx(1.0)
    assert "1e-12 of the box" in result.rule


def test_particles_scene_moves_with_the_users_forces():
    from sim.particles import pipeline_cpu
    from sim.particles.scene import ParticlesScene

    scene = ParticlesScene(n=400)
    for _ in range(20):  # off the lattice: neighbours within the cutoff
        scene.advance(1)
    adapter = adapter_of("particles", "forces")
    inputs = scene.user_stage_inputs("forces")
    np.testing.assert_array_equal(inputs["x"], scene.x)
    before = [a.copy() for a in (scene.x, scene.y, scene.vx, scene.vy)]
    expected = adapter.expected(inputs)
    assert np.count_nonzero(expected["ax"]) > 0
    scene.apply_user_stage("forces", inputs, expected, adapter.compare(inputs, expected, expected))
    twin = pipeline_cpu.stepped_copy(*before, scene.size, scene.nbins)
    np.testing.assert_array_equal(scene.x, twin.x)
    np.testing.assert_array_equal(scene.vy, twin.vy)
    assert scene.checks.verification.differing == 0
    inputs = scene.user_stage_inputs("forces")
    expected = adapter.expected(inputs)
    got = {k: v.copy() for k, v in expected.items()}
    got["ax"][9] += 100.0
    scene.apply_user_stage("forces", inputs, got, adapter.compare(inputs, expected, got))
    assert np.flatnonzero(scene.checks.mismatch).tolist() == [9] and scene.checks.verification.unit == "particles"


def pair_set(pairs) -> set[tuple[int, int]]:
    return {(int(min(a, b)), int(max(a, b))) for a, b in pairs}


def test_balls_expected_is_the_twins_sweep_in_the_balls_own_numbers():
    from sim.balls import proximity_cpu, world

    adapter = adapter_of("balls", "proximity")
    inputs = adapter.inputs(1001, 6)
    order = inputs["order"]
    assert np.all(np.diff(inputs["z_max"]) >= 0) and sorted(order.tolist()) == list(range(1001))
    pos, vel = np.empty_like(inputs["pos"]), np.empty_like(inputs["vel"])
    pos[order], vel[order] = inputs["pos"], inputs["vel"]  # the balls as drawn
    twin, _, found = proximity_cpu.proximity_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN)
    expected = adapter.expected(inputs)
    count, slots = expected["count"], expected["partners"].reshape(1001, -1)
    listed = {(int(order[s]), int(order[p])) for s in range(1001) for p in slots[s, : count[s]]}
    assert pair_set(listed) == pair_set(twin) and found > 300 and int(count.sum()) == 2 * found


def test_balls_compare_takes_lists_as_sets_and_names_missing_and_extra_partners():
    adapter = adapter_of("balls", "proximity")
    inputs = adapter.inputs(129, 3)
    order = inputs["order"]
    expected = adapter.expected(inputs)
    count, k = expected["count"], int(inputs["k"])
    slots = expected["partners"].reshape(-1, k)
    shuffled = slots.copy()
    for s in np.flatnonzero(count > 1):  # any order is right
        shuffled[s, : count[s]] = shuffled[s, : count[s]][::-1]
    assert adapter.compare(inputs, expected, {"count": count.copy(), "partners": shuffled.ravel()}).correct
    a, b = (int(s) for s in np.flatnonzero(count >= 2)[:2])
    got_count, got = count.copy(), slots.copy()
    lost = int(got[a, count[a] - 1])
    got_count[a] -= 1  # a loses its last partner
    got[b, count[b] - 1] = 0x7FFFFFFF  # b's last slot names no ball
    result = adapter.compare(inputs, expected, {"count": got_count, "partners": got.ravel()})
    assert np.flatnonzero(result.mismatch).tolist() == sorted([int(order[a]), int(order[b])])
    by_ball = {w.index: w for w in result.worst}
    assert by_ball[int(order[a])].label == f"ball {int(order[a])}: missing {int(order[lost])}"
    assert by_ball[int(order[a])].difference == -1.0
    assert by_ball[int(order[b])].label.startswith(f"ball {int(order[b])}: missing ")
    assert by_ball[int(order[b])].label.endswith(", extra no ball")
    assert result.worst[0].index == int(order[a])  # its count is off: the larger difference first
    rows = item_rows(result, int(order[a]))  # ball order[a] is a in the kernel's (sorted) order
    assert rows == [("count", str(count[a] - 1), str(count[a]), f"{-1.0:+.3g}")]
    assert item_rows(result, int(np.flatnonzero(~result.mismatch)[0])) == [], "an item the check did not mark"


def test_balls_scene_steps_on_the_users_pairs():
    """A user's step: a pass on the scene's balls now, then the scene's forces and integration on its pairs,
    the same step as the scene's own pass and step from that state."""
    from sim import create_scene
    from sim.balls import pipeline_cpu

    scene = create_scene("balls", preset="T")  # a lattice 2.1 radii apart: neighbours within the reach
    scene.advance(7)
    twin = create_scene("balls", preset="T")
    twin.advance(7)
    adapter = adapter_of("balls", "proximity")
    steps = scene.steps
    inputs = scene.user_stage_inputs("proximity")
    assert int(inputs["n"]) == scene.n
    pairs, _, _ = pipeline_cpu.proximity(scene.pos, scene.vel, "global")
    expected = adapter.expected(inputs)
    scene.apply_user_stage("proximity", inputs, expected, adapter.compare(inputs, expected, expected))
    assert pair_set(scene.pairs) == pair_set(pairs) and len(pairs) > 100
    assert scene.checks.verification.differing == 0 and scene.checks.mismatch.shape == (scene.n,)
    twin.host.pairs = pairs  # the scene's own step on the same pairs
    pipeline_cpu.step(twin.host, twin.settings, twin.trough, twin.spec.dt)
    np.testing.assert_array_equal(scene.pos, twin.pos)
    assert scene.steps == steps  # the step is counted by whoever runs it (Scene.run_frame)


def test_balls_scene_drops_fallen_balls_before_a_users_pass():
    from sim import create_scene

    scene = create_scene("balls", preset="T")
    scene.host.pos[5, 1] = scene.trough.fallen_y - 1.0
    n = scene.n
    inputs = scene.user_stage_inputs("proximity")
    assert scene.n == n - 1 and int(inputs["n"]) == n - 1
