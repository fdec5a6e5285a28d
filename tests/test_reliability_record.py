"""Recordings lose nothing and hang nothing: a file in the way of ./screenshots or ./recordings is
said in the message line (no traceback)."""

import pytest

from sim import create_scene
from viewer.window.keys import key


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
