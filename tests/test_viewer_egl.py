"""Which EGL device headless contexts open (viewer/gpu/egl.py): on a machine with several GPUs, the one that
CUDA computes on, so that CUDA–GL interop can register its buffers. Here with pretend devices, on any machine;
the GPU tests that assert the interop path (test_viewer_interop.py, test_picking_window.py) meet it on real ones."""

from __future__ import annotations

import pytest

from viewer.gpu import egl


class PretendEgl:
    """EGL devices 0..len(draws)-1, each drawn by the CUDA devices listed (none: a software renderer);
    a context made current when created, as moderngl's are."""

    def __init__(self, monkeypatch, draws: list[list[int]], cuda_devices: int, current: int):
        import moderngl

        self.draws, self.opened, self.current = draws, [], None
        monkeypatch.setattr(egl, "_cuda_device_count", lambda: cuda_devices)
        monkeypatch.setattr(egl, "_cuda_current_device", lambda: current)
        monkeypatch.setattr(egl, "_cuda_devices_of_current_gl", lambda: self.draws[self.current])
        monkeypatch.setattr(moderngl, "create_standalone_context", self.create)
        egl.interop_device_index.cache_clear()

    def create(self, backend, require, device_index=None):
        assert backend == "egl" and require == 330
        index = 0 if device_index is None else device_index
        if index >= len(self.draws):
            raise RuntimeError(f"Invalid EGL device id: {index}")
        self.opened.append(device_index)
        self.current = index
        return _Released()


class _Released:
    released = False

    def release(self):
        self.released = True


@pytest.fixture(autouse=True)
def fresh_choice(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    yield
    egl.interop_device_index.cache_clear()


def test_the_egl_device_that_cuda_draws_on_is_chosen(monkeypatch):
    pretend = PretendEgl(monkeypatch, [[1], [0], []], cuda_devices=2, current=0)
    assert egl.interop_device_index() == 1, "EGL's first device (its default) is CUDA's device 1"
    opened = len(pretend.opened)
    egl.standalone_context()
    assert pretend.opened[-1] == 1
    assert egl.interop_device_index() == 1 and len(pretend.opened) == opened + 1, "chosen once a process"


def test_egls_default_is_kept_where_cuda_draws_it(monkeypatch):
    pretend = PretendEgl(monkeypatch, [[1], [0]], cuda_devices=2, current=1)
    assert egl.interop_device_index() is None
    egl.standalone_context()
    assert pretend.opened == [None, None], "one look at the default, then the default"


def test_a_gpu_hidden_from_cuda_is_still_one_of_egls(monkeypatch):
    """CUDA_VISIBLE_DEVICES=1 (a parallel GPU test run's second worker): CUDA sees one device, its 0, which
    is EGL's second; EGL's default is the GPU CUDA does not see."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    PretendEgl(monkeypatch, [[], [0]], cuda_devices=1, current=0)
    assert egl.interop_device_index() == 1


def test_one_gpu_or_none_opens_the_egl_default_without_looking(monkeypatch):
    for count in (0, 1):
        pretend = PretendEgl(monkeypatch, [[5]], cuda_devices=count, current=0)
        assert egl.interop_device_index() is None
        egl.standalone_context()
        assert pretend.opened == [None], "no device_index, no look: EGL's default display, as before"


def test_no_egl_device_on_cudas_gpu_leaves_the_default(monkeypatch):
    """(interop then falls back to host uploads and says why)"""
    pretend = PretendEgl(monkeypatch, [[1], []], cuda_devices=2, current=0)
    assert egl.interop_device_index() is None
    egl.standalone_context()
    assert pretend.opened[-1] is None


def test_a_headless_window_opens_on_the_chosen_device(monkeypatch):
    import importlib

    from viewer.window import display

    pyglet = display.pyglet
    windows = importlib.import_module("pyglet.window")  # (the module, not pyglet's lazy proxy)

    made = []
    monkeypatch.setattr(display, "interop_device_index", lambda: 1)
    monkeypatch.setitem(pyglet.options, "headless", True)
    monkeypatch.setitem(pyglet.options, "headless_device", 0)
    monkeypatch.setattr(windows, "Window", lambda **kw: made.append(pyglet.options["headless_device"]))
    display._make_window(64, 48, False, "test")
    assert made == [1], "pyglet's EGL device set before the window opens"
