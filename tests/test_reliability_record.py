"""Recordings lose nothing and hang nothing: a run shorter than --record-every still records its
final state, a video without a frame never replaces a file, and a file in the way of ./screenshots
or ./recordings is said in the message line (no traceback)."""

import av
import numpy as np
import pytest
from gl_support import needs_egl

import main
from sim import create_scene
from sim.writer import OutputError
from viewer.record.recorder import STEPS, RecordOptions
from viewer.record.video import VideoWriter
from viewer.window.keys import key


def decode(path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(container.streams.video[0])]


# --- A: a recording without a frame ----------------------------------------------------------------------
@needs_egl
@pytest.mark.parametrize("args, every", [
    (("heat", "--steps", "5"), 20),  # heat draws a frame every 20 steps
    (("balls", "--preset", "T", "--steps", "3", "--record-every", "6"), 6),
])
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
        scene.single_step()
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
def viewer(tmp_path):
    from viewer.window.app import Viewer, display_problem

    problem = display_problem()
    try:
        v = Viewer(create_scene("balls", preset="block", n=600, seed=2), 900, 601, visible=problem is None,
                   max_fps=None, screenshot_dir=tmp_path / "screenshots", recording_dir=tmp_path / "recordings")
    except Exception as exc:  # noqa: BLE001  no window of either kind here
        pytest.skip(f"no window: {exc}")
    for _ in range(3):
        v.tick()
    yield v
    v.close()


def press(v, symbol, modifiers=0):
    v.window.dispatch_event("on_key_press", symbol, modifiers)
    v.window.dispatch_event("on_key_release", symbol, modifiers)
    v.tick()


@pytest.mark.parametrize("folder, symbol, modifiers, what", [
    ("screenshots", key.F12, 0, "screenshot"),
    ("recordings", key.R, key.MOD_SHIFT, "recording"),
])
def test_a_file_in_the_way_of_the_folder_is_said_in_the_message_line(viewer, tmp_path, capsys, folder, symbol,
                                                                      modifiers, what):
    in_the_way = tmp_path / folder
    in_the_way.write_bytes(b"not a folder")
    capsys.readouterr()
    press(viewer, symbol, modifiers)
    assert viewer.message == (f"{what} failed: cannot save the {what} in {str(in_the_way)!r}: "
                              "it is a file, not a folder")
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
