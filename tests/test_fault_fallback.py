"""After a GPU fault the viewer draws through host uploads for the rest of the session: the sandbox
reports a device fault (and its worker ends without touching the dead context), every SceneView that
shows a device view afterwards uploads from the host and draws impostors, and the window says so once.
Interop itself is faked here (a "device" view whose write the feed pretends to map), so this runs
anywhere; tests/test_fault_fallback_gpu.py makes a real fault."""

import dataclasses
import os

import numpy as np
import pytest
from gl_support import HostOnly, needs_egl

from sim.registry import create_scene
from sim.userkernel import faults
from sim.userkernel.sandbox import RunResult, Sandbox, SandboxError
from viewer.render import field as field_module
from viewer.render.points import feed as points_feed
from viewer.render.view import FAULTED

FAULT = "the kernel faulted: cudaErrorIllegalAddress: an illegal memory access was encountered"


@pytest.fixture(autouse=True)
def no_fault_yet():
    faults.forget()
    yield
    faults.forget()


class DeviceLike(HostOnly):
    """A CPU scene whose views claim to live on the device (``write`` set); the feeds' device path is
    faked by ``pretend_interop``, which counts its writes."""

    def view(self, color_mode):
        return dataclasses.replace(self._scene.view(color_mode), write=self._never_called)

    @staticmethod
    def _never_called(*arrays):
        raise AssertionError("the faked device path never calls write")


@pytest.fixture
def pretend_interop(monkeypatch):
    """The feeds' interop writes replaced by host uploads into the same GL objects; returns the count."""
    writes = {"points": 0, "field": 0}

    def points(self, view):
        writes["points"] += 1
        self._upload_from_host(view)
        self.spheres.set_count(int(view.count))

    def field(self, view, rows, cols):
        writes["field"] += 1
        values = np.ascontiguousarray(view.host(), dtype=np.float32)
        buffer = self.values_buffer()
        buffer.write(values)  # where CUDA writes, and from there into the texture where one is drawn
        if not self.in_storage:
            self.texture.write(buffer, alignment=4)
        self.data_range = (float(np.nanmin(values)), float(np.nanmax(values)))

    monkeypatch.setattr(points_feed.PointsFeed, "_write_on_device", points)
    monkeypatch.setattr(field_module.FieldFeed, "_write_on_device", field)
    return writes


def scene_of(kind: str):
    if kind == "points":
        return create_scene("balls", preset="block", n=400, seed=4)
    return create_scene("heat", preset="plate", n=96 * 64)


# --- the sandbox reports a device fault, its worker ends quietly --------------------------------------------
FREED: list[str] = []  # what was destroyed, in order


class LoudWhenFreed:
    """Stands for a CUDA event of the dead context: destroying it would fail and print."""

    def __del__(self):
        FREED.append("event")


def device_fault_job(conn, source, inputs, block, repeats, builtin):
    """A worker job: a launch "faults" while CUDA objects are alive in the job's frame; or answers."""
    if not inputs.get("fault"):
        return RunResult({"pid": np.array(os.getpid())})
    event = LoudWhenFreed()  # noqa: F841  held by the fault's traceback, as the job's events are
    try:
        raise RuntimeError("cudaErrorIllegalAddress: an illegal memory access was encountered")
    except RuntimeError as exc:
        raise SandboxError("fault", f"the kernel faulted: {exc}", device=True) from None


def python_fault_job(conn, source, inputs, block, repeats, builtin):
    raise SandboxError("fault", "the adapter broke")


@pytest.fixture
def source(tmp_path):
    """A user's kernel file for heat's step stage (the fake jobs never compile it)."""
    from sim.heat import SPEC as HEAT
    from sim.userkernel import source as user_source

    path = tmp_path / "my_step.cu"
    path.write_text('extern "C" __global__ void step() {}\n')
    return user_source.load(path, HEAT, "step")


def test_a_device_fault_is_reported_and_the_next_run_gets_a_new_worker(source):
    with Sandbox(time_limit_s=10.0, job=device_fault_job) as box:
        first = int(box.run(source, {}, 32).outputs["pid"])
        assert faults.seen() is None
        with pytest.raises(SandboxError) as caught:
            box.run(source, {"fault": True}, 32)
        assert caught.value.kind == "fault" and caught.value.device
        assert faults.seen() == str(caught.value) == FAULT
        assert int(box.run(source, {}, 32).outputs["pid"]) != first, "the next run starts a new worker"


class OneRequest:
    """The worker's end of the pipe: one request, then what the worker sent."""

    def __init__(self, inputs):
        self.requests = [(None, inputs, 32, 0, ())]
        self.sent = []

    def recv(self):
        if not self.requests:
            raise EOFError
        return self.requests.pop()

    def send(self, message):
        self.sent.append(message)


class Ended(BaseException):
    pass


def test_after_a_device_fault_the_worker_ends_before_any_cuda_object_is_destroyed(monkeypatch):
    """Freed on a dead context, each CUDA event's destructor fails and prints "Exception ignored in
    Event.__del__" on the caller's terminal (``check`` after a fault): the worker answers, then ends at
    once, while the fault's traceback still holds them."""
    from sim.userkernel import sandbox

    exits = []

    def end(code):
        exits.append((code, list(FREED)))
        raise Ended

    monkeypatch.setattr(os, "_exit", end)
    monkeypatch.setattr(sandbox.signal, "signal", lambda *args: None)  # the worker ignores Ctrl-C; this test may not
    FREED.clear()
    conn = OneRequest({"fault": True})
    with pytest.raises(Ended):
        sandbox.serve(conn, device_fault_job)
    assert conn.sent == [("error", "fault", FAULT, True)]
    assert exits == [(0, [])], "ended with the job's CUDA objects still alive"
    FREED.clear()
    conn = OneRequest({"fault": True})
    sandbox.serve(conn, python_fault_job)  # not the GPU's fault: the worker returns as before
    assert conn.sent == [("error", "fault", "the adapter broke", False)] and len(exits) == 1


def test_a_fault_of_the_workers_python_is_not_a_gpu_fault(source):
    with Sandbox(time_limit_s=10.0, job=python_fault_job) as box, pytest.raises(SandboxError) as caught:
        box.run(source, {}, 32)
    assert caught.value.kind == "fault" and not caught.value.device and faults.seen() is None


# --- the views go through the host after it -----------------------------------------------------------------
@needs_egl
@pytest.mark.parametrize("kind", ["points", "field"])
def test_after_a_fault_device_views_go_through_the_host_and_draw_the_same_picture(gl, pretend_interop, kind):
    from viewer.render.offscreen import Offscreen
    from viewer.render.view import SceneView, default_camera

    scene = scene_of(kind)
    device, mode = DeviceLike(scene), next(iter(scene.color_modes))
    view, target = SceneView(gl), Offscreen(gl, (320, 240))
    host_view = SceneView(gl)

    def picture(scene_view, shown) -> np.ndarray:
        scene_view.show(shown, mode)
        scene_view.draw(target.fbo, default_camera(scene_view.current), target.size)
        return target.read_rgb().astype(int)

    try:
        picture(view, device)
        assert view.feed.path == "CUDA–GL interop" and pretend_interop[kind] == 1
        faults.report(FAULT)
        scene.advance_frame()
        after = picture(view, device)
        assert view.feed.path == "host upload" and pretend_interop[kind] == 1, "no interop write after the fault"
        assert view.feed.fallback_reason == FAULTED and view.fault == FAULT
        if kind == "points":
            assert view.points.splat is None and view.points.drawn_as == "impostors"
        expected = picture(host_view, scene)
        assert np.array_equal(after, expected) and expected.std() > 5
    finally:
        target.release()
        view.release()
        host_view.release()


# --- the window says it once -----------------------------------------------------------------------------------
@pytest.fixture
def device_window(tmp_path, pretend_interop):
    """A window showing a "device" balls scene through the faked interop."""
    from viewer.window.app import Viewer
    from viewer.window.display import display_problem

    try:
        v = Viewer(
            DeviceLike(scene_of("points")),
            640,
            400,
            visible=display_problem() is None,
            max_fps=None,
            screenshot_dir=tmp_path / "screenshots",
            recording_dir=tmp_path / "recordings",
        )
    except Exception as exc:  # noqa: BLE001  no window of either kind here
        pytest.skip(f"no window: {exc}")
    yield v
    v.close()


@pytest.mark.window
def test_the_window_says_once_that_it_draws_through_host_copies_after_a_fault(device_window, pretend_interop):
    v = device_window
    for _ in range(3):
        v.tick()
    assert v.view.feed.path == "CUDA–GL interop" and "host copies" not in v.message
    faults.report(FAULT)
    v.tick()
    assert v.message == f"GPU balls drawn through host copies: {FAULTED}"
    assert v.view.feed.path == "host upload"
    writes = pretend_interop["points"]
    v.controller.say("something else")
    for _ in range(3):
        v.tick()
    assert v.message == "something else", "said once"
    assert pretend_interop["points"] == writes and v.view.feed.path == "host upload"
