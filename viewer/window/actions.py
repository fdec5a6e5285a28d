"""The window's actions that keys and the panel start (the controller's own aside): quitting, Esc
(help, unpin, then quit), full screen, recording (R), camera bookmarks (Ctrl+1…4 / 1…4), help, the
default camera and screenshots (F12). ``WindowActions`` holds what they switch: the help shown, a quit
asked for, the last screenshot."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from viewer.image import write_image
from viewer.render.offscreen import Offscreen
from viewer.render.view import default_camera
from viewer.window import persist
from viewer.window.geometry import WindowGeometry
from viewer.window.pointing import WindowPicking
from viewer.window.recording import WindowRecording
from viewer.window.viewpoint import Viewpoint

QUIT_ESCAPE_SECONDS = 3.0  # a second Esc this soon after the first quits


class WindowActions:
    """``geometry``: the window and its sizes; ``ctx``: its GL context; ``draw_frame(target, fb_size)``: the
    frame composed last, drawn again offscreen for a screenshot; ``screenshot_dir``: where F12 saves."""

    def __init__(
        self,
        geometry: WindowGeometry,
        ctx,
        controller,
        viewpoint: Viewpoint,
        recording: WindowRecording,
        pointing: WindowPicking,
        draw_frame: Callable[[object, tuple[int, int]], None],
        screenshot_dir: Path,
    ):
        self.geometry, self.window, self.ctx = geometry, geometry.window, ctx
        self.controller, self.viewpoint = controller, viewpoint
        self.recording, self.pointing = recording, pointing
        self.draw_frame = draw_frame
        self.screenshot_dir = Path(screenshot_dir)
        self.show_help = False
        self.quit_requested = False  # the window closes at the start of the next frame
        self.last_screenshot: Path | None = None
        self.screenshot_requested = False  # F12: saved once this frame is drawn
        self._escape_at = -math.inf  # when an Esc last asked for a second one to quit

    @property
    def _say(self):
        return self.controller.say

    def quit(self) -> None:
        self.quit_requested = True

    def escape(self) -> None:
        """Esc: close the help, else unpin the pinned item, else ask for a second Esc, which quits."""
        if self.show_help:
            self.show_help = False
            self._say("help closed (F1 opens it)")
        elif self.pointing.unpin():
            pass
        elif time.monotonic() - self._escape_at < QUIT_ESCAPE_SECONDS:
            self.quit()
        else:
            self._escape_at = time.monotonic()
            self._say(f"Esc again within {QUIT_ESCAPE_SECONDS:.0f} s quits")
            return
        self._escape_at = -math.inf

    def toggle_fullscreen(self) -> None:
        window = self.window
        self.controller.act(
            "full screen",
            window.set_fullscreen,
            not window.fullscreen,
            done=lambda: "full screen (F11: back)" if window.fullscreen else "windowed",
        )

    def toggle_help(self) -> None:
        self.show_help = not self.show_help

    def reset_camera(self) -> None:
        self.viewpoint.reset()

    # --- recording ------------------------------------------------------------------------------------
    def toggle_recording(self) -> None:
        """R: start recording the view, or stop and save it."""
        recording = self.recording
        if recording.active:
            self.stop_recording()
            return
        fb_size = self.geometry.fb_size()
        with self.controller.guard("recording"):
            path = recording.start(self.ctx, fb_size, self.geometry.covered_right(fb_size), self.controller.scene.steps)
            size = recording.recorder.size
            self._say(f"recording {size[0]}x{size[1]} to {path} ({recording.options.clock_text()}; R stops)")

    def stop_recording(self, why: str = "") -> Path | None:
        path = None
        recording = self.recording
        with self.controller.guard("saving the recording"):
            recorder = recording.recorder
            path = recording.stop()
            if path is not None:
                because = f"{why}: " if why else ""
                dropped = f"; {recorder.dropped} pictures left out, the encoder behind" if recorder.dropped else ""
                frames = f"{recorder.frames} frame{'s' if recorder.frames != 1 else ''}"
                self._say(
                    f"{because}recording saved: {path} ({frames}, {recorder.video_seconds:.1f} s of video{dropped})"
                )
        return path

    def abandon_recording(self) -> None:
        recording = self.recording
        recorder, recording.recorder = recording.recorder, None
        if recorder is not None:
            recorder.abort()

    # --- camera bookmarks --------------------------------------------------------------------------------
    def save_bookmark(self, number: str) -> None:
        viewpoint = self.viewpoint
        if viewpoint.camera is None:
            self._say(f"Ctrl+{number}: a plots view has no camera to keep")
            return
        viewpoint.bookmarks[number] = persist.camera_dict(viewpoint.camera)
        self._say(f"camera bookmark {number} saved ({number} restores it)")

    def restore_bookmark(self, number: str) -> None:
        viewpoint = self.viewpoint
        saved = viewpoint.bookmarks.get(number)
        if saved is None or viewpoint.camera is None:
            self._say(f"{number}: no camera bookmark {number} yet (Ctrl+{number} saves one)")
            return
        camera = persist.camera_from(saved, default_camera(viewpoint.view.current))
        if camera is None:
            self._say(f"{number}: camera bookmark {number} is damaged")
            return
        viewpoint.camera = camera
        self._say(f"camera bookmark {number}")

    # --- screenshots ----------------------------------------------------------------------------------
    def screenshot(self) -> None:
        """Saved at the end of this frame's drawing, so the PNG shows exactly what the window does."""
        self.screenshot_requested = True

    def screenshot_path(self) -> Path:
        """A new name under the viewer's ``screenshot_dir``: kernel-lab-<date>-<time>.png."""
        folder = self.screenshot_dir
        stem = f"kernel-lab-{datetime.now():%Y%m%d-%H%M%S}"
        path = folder / f"{stem}.png"
        suffix = 1
        while path.exists():
            path = folder / f"{stem}-{suffix}.png"
            suffix += 1
        return path

    def save_screenshot(self, fb_size: tuple[int, int], path: Path | None = None) -> Path | None:
        # Read an offscreen copy of the frame, not the window: Mesa leaves a GL error behind
        # after reading the default framebuffer.
        with self.controller.guard("screenshot"):
            target = Offscreen(self.ctx, fb_size)
            try:
                self.draw_frame(target.fbo, fb_size)
                path = write_image(path or self.screenshot_path(), target.read_rgb())
            finally:
                target.release()
            self.last_screenshot = path
            self._say(f"screenshot: {path}")
            return path
        return None
