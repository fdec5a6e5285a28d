"""Recording: R in a window (Xvfb) and ``run --headless --record`` (EGL) write MP4s that PyAV decodes
to the expected number of frames of the expected size, showing the scene move; bad targets exit 2
before any work; the pixel ring hands frames back in order; a dropped recording leaves the old file."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import av
import numpy as np
import pytest
from gl_support import needs_egl

from viewer.record.recorder import REAL_TIME, STEPS, RecordOptions
from viewer.record.video import VideoWriter, check_video_target, even_size
from viewer.window.display import display_problem

ROOT = Path(__file__).resolve().parent.parent
_PROBLEM = display_problem()
needs_display = pytest.mark.skipif(_PROBLEM is not None, reason=f"needs a display: {_PROBLEM}")


def decode(path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(stream)]


def changes(frames) -> float:
    """How much the first and last frames differ (mean absolute, 0..255)."""
    return float(np.abs(frames[0].astype(int) - frames[-1].astype(int)).mean())


# --- the encoder and the ring ----------------------------------------------------------------------------
def test_writer_encodes_every_frame_at_its_size(tmp_path):
    writer = VideoWriter(tmp_path / "v.mp4", (96, 64), fps=30)
    for i in range(12):
        frame = np.zeros((64, 96, 3), np.uint8)
        frame[:, i * 8 : i * 8 + 8] = (250, 40, 40)  # a red bar moving right
        writer.write(frame, copies=2 if i == 5 else 1)
    path = writer.close()
    frames = decode(path)
    assert len(frames) == 13 and frames[0].shape == (64, 96, 3)
    assert frames[0][:, :8, 0].mean() > 150 and frames[-1][:, 88:, 0].mean() > 150  # the bar moved
    assert not any(p.name.endswith(".partial") for p in tmp_path.iterdir())


def test_an_abandoned_recording_keeps_the_previous_file(tmp_path):
    target = tmp_path / "v.mp4"
    target.write_bytes(b"the previous video")
    writer = VideoWriter(target, (32, 32))
    writer.write(np.full((32, 32, 3), 90, np.uint8))
    writer.abort()
    assert target.read_bytes() == b"the previous video"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.mp4"]


@pytest.mark.parametrize(
    "name, size, message",
    [
        ("v.avi", (64, 64), "H.264 in .mp4"),
        ("v", (64, 64), "no extension"),
        ("v.mp4", (65, 64), "even width and height"),
        ("missing/v.mp4", (64, 64), "does not exist"),
    ],
)
def test_bad_targets_are_refused(tmp_path, name, size, message):
    from sim.cmdline.cli import UsageError

    with pytest.raises(UsageError, match=message):
        check_video_target(tmp_path / name, size)
    assert even_size((641, 361)) == (640, 360)


@needs_egl
def test_the_pixel_ring_returns_frames_in_order_a_few_frames_late(gl):
    from viewer.record.readback import PixelRing
    from viewer.render.offscreen import Offscreen

    target = Offscreen(gl, (8, 6))
    ring = PixelRing(gl, (8, 6), depth=3)
    out = []
    for i in range(5):
        target.fbo.clear(i / 10, 0.5, 0.0, 1.0)
        ready = ring.read(target.fbo, tag=i)
        assert (ready is None) == (i < 3)
        if ready is not None:
            out.append(ready)
    out += ring.drain()
    assert [tag for _, tag in out] == list(range(5))
    assert [int(round(p[0, 0, 0] / 25.5)) for p, _ in out] == list(range(5))
    ring.release()
    target.release()


# --- headless ----------------------------------------------------------------------------------------------
@needs_egl
def test_headless_record_writes_steps_over_k_frames(cli, tmp_path):
    path = tmp_path / "drop.mp4"
    result = cli(
        "run",
        "balls",
        "--preset",
        "T",
        "--headless",
        "--steps",
        "60",
        "--record",
        str(path),
        "--record-every",
        "6",
        "--size",
        "320x240",
        "--fps",
        "24",
    )
    assert result.returncode == 0, result.stderr
    frames = decode(path)
    assert len(frames) == 60 // 6 and frames[0].shape == (240, 320, 3)
    assert changes(frames) > 0.5, "the balls fall: the video changes"
    assert "recording: 10 frames, 320x240 at 24 frames/s, one every 6 steps" in result.stdout
    with av.open(str(path)) as container:
        assert container.streams.video[0].average_rate == 24


@pytest.mark.parametrize(
    "args, message",
    [
        (("--record", "x.avi"), "H.264 in .mp4"),
        (("--record", "x.mp4", "--size", "321x240"), "even width and height"),
        (("--record", "no/such/folder/x.mp4"), "does not exist"),
        (("--record", "x.mp4", "--fps", "0"), "frames per second"),
        (("--screenshot", "x.bmp"), "choose .png"),
    ],
)
def test_bad_record_options_exit_2_before_any_work(cli, tmp_path, args, message):
    result = cli("run", "balls", "--headless", "--steps", "6", *args)
    assert result.returncode == 2 and message in result.stderr
    assert "steps/s" not in result.stdout


# --- in a window -------------------------------------------------------------------------------------------
@pytest.fixture
def viewer(balls_window):
    return balls_window


def press_record(v):
    from viewer.keys import key

    v.window.dispatch_event("on_key_press", key.R, key.MOD_SHIFT)
    v.window.dispatch_event("on_key_release", key.R, key.MOD_SHIFT)
    v.tick()


def test_r_twice_records_a_frame_every_k_steps(viewer):
    viewer.recording.options = RecordOptions(STEPS, every=6, fps=30, panel=False)
    press_record(viewer)
    recorder = viewer.recording.recorder
    assert recorder is not None and "recording" in viewer.message
    start = recorder.start_steps
    for _ in range(14):
        viewer.tick()
    stopped_at = viewer.scene.steps  # R is handled first thing in the next frame, before its physics
    press_record(viewer)
    assert viewer.recording.recorder is None
    path = viewer.recording.last_path
    assert path is not None and path.parent.name == "recordings" and str(path) in viewer.message
    frames = decode(path)
    expected = (stopped_at - start) // 6
    assert len(frames) == expected >= 14
    fb_width, fb_height = viewer.window.get_framebuffer_size()
    want = even_size((fb_width - viewer.covered_right((fb_width, fb_height)), fb_height))
    assert frames[0].shape == (want[1], want[0], 3), "the view left of the panel, trimmed to even sizes"
    assert changes(frames) > 0.5


def test_real_time_recording_with_the_panel_keeps_time(viewer):
    import time

    viewer.recording.options = RecordOptions(REAL_TIME, fps=30, panel=True)
    press_record(viewer)
    started = time.perf_counter()
    while time.perf_counter() - started < 1.0:
        viewer.tick()
    recorder = viewer.recording.recorder
    press_record(viewer)
    frames = decode(viewer.recording.last_path)
    assert len(frames) == recorder.frames
    assert abs(len(frames) - 30 * recorder.elapsed()) <= 2, "a frame per 1/30 s of wall clock, repeated when late"
    fb_width, fb_height = viewer.window.get_framebuffer_size()
    assert frames[0].shape[:2] == (fb_height // 2 * 2, fb_width // 2 * 2), "the whole window"
    panel = frames[-1][40:300, -300:-40]
    assert panel.std() > 10, "the panel is in the video"


def xdotool(*args: str) -> str:
    return subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=30, check=True).stdout


def screen_image(geometry: dict[str, int]) -> np.ndarray:
    """What the X server shows in the window's place: its presented picture, as the user sees it."""
    from PIL import ImageGrab

    x, y, width, height = (geometry[k] for k in ("X", "Y", "WIDTH", "HEIGHT"))
    image = ImageGrab.grab(bbox=(x, y, x + width, y + height), xdisplay=os.environ["DISPLAY"])
    return np.asarray(image.convert("RGB")).astype(int)


def red_pixels(pixels: np.ndarray) -> int:
    red = (pixels[..., 0] > 220) & (pixels[..., 1] < 90) & (pixels[..., 2] < 90)
    return int(red.sum())


@pytest.mark.window
@needs_display
@pytest.mark.skipif(shutil.which("xdotool") is None, reason="needs xdotool (make test installs it)")
def test_the_window_stays_live_and_shows_the_dot_while_recording(tmp_path):
    """The viewer as a user starts it, in a process of its own (an EGL context made earlier in a process
    leaves a later window's GLX context drawing nowhere on Mesa), R and Esc pressed through the X server,
    and the window read back from the X server: what the user sees, not what the viewer drew offscreen."""
    import time

    viewer = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "main.py"),
            "view",
            "balls",
            "--preset",
            "block",
            "-n",
            "600",
            "--size",
            "900x600",
            "--no-settings",
        ],
        cwd=tmp_path,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        window = xdotool("search", "--sync", "--onlyvisible", "--name", "kernel-lab").split()[0]
        geometry = {
            k: int(v) for k, v in (line.split("=") for line in xdotool("getwindowgeometry", "--shell", window).split())
        }
        xdotool("mousemove", "--window", window, "20", "20")  # no window manager: the pointer gives focus
        time.sleep(3.0)  # the scene's first frame: its kernels load on a worker
        still = screen_image(geometry)
        xdotool("key", "shift+r")
        time.sleep(1.0)
        first = screen_image(geometry)
        time.sleep(0.6)
        second = screen_image(geometry)
        xdotool("key", "shift+r")
        time.sleep(0.5)
        xdotool("key", "Escape", "Escape")
        out, err = viewer.communicate(timeout=60)
    finally:
        if viewer.poll() is None:
            viewer.kill()
            viewer.communicate()
    assert viewer.returncode == 0, err
    top_right = (slice(0, geometry["HEIGHT"] // 8), slice(geometry["WIDTH"] // 2, None))
    assert red_pixels(still[top_right]) == 0 < red_pixels(first[top_right]), "the red dot heads the panel"
    assert np.abs(first - second).mean() > 0.2, "the window shows the scene moving while it records"
    (path,) = (tmp_path / "recordings").glob("*.mp4")
    assert len(decode(path)) >= 30


def test_closing_the_viewer_while_recording_saves_the_video_and_says_where(viewer, capsys):
    press_record(viewer)
    for _ in range(4):
        viewer.tick()
    viewer.close()
    err = capsys.readouterr().err
    path = viewer.recording.last_path
    assert path is not None and f"viewer: the viewer closed: recording saved: {path} (" in err
    assert len(decode(path)) >= 1


@needs_display
def test_recording_shows_in_the_panel_and_stops_on_resize(viewer):
    from viewer.panel.record import recording_line

    press_record(viewer)
    viewer.tick()
    line = recording_line(viewer)
    assert line.startswith("REC 00:0") and viewer.recording.recorder.path.name in line
    viewer.window.set_size(800, 600)
    for _ in range(3):
        viewer.tick()
    assert viewer.recording.recorder is None and "changed size" in viewer.message
    assert decode(viewer.recording.last_path)


@needs_egl
def test_the_frame_bench_times_recording_and_picking(tmp_path):
    path = tmp_path / "bench.mp4"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "viewer.bench.frame",
            "-n",
            "3000",
            "--size",
            "320x240",
            "--frames",
            "4",
            "--warmup",
            "1",
            "--headless",
            "--record",
            str(path),
            "--pick",
            "--json",
            str(tmp_path / "frame.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "recording (libx264, a video frame per frame)" in result.stdout and "% frame rate" in result.stdout
    assert "picking (" in result.stdout and "ms per frame" in result.stdout
    recorded = int(re.search(r"; (\d+) frames, finishing the file", result.stdout).group(1))
    assert recorded == 4 and len(decode(path)) == recorded, "--frames, no more: the same stretch every run"
    (record,) = json.loads((tmp_path / "frame.json").read_text())["results"]
    assert record["repeats"] == 4 and record["record_repeats"] == recorded
    assert record["pick_repeats"] == 20, "two runs of 10 frames picking, two not, at the least"
    assert {"frame_ms_err", "pick_frame_ms_err", "record_frame_ms_err"} <= record.keys()
    assert record["n"] == 3000 and record["n_end"] <= 3000  # the count timed; balls that fall out are dropped
    assert re.search(r"whole frame: median ± 95% error \(frames\) [\d.]+ ± [\d.e?-]+ \((\d+)\) ms", result.stdout)
    bad = subprocess.run(
        [sys.executable, "-m", "viewer.bench.frame", "--record", str(tmp_path / "x.mp4"), "--size", "321x240"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert bad.returncode == 2 and "even width" in bad.stderr
