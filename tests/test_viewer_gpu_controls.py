"""The viewer's GPU controls driven through a stand-in scene: the real balls scene made to believe a
GPU is there (CUDA proximity runs the CPU twin): keys, controller messages, panel, block colours,
GPU errors, trough changes, and the fallback from CUDA–GL interop to host uploads. No GPU needed.
"""

import dataclasses

import numpy as np
import pytest
from gl_support import needs_egl

from sim.balls import pipeline_cpu, world
from sim.balls.scene import BallsScene
from sim.contract import BLOCK_COLORS
from sim.framework.checks import Checks, Verification
from sim.gpu.backend import BackendUnavailable
from viewer.gpu.egl import VENDOR_VARIABLE, prefer_nvidia_egl
from viewer.keys import KeyMap, key
from viewer.render.camera import OrbitCamera
from viewer.window.controller import Controller

WIDE = world.TroughWalls(800.0, -1600.0, 1600.0)


class PretendChecks(Checks):
    """Verification turned on shows a check that found 3 balls differing."""

    def set_on(self, on):
        super().set_on(on)
        if on:
            self.verification = Verification(
                "the CPU z-sweep", 3, self.scene.n, 4.2, 7, 1, {"pairs on the GPU": 1200, "pairs on the CPU": 1203}
            )


class GpuContractScene(BallsScene):
    """A small CPU balls scene that pretends a GPU is there: the GPU knobs, switches and verification
    act as the contract says; the state stays on the host and CUDA proximity runs the CPU twin."""

    def __init__(self, gpu: bool = True, n: int = 300):
        self._gpu_here = gpu
        super().__init__(preset="block", n=n, seed=2, block=256)
        self.checks = PretendChecks(self)
        self.controls.set_toggle("cuda_proximity", False)

    @property
    def gpu_reason(self) -> str:
        return "" if self._gpu_here else "no CUDA device in this test"

    @property
    def n(self) -> int:
        return self.host.n

    def set_backend(self, backend):
        if backend == "gpu" and self.gpu_reason:
            raise BackendUnavailable(self.gpu_reason)
        self.backend = backend  # the state stays on the host: the tests do not step on the "GPU"

    def _gpu_pass_for_cpu(self):
        host = self.host
        host.pairs, self.last_tests, self.last_pairs = pipeline_cpu.proximity(
            host.pos, host.vel, self.knobs.variant, self.timer
        )
        self.thread_of = np.arange(self.n)


def press(ctl, symbol, modifiers=0):
    KeyMap(ctl).press(symbol, modifiers)
    return ctl.message


@pytest.fixture
def ctl():
    return Controller(GpuContractScene())


def test_q_cycles_the_variants_and_says_which(ctl):
    seen = [press(ctl, key.Q) for _ in range(4)]
    assert ctl.scene.knobs.variant == "global"
    assert [m.split()[3] for m in seen] == ["texture", "shared", "grid", "global"]
    assert seen[0].startswith("q: proximity variant texture")
    assert "F4" in seen[0], "the variant is only used with CUDA proximity on: say so"
    press(ctl, key.F4)
    assert "F4" not in press(ctl, key.Q)


def test_shift_q_cycles_block_sizes_and_wraps(ctl):
    sizes = [int(press(ctl, key.Q, key.MOD_SHIFT).split()[-1]) for _ in range(6)]
    assert sizes == [512, 1024, 32, 64, 128, 256]
    assert ctl.scene.knobs.block == 256


def test_f4_toggles_cuda_proximity(ctl):
    assert "on" in press(ctl, key.F4) and ctl.scene.cuda_proximity
    assert "off" in press(ctl, key.F4) and not ctl.scene.cuda_proximity


def test_v_toggles_verification_and_says_so(ctl):
    assert "F4" in press(ctl, key.V) and not ctl.scene.checks.on, "v checks CUDA work: say how to run it"
    press(ctl, key.F4)
    assert press(ctl, key.V).startswith("v: verification on") and ctl.scene.checks.on
    assert press(ctl, key.V) == "v: verification off" and not ctl.scene.checks.on


def test_c_colours_by_block_only_when_a_cuda_kernel_handles_the_balls(ctl):
    start = ctl.color_mode
    assert "F4" in press(ctl, key.C) and ctl.color_mode == start
    press(ctl, key.F4)
    assert press(ctl, key.C) == "c: colour by CUDA block" and ctl.color_mode == BLOCK_COLORS
    press(ctl, key.C)
    assert ctl.color_mode == start, "c again goes back to the previous colouring"


def test_block_colours_end_when_the_gpu_kernels_stop(ctl):
    press(ctl, key.F4)
    press(ctl, key.C)
    ctl.scene.controls.toggles["cuda_proximity"] = False  # e.g. switched off from elsewhere
    ctl.watch_scene()
    assert ctl.color_mode != BLOCK_COLORS and "off" in ctl.message


def test_a_gpu_error_is_reported_once(ctl):
    ctl.scene.gpu_error = "proximity.cu(12): error: expected a ';'"
    ctl.watch_scene()
    assert "proximity.cu(12)" in ctl.message
    ctl.say("something else")
    ctl.watch_scene()
    assert ctl.message == "something else"


def test_scene_errors_become_messages(ctl):
    def broken(_):
        raise RuntimeError("out of memory")

    ctl.scene.knobs.set_variant = broken
    press(ctl, key.Q)
    assert "failed" in ctl.message and "out of memory" in ctl.message
    ctl.gpu.set_block(3)
    assert "block size must be a multiple of 32" in ctl.message


def test_gpu_keys_say_why_when_the_scene_cannot_use_a_gpu():
    ctl = Controller(GpuContractScene(gpu=False))
    for symbol, modifiers in [(key.A, 0), (key.F4, 0), (key.V, 0), (key.C, 0), (key.Q, 0), (key.Q, key.MOD_SHIFT)]:
        message = press(ctl, symbol, modifiers)
        assert "needs a GPU: no CUDA device in this test" in message, message
    scene = ctl.scene
    assert (scene.backend, scene.knobs.variant, scene.knobs.block, scene.cuda_proximity, scene.checks.on) == (
        "cpu",
        "global",
        256,
        False,
        False,
    )


def test_a_switches_the_backend_through_the_scene(ctl):
    press(ctl, key.A)
    assert ctl.scene.backend == "gpu" and ctl.message == "physics on gpu"
    press(ctl, key.A)
    assert ctl.scene.backend == "cpu"


def test_large_troughs_are_framed_with_room_to_spare():
    small = OrbitCamera.framing(40.0, -80.0, 80.0)
    large = OrbitCamera.framing(800.0, -1600.0, 1600.0)
    for camera, reach in ((small, np.hypot(40, 80)), (large, np.hypot(800, 1600))):
        assert camera.distance + 2.5 * reach < camera.far, "the floor reaches 2.5 trough sizes"
        assert camera.max_distance >= 3 * camera.distance
    assert small.far == pytest.approx(small.distance + 2000.0)


def test_nvidia_egl_is_preferred_only_where_installed(tmp_path):
    nvidia = tmp_path / "10_nvidia.json"
    system = tmp_path / "vendors"
    system.mkdir()
    (system / "50_mesa.json").write_text("{}")
    env = {}
    assert not prefer_nvidia_egl(env, nvidia, system) and env == {}
    nvidia.write_text("{}")
    assert prefer_nvidia_egl(env, nvidia, system)
    assert env[VENDOR_VARIABLE] == f"{nvidia}:{system / '50_mesa.json'}"
    chosen = {VENDOR_VARIABLE: "/somewhere/else.json"}
    assert not prefer_nvidia_egl(chosen, nvidia, system)
    assert chosen[VENDOR_VARIABLE] == "/somewhere/else.json"


# --- with an OpenGL context (EGL, no display needed) --------------------------------------------


@pytest.fixture
def no_interop(monkeypatch):
    """Registration fails as it does on a Mesa context or without cuda-bindings, on any machine."""
    import viewer.render.field
    import viewer.render.points.feed
    from viewer.gpu.interop import InteropError

    def refuse(*args, **kwargs):
        raise InteropError("cudaGraphicsGLRegisterBuffer(buffer 1) failed: cudaErrorOperatingSystem")

    monkeypatch.setattr(viewer.render.points.feed, "GLBufferRegistration", refuse)
    monkeypatch.setattr(viewer.render.field, "GLBufferRegistration", refuse)


class DeviceSceneStandIn(GpuContractScene):
    """Its views claim to be on the GPU; with interop refused, the feed must use the host."""

    def __init__(self):
        super().__init__()
        self.host_reads = 0

    def view(self, color_mode):
        view = super().view(color_mode)

        def host():
            self.host_reads += 1
            return view.host()

        def write(pos, col):
            raise AssertionError("interop was refused: the view's write must not be called")

        return dataclasses.replace(view, host=host, write=write)


@needs_egl
def test_trough_changes_rebuild_the_mesh(gl):
    from viewer.render.view import SceneView

    scene = GpuContractScene()
    view = SceneView(gl)
    try:
        view.show(scene, "speed")
        assert not view.show(scene, "speed")
        scene.trough = WIDE
        assert view.show(scene, "speed")
        assert view.points.trough.geometry == (800.0, -1600.0, 1600.0)
        assert not view.show(scene, "speed")
    finally:
        view.release()


@needs_egl
def test_device_scene_falls_back_to_host_uploads_with_the_reason(gl, no_interop):
    from viewer.render.view import SceneView

    scene = DeviceSceneStandIn()
    view = SceneView(gl)
    try:
        view.show(scene, "speed")
        view.show(scene, "speed")
        assert view.feed.path == "host upload" and scene.host_reads == 2
        assert "cudaGraphicsGLRegisterBuffer" in view.feed.fallback_reason
        assert view.points.spheres.count == scene.n
        drawn = np.frombuffer(view.points.spheres.position_buffer.read(size=scene.n * 16), np.float32)
        np.testing.assert_array_equal(drawn.reshape(-1, 4), scene.positions())
    finally:
        view.release()


@needs_egl
def test_panel_draws_the_cuda_controls_and_verification():
    from viewer.headless import render_pixels
    from viewer.panel.style import PANEL_WIDTH

    scene = GpuContractScene()
    scene.controls.set_toggle("cuda_proximity", True)
    width, height = 1024, 900
    camera = OrbitCamera.for_trough(scene.trough)
    panel = np.s_[:, width - PANEL_WIDTH : width]

    def changed(before, after):
        return np.any(np.abs(after[panel] - before[panel]) > 30, axis=2).sum()

    plain = render_pixels(scene, width, height, camera=camera, panel=True).astype(int)
    scene.checks.set_on(True)
    verifying = render_pixels(scene, width, height, camera=camera, panel=True).astype(int)
    assert changed(plain, verifying) > 500, "verification counts should show in the panel"
    scene.gpu_error = "out of memory allocating 10,000,000 balls"
    failed = render_pixels(scene, width, height, camera=camera, panel=True).astype(int)
    assert changed(verifying, failed) > 500, "the GPU error should show in the panel"


# --- in a window (Xvfb under make test) ---------------------------------------------------------


def _display_problem():
    from viewer.window.display import display_problem

    return display_problem()


@pytest.mark.window
@pytest.mark.skipif(_display_problem() is not None, reason=f"needs a display: {_display_problem()}")
def test_window_reframes_on_a_new_trough_and_says_why_balls_use_the_host(no_interop):
    from viewer.window.app import Viewer

    scene = DeviceSceneStandIn()
    viewer = Viewer(scene, 640, 480, max_fps=None)
    try:
        viewer.tick()
        assert "host copies" in viewer.message
        viewer.controller.say("")
        viewer.tick()
        assert viewer.message == "", "the reason is said once"
        distance = viewer.camera.distance
        scene.trough = WIDE
        viewer.tick()
        assert viewer.view.points.trough.geometry == (800.0, -1600.0, 1600.0)
        assert viewer.camera.distance > 10 * distance
        press(viewer.controller, key.F4)
        press(viewer.controller, key.V)
        press(viewer.controller, key.C)
        assert viewer.controller.color_mode == BLOCK_COLORS
        for _ in range(3):
            assert viewer.tick()
    finally:
        viewer.close()
