"""The rough edges: the cold-start screen (kernels compiled on a worker thread while the window
draws), screenshots in the format their extension names (windowed --screenshot prints its path),
the panel's rate labels, the GPU-unavailable advice by cause, F11, the UI scale, help texts that
list every registered scene."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gl_support import needs_egl
from imgui_bundle import imgui

from sim import create_scene
from sim.registry import SCENES
from viewer.image import read_image, write_image
from viewer.panel.scene import gpu_advice
from viewer.window.display import display_problem

ROOT = Path(__file__).resolve().parent.parent
_PROBLEM = display_problem()
needs_display = pytest.mark.skipif(_PROBLEM is not None, reason=f"needs a display: {_PROBLEM}")


@pytest.mark.parametrize(
    "reason, cause, advice",
    [
        (
            "CuPy is not installed (ModuleNotFoundError) though an NVIDIA GPU is here; install the [gpu] extra",
            "CuPy is not installed",
            "pip install",
        ),
        (
            "no NVIDIA GPU driver on this machine (libcuda.so.1 not found): the GPU backend needs an NVIDIA GPU",
            "no NVIDIA GPU or driver",
            "CPU backend",
        ),
        ("no NVIDIA GPU found (the NVIDIA driver is installed but sees no GPU)", "no NVIDIA GPU", "CPU backend"),
        (
            "the NVIDIA driver did not start (cuInit error 999); nvidia-smi shows its state",
            "did not start",
            "nvidia-smi",
        ),
        ("no CUDA device found", "no NVIDIA GPU", "CPU backend"),
        ("no usable CUDA device: cudaErrorNoDevice: no CUDA-capable device is detected", "no NVIDIA GPU", "CPU"),
        (
            "no usable CUDA device: cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime "
            "version",
            "driver is older",
            "Update the NVIDIA driver",
        ),
        ("this scene has no GPU kernels", "no GPU kernels", ""),
    ],
)
def test_gpu_advice_fits_the_cause(reason, cause, advice):
    got_cause, got_advice = gpu_advice(reason)
    assert cause in got_cause and advice in got_advice


@pytest.mark.parametrize(
    "suffix, magic", [(".png", b"\x89PNG"), (".jpg", b"\xff\xd8\xff"), (".jpeg", b"\xff\xd8\xff"), (".webp", b"RIFF")]
)
def test_pictures_take_the_format_their_extension_names(tmp_path, suffix, magic):
    rng = np.random.default_rng(2)
    pixels = np.repeat(np.repeat(rng.integers(0, 256, (6, 8, 3), dtype=np.uint8), 8, axis=0), 8, axis=1)
    path = write_image(tmp_path / f"shot{suffix}", pixels)
    assert path.read_bytes()[: len(magic)] == magic
    back = read_image(path)
    assert back.shape == pixels.shape
    if suffix == ".png":
        np.testing.assert_array_equal(back, pixels)
    else:
        assert np.abs(back.astype(int) - pixels).mean() < 12


def test_other_picture_formats_are_refused(tmp_path):
    from sim.cmdline.cli import UsageError
    from sim.cmdline.writer import OutputError
    from viewer.image import check_image_target

    with pytest.raises(UsageError, match="choose .png"):
        check_image_target(tmp_path / "shot.bmp")
    with pytest.raises(OutputError, match="choose .png"):
        write_image(tmp_path / "shot.tiff", np.zeros((4, 4, 3), np.uint8))
    assert list(tmp_path.iterdir()) == []


def test_help_lists_every_registered_scene(cli):
    for args in (["--help"], ["view", "--help"], ["run", "--help"]):
        text = cli(*args).stdout
        for name in SCENES:
            assert name in text, f"{' '.join(args)} does not name {name}"


@needs_display
@pytest.mark.parametrize("suffix", [".png", ".jpg"])
def test_windowed_screenshot_prints_its_path(tmp_path, suffix):
    path = tmp_path / f"end{suffix}"
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "main.py"),
            "run",
            "particles",
            "-n",
            "500",
            "--steps",
            "10",
            "--screenshot",
            str(path),
            "--size",
            "640x400",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert f"screenshot: {path}" in result.stdout.splitlines()
    assert read_image(path).shape == (400, 640, 3)


@pytest.fixture
def window(tmp_path):
    if _PROBLEM is not None:
        pytest.skip(f"needs a display: {_PROBLEM}")
    from viewer.window.app import Viewer

    opened = []

    def make(scene, **kwargs):
        v = Viewer(scene, 900, 640, max_fps=None, screenshot_dir=tmp_path, **kwargs)
        opened.append(v)
        return v

    yield make
    for v in opened:
        v.close()


@needs_display
def test_a_cold_start_shows_compiling_kernels_instead_of_a_black_frame(window, monkeypatch):
    import time

    import viewer.window.loop as loop
    import viewer.window.startup as startup

    drawn = []
    real = startup.draw_compile_box

    def spy(warm, display):
        drawn.append((warm.status(), v.view.points.spheres.count))
        real(warm, display)

    monkeypatch.setattr(loop, "draw_compile_box", spy)
    windows = []  # the ImGui windows each warm-up frame began: the panel keeps its place
    real_begin = imgui.begin

    def begin(name, *args, **kwargs):
        windows.append(name)
        return real_begin(name, *args, **kwargs)

    monkeypatch.setattr(imgui, "begin", begin)
    scene = create_scene("balls", preset="T")

    class SlowFirstFrame:
        """The first frame takes a while, as a cold numba compile does."""

        def __init__(self, scene):
            self._scene = scene

        def __getattr__(self, name):
            return getattr(self._scene, name)

        def advance_frame(self, most=None):
            time.sleep(0.6)
            return self._scene.advance_frame(most)

    v = window(scene)
    v.controller.scene = SlowFirstFrame(scene)
    v.loop.start_warm_up()
    while v.loop.warm_up is not None:
        v.tick()
        time.sleep(1 / 30)
    v.controller.scene = scene
    assert len(drawn) >= 3, "frames were drawn while the first frame ran"
    assert all(count == scene.n for _, count in drawn), "the initial state is drawn under the box, not black"
    assert drawn[0][0].startswith("0 compiled")
    assert windows.count("kernel-lab") >= len(drawn), "the panel is drawn in every frame the box is"
    assert scene.steps == scene.spec.steps_per_frame and "kernels ready in" in v.message


@needs_display
def test_keys_wait_while_the_kernels_compile(window):
    from viewer.window.startup import WarmUp

    v = window(create_scene("particles", n=300))
    v.loop.warm_up = WarmUp(v.scene)  # as while the first frame runs on the worker
    from viewer.keys import key

    v.window.dispatch_event("on_key_press", key.SPACE, 0)
    v.window.dispatch_events()
    assert not v.paused, "Space waits for the warm-up"
    for _ in range(2):  # the second Esc quits
        v.window.dispatch_event("on_key_press", key.ESCAPE, 0)
        v.window.dispatch_events()
    assert v.quit_requested
    v.loop.warm_up = None


@needs_display
def test_the_panel_tells_frame_time_from_draw_time(window):
    from viewer.panel.stats import rate_lines

    v = window(create_scene("particles", n=300))
    for _ in range(8):
        v.tick()
    lines = dict(rate_lines(v.controller, v))
    frames = next(line for line in lines if line.startswith("frames:"))
    drawing = next(line for line in lines if line.startswith("drawing:"))
    assert "/s, one every" in frames and "ms a frame" in drawing
    assert "frame time" in lines[frames] and "draw time" in lines[drawing]


@needs_display
def test_ui_scale_grows_the_panel(window):
    from viewer.panel import style

    v = window(create_scene("particles", n=300))
    try:
        v.ui_scale = 1.5
        v.tick()
        assert style.panel_width() == pytest.approx(1.5 * style.PANEL_WIDTH) and v.gui.scale == pytest.approx(1.5)
        assert v.covered_display() == style.panel_cover() > 1.5 * style.PANEL_WIDTH
    finally:
        v.ui_scale = 1.0
        v.tick()
    assert style.panel_width() == style.PANEL_WIDTH


@needs_display
def test_f11_switches_full_screen(window):
    from viewer.keys import key

    v = window(create_scene("particles", n=300))
    v.window.dispatch_event("on_key_press", key.F11, 0)
    v.tick()
    assert v.window.fullscreen and "full screen" in v.message
    v.window.dispatch_event("on_key_press", key.F11, 0)
    v.tick()
    assert not v.window.fullscreen


@needs_egl
def test_counters_fit_the_panel_at_1280x800():
    """Every counter line fits the panel's width (no line runs under its edge)."""
    from imgui_bundle import imgui

    from viewer.headless import HeadlessRenderer
    from viewer.panel.stats import counter_lines, rate_lines
    from viewer.panel.style import panel_width
    from viewer.window.controller import Controller

    scene = create_scene("balls", preset="t")
    scene.advance_frame()
    with HeadlessRenderer(1280, 800, panel=True) as renderer:
        renderer.render(scene)
        renderer.composer.gui.make_current()
        ctl = Controller(scene)
        imgui.new_frame()
        widths = [imgui.calc_text_size(line).x for line, _ in counter_lines(ctl) + rate_lines(ctl)]
        imgui.end_frame()
    assert max(widths) < panel_width() - 40
