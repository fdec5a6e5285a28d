"""A scene's CPU kernels step on threads sized to the problem: one core for small ones, numba's all beyond."""

import numba

from sim import create_scene
from sim.cmdline.threads import sized_threads


def threads_while_stepping(scene, monkeypatch) -> set[int]:
    """numba's thread count inside each step of a frame and of a single step."""
    seen = set()
    step = scene._step
    monkeypatch.setattr(scene, "_step", lambda: (seen.add(numba.get_num_threads()), step()))
    before = numba.get_num_threads()
    scene.advance_frame()
    scene.run_frame(1)
    assert numba.get_num_threads() == before, "the caller's setting comes back"
    return seen


def test_small_balls_scenes_step_on_one_core(monkeypatch):
    scene = create_scene("balls", preset="T")
    assert scene.n == 1715
    assert threads_while_stepping(scene, monkeypatch) == {1}


def test_larger_balls_scenes_step_on_every_thread(monkeypatch):
    scene = create_scene("balls", preset="t")
    assert scene.n == 8575
    assert threads_while_stepping(scene, monkeypatch) == {numba.config.NUMBA_NUM_THREADS}


def test_sized_threads_one_up_to_the_serial_size_then_all():
    assert sized_threads(0, 0) == 1 and sized_threads(4096, 4096) == 1
    assert sized_threads(4097, 4096) == numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS


def test_larger_scenes_keep_the_callers_limit(monkeypatch):
    """An MPI rank's share of the cores (set before its steps) is not widened by a frame."""
    scene = create_scene("balls", preset="t")
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        assert threads_while_stepping(scene, monkeypatch) == {1}
    finally:
        numba.set_num_threads(before)
