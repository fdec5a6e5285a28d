"""The panel's live distance histogram: cadence, bucket width, size limit and errors through the
controller (no window), then once in a real window (Xvfb under `make test`)."""

import dataclasses
import math
import time

import pytest

from sim import create_scene
from viewer.live_histogram import EVERY_FRAMES, TIME_SHARE
from viewer.window.controller import Controller
from viewer.window.display import display_problem


def all_pairs(n: int) -> int:
    return n * (n - 1) // 2


@pytest.fixture(scope="module")
def balls_t():
    return create_scene("balls", preset="T")


@pytest.fixture
def ctl(balls_t):
    ctl = Controller(balls_t, paused=True)
    ctl.histogram.set_enabled(True)
    assert ctl.histogram.frame(balls_t)  # the first frame takes the scene's width range and counts
    return ctl


def test_off_by_default_then_counts_every_pair_on_the_cpu(balls_t):
    hist = Controller(balls_t).histogram
    assert not hist.enabled and not hist.frame(balls_t) and hist.result is None
    hist.set_enabled(True)
    assert hist.frame(balls_t)
    assert int(hist.result.counts.sum()) == all_pairs(balls_t.n)
    assert hist.width == pytest.approx(1.08)  # the T balls' radius
    assert (hist.range.lo, hist.range.hi) == (0.1, 50.0)
    assert "on CPU" in hist.timing_line() and f"{all_pairs(balls_t.n):,} pairs" in hist.timing_line()


def test_recounts_every_tenth_frame_and_at_once_on_a_new_width(ctl):
    hist = ctl.histogram
    assert not any(hist.frame(ctl.scene) for _ in range(EVERY_FRAMES - 1))
    time.sleep(hist.last_cost_s / TIME_SHARE + 0.01)
    assert hist.frame(ctl.scene)
    hist.set_width(2.5)
    assert hist.frame(ctl.scene) and hist.result.width == 2.5
    assert int(hist.result.counts.sum()) == all_pairs(ctl.scene.n)


def test_the_recount_waits_for_all_its_time_not_only_the_kernel(ctl, monkeypatch):
    """g(r)'s ideal gas and the read back count too: a recount whose kernel says 0 ms but that took
    60 ms waits 60 ms / TIME_SHARE before the next one."""
    from sim.sdh import live

    counted = live.distance_histogram

    def slow(*args, **kwargs):
        time.sleep(0.06)
        return dataclasses.replace(counted(*args, **kwargs), ms=0.0)

    monkeypatch.setattr("sim.sdh.live.distance_histogram", slow)
    hist = ctl.histogram
    hist.set_width(2.0)
    assert hist.frame(ctl.scene) and hist.result.ms == 0.0 and hist.last_cost_s >= 0.06
    assert not any(hist.frame(ctl.scene) for _ in range(EVERY_FRAMES + 2))  # 0.3 s not yet gone
    time.sleep(hist.last_cost_s / TIME_SHARE + 0.01)
    assert hist.frame(ctl.scene)


@pytest.mark.parametrize("width", [0, math.nan, -1.0, "junk"])
def test_a_bad_width_is_reported_and_a_good_one_recovers(ctl, width):
    hist = ctl.histogram
    hist.set_width(width)
    assert hist.frame(ctl.scene)
    assert hist.result is None and "bucket width must be positive" in hist.message
    hist.set_width(1.0)
    assert hist.frame(ctl.scene) and hist.result is not None and hist.message == ""


def test_above_the_size_limit_nothing_is_counted(ctl, monkeypatch):
    def must_not_run(*args, **kwargs):
        raise AssertionError("counted above the limit")

    monkeypatch.setattr("sim.sdh.live.distance_histogram", must_not_run)
    ctl.histogram.limits["cpu"] = 1000
    ctl.histogram.set_width(2.0)  # a new width recounts at once
    assert ctl.histogram.frame(ctl.scene)
    assert ctl.histogram.result is None
    assert ctl.histogram.message.startswith("histogram off above 1,000 balls on the CPU")


def test_a_failing_count_becomes_a_message(ctl, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("device lost")

    monkeypatch.setattr("sim.sdh.live.distance_histogram", broken)
    ctl.histogram.set_width(2.0)
    assert ctl.histogram.frame(ctl.scene)
    assert ctl.histogram.message == "histogram failed: device lost"


def test_particles_get_their_own_width_range(ctl):
    ctl.switch_scene("particles")
    hist = ctl.histogram
    assert hist.frame(ctl.scene)
    assert (hist.range.lo, hist.range.default, hist.range.hi) == pytest.approx((0.0005, 0.002, 0.05))
    assert hist.width == pytest.approx(0.002)
    assert int(hist.result.counts.sum()) == all_pairs(ctl.scene.n)


@pytest.mark.gpu
def test_a_gpu_scene_is_counted_on_the_gpu_like_on_the_cpu():
    counts = {}
    for backend in ("cpu", "gpu"):
        scene = create_scene("balls", preset="T", backend=backend)
        hist = Controller(scene).histogram
        hist.set_enabled(True)
        assert hist.frame(scene) and f"on {backend.upper()}" in hist.timing_line()
        counts[backend] = hist.result.counts
    assert (counts["gpu"] == counts["cpu"]).all()


@pytest.mark.window
@pytest.mark.skipif(display_problem() is not None, reason=f"needs a display: {display_problem()}")
def test_window_draws_the_live_histogram():
    from viewer.window.app import Viewer

    v = Viewer(create_scene("balls", preset="T"), 900, 600, max_fps=None)
    try:
        hist = v.controller.histogram
        hist.set_enabled(True)
        for _ in range(3):
            assert v.tick()
        assert int(hist.result.counts.sum()) == all_pairs(v.scene.n)
        assert "on CPU" in hist.timing_line()
        hist.set_width(0.1)  # 400 buckets: the farthest pairs share the last one
        assert v.tick() and hist.result.width == 0.1 and hist.truncated
        hist.set_width(math.nan)
        assert v.tick() and v.tick() and "must be positive" in hist.message
        hist.limits["cpu"] = 10
        hist.set_width(1.0)
        assert v.tick() and "histogram off above 10 balls" in hist.message
    finally:
        v.close()
