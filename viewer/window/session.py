"""What the window keeps between sessions (``viewer.settings``): applied when the window opens,
each scene's share captured on a scene switch and everything on exit. ``SessionSettings`` also
makes the scene the panel's scene combo switches to, from that scene's own saved preset and count."""

from __future__ import annotations

import sys

from viewer.panel import style
from viewer.settings import Settings
from viewer.window import persist


class SessionSettings:
    """``settings``: what is kept; ``controller``: the scene the settings apply to; ``window``: the pyglet window
    (full screen); ``viewpoint``: the camera and its bookmarks; ``recording``: its options."""

    def __init__(self, settings: Settings, controller, window, viewpoint, recording):
        self.settings, self.controller, self.window = settings, controller, window
        self.viewpoint, self.recording = viewpoint, recording
        self._pending_camera: dict | None = None  # a saved camera, applied once the view is framed
        self._switch_notice = ""  # a saved count the last switch could not use, in words

    def apply(self, ui_scale: float) -> float:
        """What was saved: the window's share now, the scene's through its setters, the camera once
        the first view is framed. Returns the UI scale to use (``ui_scale`` unless one was saved)."""
        settings, controller = self.settings, self.controller
        window = settings.table("window")
        if "ui_scale" in window:
            ui_scale = style.clamp_ui_scale(window["ui_scale"])
        style.layout.update(persist.panel_layout(settings))
        self.recording.options = persist.record_options(settings)
        self._load_scene(controller.scene)
        if settings.notices:  # the file ignored, or a saved count (main.py said it on stderr too)
            controller.say("; ".join(settings.notices))
        if window.get("fullscreen") is True:
            controller.act("full screen", self.window.set_fullscreen, True)
        return ui_scale

    def _load_scene(self, scene) -> None:
        saved = self.settings.data.get("scenes", {}).get(scene.spec.name)
        self.viewpoint.bookmarks = persist.saved_bookmarks(saved) if isinstance(saved, dict) else {}
        self._pending_camera = None
        if not isinstance(saved, dict):
            return
        failed = persist.apply_scene(self.controller, saved)
        if failed:
            self.controller.say("settings not applied: " + "; ".join(failed))
        if saved.get("preset") == scene.preset:
            self._pending_camera = saved.get("camera")

    def restore_pending_camera(self) -> None:
        """The view was just framed: the saved camera of the scene, if one waits, replaces the default."""
        viewpoint = self.viewpoint
        pending, self._pending_camera = self._pending_camera, None
        if pending is not None and viewpoint.camera is not None:
            viewpoint.camera = persist.camera_from(pending, viewpoint.camera) or viewpoint.camera

    def _store_scene(self, scene, color_mode: str) -> None:
        viewpoint = self.viewpoint
        with self.controller.guard("keeping the settings"):
            self.settings.table("scenes")[scene.spec.name] = persist.capture_scene(
                scene, color_mode, viewpoint.camera, viewpoint.bookmarks
            )

    def new_scene(self, name: str, backend: str):
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

    def scene_switched(self, old, old_color_mode: str) -> None:
        """The controller replaced the scene (the window has dropped its camera): keep the old one's settings,
        apply the new one's."""
        self._store_scene(old, old_color_mode)
        self._load_scene(self.controller.scene)
        notice, self._switch_notice = self._switch_notice, ""
        if notice:
            print(f"viewer: {notice}", file=sys.stderr)
            self.controller.say(notice)

    def save(self, ui_scale: float) -> None:
        settings, controller = self.settings, self.controller
        self._store_scene(controller.scene, controller.color_mode)
        settings.data["scene"] = controller.scene.spec.name
        settings.data["backend"] = controller.scene.backend
        fullscreen = bool(self.window.fullscreen)
        persist.capture_window(settings, self.window.get_size(), fullscreen, ui_scale, self.recording.options)
        problem = settings.save()
        if problem:
            print(f"viewer: {problem}", file=sys.stderr)
