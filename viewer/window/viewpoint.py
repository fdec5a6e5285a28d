"""The window's camera and its bookmarks. The camera is replaced, not moved, when a view is framed, a
bookmark restored or saved settings applied, so the window's parts share this holder rather than the
camera itself."""

from __future__ import annotations

from viewer.render.camera import OrbitCamera
from viewer.render.view import SceneView, default_camera


class Viewpoint:
    def __init__(self, view: SceneView):
        self.view = view
        self.camera: OrbitCamera | None = None  # framed on the first view; plots have none
        self.bookmarks: dict[str, dict] = {}  # the scene's camera bookmarks, "1".."4"

    def reset(self) -> None:
        """The default camera of the view shown now."""
        self.camera = default_camera(self.view.current)
