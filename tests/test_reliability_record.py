"""Recordings lose nothing and hang nothing: a run shorter than --record-every still records its
final state, a video without a frame never replaces a file, a file in the way of ./screenshots or
./recordings is said in the message line (no traceback), and a window that records keeps drawing
while its encoder is stuck, its indicator in sight, the video whole at the end."""

import threading
import time

import av
import numpy as np
import pytest
from gl_support import needs_egl

import main
from sim import create_scene
from sim.cmdline.writer import OutputError
from viewer.keys import key
from viewer.record import video
from viewer.record.recorder import REAL_TIME, STEPS, RecordOptions
from viewer.record.video import VideoWriter


def decode(path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(container.streams.video[0])]


# --- A: a recording without a frame ----------------------------------------------------------------------
@needs_egl
@pytest.mark.parametrize(
    "args, every",
    [
        (("heat", "--steps", "5"), 20),  # heat draws a frame every 20 steps
        (("balls", "--preset", "T", "--steps", "3", "--record-every", "6"), 6),
    ],
)
def test_a_run_shorter_than_record_every_records_its_final_state(tmp_path, capsys, args, every):
    target = tmp_path / "precious.mp4"
    target.write_bytes(b"an older video")
    status = main.main(["run", *args, "--headless", "--record", str(target), "--size", "64x48"])
    out = capsys.readouterr().out
    assert status == 0
    assert f"recording: 1 frame, 64x48 at 30 frames/s, one every {every} steps" in out
    frames = decode(target)
    assert len(frames) == 1 and frames[0].shape == (48, 64, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious.mp4"]


@needs_egl
def test_a_headless_recording_ends_on_the_final_state(tmp_path):
    from viewer.headless import HeadlessRecording, render_pixels

    scene = create_scene("balls", preset="T", seed=3)
    recording = HeadlessRecording(scene, tmp_path / "v.mp4", (160, 120), every=20)
    for _ in range(30):
        scene.run_frame(1)
        recording.after_step(scene)
    path = recording.stop()
    frames = decode(path)
    assert len(frames) == recording.frames == 2, "step 20, then the final step 30"
    final = render_pixels(scene, 160, 120).astype(int)
    off = [float(np.abs(frame.astype(int) - final).mean()) for frame in frames]
    assert recording.recorder.last_steps == 30
    assert off[1] < off[0], f"the last frame shows step 30 (off by {off[1]:.2f}, step 20 by {off[0]:.2f})"


def test_a_video_without_a_frame_never_replaces_a_file(tmp_path):
    target = tmp_path / "v.mp4"
    target.write_bytes(b"the previous video")
    writer = VideoWriter(target, (32, 32))
    with pytest.raises(OutputError, match="no frame was recorded"):
        writer.close()
    assert target.read_bytes() == b"the previous video"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.mp4"]


# --- in a window -------------------------------------------------------------------------------------------
@pytest.fixture
def viewer(balls_window):
    return balls_window


def press(v, symbol, modifiers=0):
    v.window.dispatch_event("on_key_press", symbol, modifiers)
    v.window.dispatch_event("on_key_release", symbol, modifiers)
    v.tick()


@pytest.mark.parametrize(
    "folder, symbol, modifiers, what",
    [
        ("screenshots", key.F12, 0, "screenshot"),
        ("recordings", key.R, key.MOD_SHIFT, "recording"),
    ],
)
def test_a_file_in_the_way_of_the_folder_is_said_in_the_message_line(
    viewer, tmp_path, capsys, folder, symbol, modifiers, what
):
    in_the_way = tmp_path / folder
    in_the_way.write_bytes(b"not a folder")
    capsys.readouterr()
    press(viewer, symbol, modifiers)
    assert viewer.message == (
        f"{what} failed: cannot save the {what} in {str(in_the_way)!r}: it is a file, not a folder"
    )
    assert "Traceback" not in capsys.readouterr().err
    assert not viewer.recording.active and in_the_way.read_bytes() == b"not a folder"
    viewer.tick()  # and the viewer goes on


def test_a_window_recording_stopped_before_its_first_frame_keeps_the_state_drawn(viewer):
    viewer.recording.options = RecordOptions(STEPS, every=1000, fps=30)
    press(viewer, key.R, key.MOD_SHIFT)
    for _ in range(3):
        viewer.tick()
    press(viewer, key.R, key.MOD_SHIFT)
    path = viewer.recording.last_path
    assert path is not None and "recording saved" in viewer.message and "(1 frame," in viewer.message
    assert len(decode(path)) == 1


class StuckFrames:
    """``av.VideoFrame`` whose encoder is stuck on its first picture until ``free`` is set (for 30 s
    at most, so that a frame loop that waits for it is not stuck for good): an encoder far behind a
    30 frames/s clock."""

    real = av.VideoFrame
    free = threading.Event()
    taken = 0

    @classmethod
    def from_ndarray(cls, *args, **kwargs):
        cls.taken += 1
        if cls.taken == 1 and not cls.free.wait(timeout=30.0):
            cls.free.set()
        return cls.real.from_ndarray(*args, **kwargs)


def red_pixels(pixels: np.ndarray) -> int:
    red = (pixels[..., 0] > 220) & (pixels[..., 1] < 90) & (pixels[..., 2] < 90)
    return int(red.sum())


def test_the_window_keeps_drawing_while_its_encoder_is_stuck(viewer, monkeypatch):
    monkeypatch.setattr(av, "VideoFrame", StuckFrames)
    monkeypatch.setattr(StuckFrames, "free", threading.Event())
    monkeypatch.setattr(StuckFrames, "taken", 0)
    monkeypatch.setattr(video, "QUEUE_FRAMES", 2)  # a short queue: full after a few frames
    viewer.recording.options = RecordOptions(REAL_TIME, fps=30, panel=False)
    press(viewer, key.R, key.MOD_SHIFT)
    recorder = viewer.recording.recorder
    try:
        started = time.perf_counter()
        while StuckFrames.taken == 0 and time.perf_counter() - started < 25:  # the encoder starts, then sticks
            viewer.tick()
        started, drawn = time.perf_counter(), 0
        # the loop goes on drawing until the stuck encoder's queue is full and a picture is left out
        while (drawn < 12 or recorder.dropped == 0) and time.perf_counter() - started < 25:
            viewer.tick()
            drawn += 1
        seconds = time.perf_counter() - started
        assert drawn >= 12 and recorder.dropped > 0 and StuckFrames.taken == 1, (
            f"the loop drew {drawn} frames in {seconds:.1f} s, the encoder took {StuckFrames.taken} pictures"
        )

        # the indicator heads the panel: a red dot and the elapsed time
        fb_size = viewer.window.get_framebuffer_size()
        panel_left = fb_size[0] - viewer.covered_right(fb_size)
        assert red_pixels(viewer.recording.target.read_rgb()[: fb_size[1] // 8, panel_left:]) > 20
    finally:
        StuckFrames.free.set()
    press(viewer, key.R, key.MOD_SHIFT)
    assert viewer.recording.recorder is None and recorder.dropped > 0
    assert "pictures left out, the encoder behind" in viewer.message
    frames = decode(viewer.recording.last_path)
    assert len(frames) == recorder.frames
    assert abs(len(frames) - 30 * recorder.elapsed()) <= 2, "the video keeps time: a late picture is held"
