"""The window's actions that keys and the panel start (the controller's own aside): quitting, Esc
(help, unpin, then quit), full screen, recording (R), camera bookmarks (Ctrl+1…4 / 1…4), help, the
default camera and screenshots (F12). ``WindowActions`` acts on the viewer it is given."""

from __future__ import annotations

import math
import time
from datetime import datetime
from pathlib import Path

from viewer.image import write_image
from viewer.render.offscreen import Offscreen
from viewer.render.view import default_camera
from viewer.window import persist

QUIT_ESCAPE_SECONDS = 3.0  # a second Esc this soon after the first quits


class WindowActions:
    """``viewer``: the window's state (window, context, camera, bookmarks, recording, pointing,
    controller) and its ``draw_frame``, which a screenshot draws again offscreen."""

    def __init__(self, viewer):
        self.viewer = viewer
        self.screenshot_requested = False  # F12: saved once this frame is drawn
        self._escape_at = -math.inf  # when an Esc last asked for a second one to quit

    @property
    def _say(self):
        return self.viewer.controller.say

    def quit(self) -> None:
        self.viewer.quit_requested = True

    def escape(self) -> None:
        """Esc: close the help, else unpin the pinned item, else ask for a second Esc, which quits."""
        viewer = self.viewer
        if viewer.show_help:
            viewer.show_help = False
            self._say("help closed (F1 opens it)")
        elif viewer.pointing.unpin(viewer):
            pass
        elif time.monotonic() - self._escape_at < QUIT_ESCAPE_SECONDS:
            self.quit()
        else:
            self._escape_at = time.monotonic()
            self._say(f"Esc again within {QUIT_ESCAPE_SECONDS:.0f} s quits")
            return
        self._escape_at = -math.inf

    def toggle_fullscreen(self) -> None:
        window = self.viewer.window
        self.viewer.controller.act("full screen", window.set_fullscreen, not window.fullscreen,
                                   done=lambda: "full screen (F11: back)" if window.fullscreen else "windowed")

    def toggle_help(self) -> None:
        self.viewer.show_help = not self.viewer.show_help

    def reset_camera(self) -> None:
        self.viewer.camera = default_camera(self.viewer.view.current)

    # --- recording ------------------------------------------------------------------------------------
    def toggle_recording(self) -> None:
        """R: start recording the view, or stop and save it."""
        viewer, recording = self.viewer, self.viewer.recording
        if recording.active:
            self.stop_recording()
            return
        fb_size = viewer.window.get_framebuffer_size()
        with viewer.controller.guard("recording"):
            path = recording.start(viewer.ctx, fb_size, viewer.covered_right(fb_size), viewer.scene.steps)
            size = recording.recorder.size
            self._say(f"recording {size[0]}x{size[1]} to {path} ({recording.options.clock_text()}; R stops)")

    def stop_recording(self, why: str = "") -> Path | None:
        path = None
        recording = self.viewer.recording
        with self.viewer.controller.guard("saving the recording"):
            recorder = recording.recorder
            path = recording.stop()
            if path is not None:
                because = f"{why}: " if why else ""
                dropped = f"; {recorder.dropped} pictures left out, the encoder behind" if recorder.dropped else ""
                frames = f"{recorder.frames} frame{'s' if recorder.frames != 1 else ''}"
                self._say(f"{because}recording saved: {path} ({frames}, {recorder.video_seconds:.1f} s of video"
                          f"{dropped})")
        return path

    def abandon_recording(self) -> None:
        recording = self.viewer.recording
        recorder, recording.recorder = recording.recorder, None
        if recorder is not None:
            recorder.abort()

    # --- camera bookmarks --------------------------------------------------------------------------------
    def save_bookmark(self, number: str) -> None:
        viewer = self.viewer
        if viewer.camera is None:
            self._say(f"Ctrl+{number}: a plots view has no camera to keep")
            return
        viewer.bookmarks[number] = persist.camera_dict(viewer.camera)
        self._say(f"camera bookmark {number} saved ({number} restores it)")

    def restore_bookmark(self, number: str) -> None:
        viewer = self.viewer
        saved = viewer.bookmarks.get(number)
        if saved is None or viewer.camera is None:
            self._say(f"{number}: no camera bookmark {number} yet (Ctrl+{number} saves one)")
            return
        camera = persist.camera_from(saved, default_camera(viewer.view.current))
        if camera is None:
            self._say(f"{number}: camera bookmark {number} is damaged")
            return
        viewer.camera = camera
        self._say(f"camera bookmark {number}")

    # --- screenshots ----------------------------------------------------------------------------------
    def screenshot(self) -> None:
        """Saved at the end of this frame's drawing, so the PNG shows exactly what the window does."""
        self.screenshot_requested = True

    def screenshot_path(self) -> Path:
        """A new name under the viewer's ``screenshot_dir``: kernel-lab-<date>-<time>.png."""
        folder = self.viewer.screenshot_dir
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
        viewer = self.viewer
        with viewer.controller.guard("screenshot"):
            target = Offscreen(viewer.ctx, fb_size)
            try:
                viewer.draw_frame(target.fbo, fb_size)
                path = write_image(path or self.screenshot_path(), target.read_rgb())
            finally:
                target.release()
            viewer.last_screenshot = path
            self._say(f"screenshot: {path}")
            return path
        return None
