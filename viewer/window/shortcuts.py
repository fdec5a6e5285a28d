"""What the viewer reads through to its parts, for the panel's window rows (``WindowControls``) and the
tests: the controller's scene, pause and message, the viewpoint's camera and bookmarks, the actions' help,
quit and screenshots, the geometry's sizes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from viewer.window.actions import WindowActions
    from viewer.window.controller import Controller
    from viewer.window.geometry import WindowGeometry
    from viewer.window.viewpoint import Viewpoint


class ViewerShortcuts:
    """The parts' state as properties of ``viewer.window.app.Viewer``, which sets the parts."""

    controller: Controller
    viewpoint: Viewpoint
    actions: WindowActions
    geometry: WindowGeometry

    @property
    def scene(self):
        return self.controller.scene

    @property
    def paused(self) -> bool:
        return self.controller.paused

    @property
    def message(self) -> str:
        return self.controller.message

    @property
    def camera(self):
        return self.viewpoint.camera

    @camera.setter
    def camera(self, camera) -> None:
        self.viewpoint.camera = camera

    @property
    def bookmarks(self) -> dict[str, dict]:
        return self.viewpoint.bookmarks

    @property
    def show_help(self) -> bool:
        return self.actions.show_help

    @property
    def quit_requested(self) -> bool:
        return self.actions.quit_requested

    @property
    def screenshot_dir(self) -> Path:
        return self.actions.screenshot_dir

    @property
    def last_screenshot(self) -> Path | None:
        return self.actions.last_screenshot

    @last_screenshot.setter
    def last_screenshot(self, path: Path | None) -> None:
        self.actions.last_screenshot = path

    def covered_display(self) -> int:
        return self.geometry.covered_display()

    def covered_right(self, fb_size: tuple[int, int]) -> int:
        return self.geometry.covered_right(fb_size)

    def plots_area(self) -> tuple[float, float, float, float]:
        return self.geometry.plots_area()
