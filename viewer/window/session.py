"""What the window keeps between sessions (``viewer.settings``): applied when the window opens,
each scene's share captured on a scene switch and everything on exit. ``SessionSettings`` also
makes the scene the panel's scene combo switches to, from that scene's own saved preset and count."""

from __future__ import annotations

import sys

from viewer.panel import style
from viewer.settings import Settings
from viewer.window import persist


class SessionSettings:
    """``viewer``: the window's state the settings restore and capture (window, camera, bookmarks, UI
    scale, recording options, controller, pointing, the frame loop)."""

    def __init__(self, viewer, settings: Settings):
        self.viewer = viewer
        self.settings = settings
        self._pending_camera: dict | None = None  # a saved camera, applied once the view is framed
        self._switch_notice = ""  # a saved count the last switch could not use, in words

    def apply(self) -> None:
        """What was saved: the window's share now, the scene's through its setters, the camera once
        the first view is framed."""
        viewer, settings = self.viewer, self.settings
        window = settings.table("window")
        if "ui_scale" in window:
            viewer.ui_scale = style.clamp_ui_scale(window["ui_scale"])
        style.layout.update(persist.panel_layout(settings))
        viewer.recording.options = persist.record_options(settings)
        self._load_scene(viewer.scene)
        if settings.notices:  # the file ignored, or a saved count (main.py said it on stderr too)
            viewer.controller.say("; ".join(settings.notices))
        if window.get("fullscreen") is True:
            viewer.controller.act("full screen", viewer.window.set_fullscreen, True)

    def _load_scene(self, scene) -> None:
        viewer = self.viewer
        saved = self.settings.data.get("scenes", {}).get(scene.spec.name)
        viewer.bookmarks = persist.saved_bookmarks(saved) if isinstance(saved, dict) else {}
        self._pending_camera = None
        if not isinstance(saved, dict):
            return
        failed = persist.apply_scene(viewer.controller, saved)
        if failed:
            viewer.controller.say("settings not applied: " + "; ".join(failed))
        if saved.get("preset") == scene.preset:
            self._pending_camera = saved.get("camera")

    def restore_pending_camera(self) -> None:
        """The view was just framed: the saved camera of the scene, if one waits, replaces the default."""
        viewer = self.viewer
        pending, self._pending_camera = self._pending_camera, None
        if pending is not None and viewer.camera is not None:
            viewer.camera = persist.camera_from(pending, viewer.camera) or viewer.camera

    def _store_scene(self, scene, color_mode: str) -> None:
        viewer = self.viewer
        with viewer.controller.guard("keeping the settings"):
            self.settings.table("scenes")[scene.spec.name] = persist.capture_scene(
                scene, color_mode, viewer.camera, viewer.bookmarks)

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
        """The controller replaced the scene: keep the old one's settings, apply the new one's."""
        viewer = self.viewer
        self._store_scene(old, old_color_mode)
        viewer.pointing.picking.unpin()
        viewer.camera = None
        self._load_scene(viewer.scene)
        viewer.scene_replaced = True
        viewer.loop.warm_up_due = True
        notice, self._switch_notice = self._switch_notice, ""
        if notice:
            print(f"viewer: {notice}", file=sys.stderr)
            viewer.controller.say(notice)

    def save(self) -> None:
        viewer, settings = self.viewer, self.settings
        self._store_scene(viewer.scene, viewer.controller.color_mode)
        settings.data["scene"] = viewer.scene.spec.name
        settings.data["backend"] = viewer.scene.backend
        fullscreen = bool(viewer.window.fullscreen)
        persist.capture_window(settings, viewer.window.get_size(), fullscreen, viewer.ui_scale,
                               viewer.recording.options)
        problem = settings.save()
        if problem:
            print(f"viewer: {problem}", file=sys.stderr)
