"""The viewer's actions that keys and the panel start: quitting, Esc (help, unpin, then quit), full screen,
recording (R), camera bookmarks (Ctrl+1…4 / 1…4), help, the default camera, screenshots (F12),
and keeping the settings (captured on a scene switch and on exit). A mixin of ``Viewer``."""

from __future__ import annotations

import math
import sys
import time
from datetime import datetime
from pathlib import Path

from viewer.image import write_image
from viewer.panel import style
from viewer.render.offscreen import Offscreen
from viewer.render.view import default_camera
from viewer.window import persist

QUIT_ESCAPE_SECONDS = 3.0  # a second Esc this soon after the first quits


class ViewerActions:
    # --- actions for keys and panel -------------------------------------------------------------
    def quit(self) -> None:
        self._quit_requested = True

    def escape(self) -> None:
        """Esc: close the help, else unpin the pinned item, else ask for a second Esc, which quits."""
        if self.show_help:
            self.show_help = False
            self.controller.say("help closed (F1 opens it)")
        elif self.pointing.unpin(self):
            pass
        elif time.monotonic() - self._escape_at < QUIT_ESCAPE_SECONDS:
            self.quit()
        else:
            self._escape_at = time.monotonic()
            self.controller.say(f"Esc again within {QUIT_ESCAPE_SECONDS:.0f} s quits")
            return
        self._escape_at = -math.inf

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
        if settings.notices:  # the file ignored, or a saved count (main.py said it on stderr too)
            self.controller.say("; ".join(settings.notices))
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

    def _new_scene(self, name: str, backend: str):
        """The scene the combo switches to, started from its own saved preset and count; a saved count
        that cannot run gives way to the preset's (said once the switch is done)."""
        from sim.registry import SCENES, create_scene

        preset, count = self.settings.saved_start(SCENES[name])
        kwargs = {"backend": backend, **({"preset": preset} if preset else {})}
        if count is not None:
            try:
                return create_scene(name, n=count, **kwargs)
            except ValueError as exc:
                self._switch_notice = self.settings.count_ignored(name, count, exc)
        return create_scene(name, **kwargs)

    def _scene_switched(self, old, old_color_mode: str) -> None:
        """The controller replaced the scene: keep the old one's settings, apply the new one's."""
        self._store_scene_settings(old, old_color_mode)
        self.pointing.picking.unpin()
        self.camera = None
        self._load_scene_settings(self.scene)
        self._scene_replaced = self._warm_up_due = True
        notice, self._switch_notice = self._switch_notice, ""
        if notice:
            print(f"viewer: {notice}", file=sys.stderr)
            self.controller.say(notice)

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
