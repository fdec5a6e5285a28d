"""The viewer's actions that keys and the panel start: quitting, Esc (unpin or quit), full screen,
recording (R), camera bookmarks (Ctrl+1…4 / 1…4), help, the default camera, screenshots (F12),
and keeping the settings (captured on a scene switch and on exit). A mixin of ``Viewer``."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

from viewer.image import write_image
from viewer.panel import style
from viewer.render.offscreen import Offscreen
from viewer.render.view import default_camera
from viewer.window import persist


class ViewerActions:
    # --- actions for keys and panel -------------------------------------------------------------
    def quit(self) -> None:
        self._quit_requested = True

    def escape(self) -> None:
        """Esc: unpin the pinned item; with nothing pinned, quit."""
        if not self.pointing.unpin(self):
            self.quit()

    def toggle_fullscreen(self) -> None:
        with self.controller.guard("full screen"):
            self.window.set_fullscreen(not self.window.fullscreen)
            self.controller.say("full screen (F11: back)" if self.window.fullscreen else "windowed")

    # --- recording ------------------------------------------------------------------------------------
    def toggle_recording(self) -> None:
        """R: start recording the view, or stop and save it."""
        if self.recording.active:
            self.stop_recording()
            return
        fb_size = self.window.get_framebuffer_size()
        with self.controller.guard("recording"):
            path = self.recording.start(self.ctx, fb_size, self._covered_right(fb_size), self.scene.steps)
            size = self.recording.recorder.size
            self.controller.say(f"recording {size[0]}x{size[1]} to {path} ({self.recording.options.clock_text()}; "
                                "R stops)")

    def stop_recording(self, why: str = "") -> Path | None:
        path = None
        with self.controller.guard("saving the recording"):
            recorder = self.recording.recorder
            path = self.recording.stop()
            if path is not None:
                because = f"{why}: " if why else ""
                dropped = f"; {recorder.dropped} pictures left out, the encoder behind" if recorder.dropped else ""
                frames = f"{recorder.frames} frame{'s' if recorder.frames != 1 else ''}"
                self.controller.say(f"{because}recording saved: {path} ({frames}, "
                                    f"{recorder.video_seconds:.1f} s of video{dropped})")
        return path

    def _abandon_recording(self) -> None:
        recorder, self.recording.recorder = self.recording.recorder, None
        if recorder is not None:
            recorder.abort()

    # --- camera bookmarks --------------------------------------------------------------------------------
    def save_bookmark(self, number: str) -> None:
        if self.camera is None:
            self.controller.say(f"Ctrl+{number}: a plots view has no camera to keep")
            return
        self.bookmarks[number] = persist.camera_dict(self.camera)
        self.controller.say(f"camera bookmark {number} saved ({number} restores it)")

    def restore_bookmark(self, number: str) -> None:
        saved = self.bookmarks.get(number)
        if saved is None or self.camera is None:
            self.controller.say(f"{number}: no camera bookmark {number} yet (Ctrl+{number} saves one)")
            return
        camera = persist.camera_from(saved, default_camera(self.view.current))
        if camera is None:
            self.controller.say(f"{number}: camera bookmark {number} is damaged")
            return
        self.camera = camera
        self.controller.say(f"camera bookmark {number}")

    # --- settings ---------------------------------------------------------------------------------------
    def _apply_settings(self) -> None:
        """What was saved: the window's share now, the scene's through its setters, the camera once
        the first view is framed."""
        settings = self.settings
        window = settings.table("window")
        if "ui_scale" in window:
            self.ui_scale = style.clamp_ui_scale(window["ui_scale"])
        style.layout.update(persist.panel_layout(settings))
        self.recording.options = persist.record_options(settings)
        self._load_scene_settings(self.scene)
        if window.get("fullscreen") is True:
            with self.controller.guard("full screen"):
                self.window.set_fullscreen(True)

    def _load_scene_settings(self, scene) -> None:
        saved = self.settings.data.get("scenes", {}).get(scene.spec.name)
        self.bookmarks = persist.saved_bookmarks(saved) if isinstance(saved, dict) else {}
        self._pending_camera = None
        if not isinstance(saved, dict):
            return
        failed = persist.apply_scene(self.controller, saved)
        if failed:
            self.controller.say("settings not applied: " + "; ".join(failed))
        if saved.get("preset") == scene.preset:
            self._pending_camera = saved.get("camera")

    def _restore_pending_camera(self) -> None:
        pending, self._pending_camera = self._pending_camera, None
        if pending is not None and self.camera is not None:
            self.camera = persist.camera_from(pending, self.camera) or self.camera

    def _store_scene_settings(self, scene, color_mode: str) -> None:
        with self.controller.guard("keeping the settings"):
            self.settings.table("scenes")[scene.spec.name] = persist.capture_scene(
                scene, color_mode, self.camera, self.bookmarks)

    def _scene_switched(self, old, old_color_mode: str) -> None:
        """The controller replaced the scene: keep the old one's settings, apply the new one's."""
        self._store_scene_settings(old, old_color_mode)
        self.pointing.picking.unpin()
        self.camera = None
        self._load_scene_settings(self.scene)

    def _save_settings(self) -> None:
        settings = self.settings
        self._store_scene_settings(self.scene, self.controller.color_mode)
        settings.data["scene"] = self.scene.spec.name
        settings.data["backend"] = self.scene.backend
        fullscreen = bool(self.window.fullscreen)
        persist.capture_window(settings, self.window.get_size(), fullscreen, self.ui_scale, self.recording.options)
        problem = settings.save()
        if problem:
            print(f"viewer: {problem}", file=sys.stderr)

    def toggle_help(self) -> None:
        self.show_help = not self.show_help

    def reset_camera(self) -> None:
        self.camera = default_camera(self.view.current)

    def screenshot(self) -> None:
        """Saved at the end of this frame's drawing, so the PNG shows exactly what the window does."""
        self._screenshot_requested = True

    def _screenshot_path(self) -> Path:
        """A new name under ``screenshot_dir``: kernel-lab-<date>-<time>.png."""
        stem = f"kernel-lab-{datetime.now():%Y%m%d-%H%M%S}"
        path = self.screenshot_dir / f"{stem}.png"
        suffix = 1
        while path.exists():
            path = self.screenshot_dir / f"{stem}-{suffix}.png"
            suffix += 1
        return path

    def _save_screenshot(self, fb_size: tuple[int, int], path: Path | None = None) -> Path | None:
        # Read an offscreen copy of the frame, not the window: Mesa leaves a GL error behind
        # after reading the default framebuffer.
        with self.controller.guard("screenshot"):
            target = Offscreen(self.ctx, fb_size)
            try:
                self._draw(target.fbo, fb_size)
                path = write_image(path or self._screenshot_path(), target.read_rgb())
            finally:
                target.release()
            self.last_screenshot = path
            self.controller.say(f"screenshot: {path}")
            return path
        return None
