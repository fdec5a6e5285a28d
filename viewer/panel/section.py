"""What every panel section is: a ``Section`` has a title (one of ``style.SECTIONS``), starts folded or
open, says whether it has anything to show for this scene and panel, and draws its body under its open
header from one ``PanelContext``, the same for every section. ``Panel`` draws the headers and iterates
the sections in ``style.SECTIONS``' order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from viewer.panel.style import FOLDED

if TYPE_CHECKING:
    from sim.contract import Legend


class WindowControls(Protocol):
    """What the window-only rows and sections read and set (``viewer.window.app.Viewer``)."""

    actions: object  # viewer.window.actions.WindowActions: camera, help, screenshots, recording, bookmarks
    recording: object  # viewer.window.recording.WindowRecording
    frame_rate: object  # viewer.window.rates.RateMeter of displayed frames
    render_ms: float  # drawing the last frame
    max_fps: float | None  # the frame limit; None: as fast as it can
    ui_scale: float  # the panel's scale, applied at the next frame
    bookmarks: dict  # the camera bookmarks saved, "1".."4"
    window: object  # the pyglet window (full screen or not)


@dataclass
class PanelContext:
    """What the sections read in a frame: the ``controller`` (and through it the scene), the view drawn this
    frame (``shown``), how it reached the GL buffers (``feed``), its ``legend`` over the range in force, and
    the window's controls and timings (``window``; None in a headless picture or the frame bench)."""

    controller: object = None  # viewer.window.controller.Controller (the panel imports nothing of the window)
    window: WindowControls | None = None
    shown: object = None
    feed: object = None
    legend: Legend | None = None

    @property
    def scene(self):
        return self.controller.scene


class Section(Protocol):
    title: str  # its header, one of style.SECTIONS
    folded: bool  # starts folded until the user opens it (the layout then keeps the user's choice)

    def shows(self, ctx: PanelContext) -> bool:
        """Whether the section has anything for this scene and this panel (no header otherwise)."""

    def draw(self, ctx: PanelContext) -> None:
        """The body, under its open header."""

    def draw_folded(self, ctx: PanelContext) -> None:
        """What stays in sight under its folded header (mostly nothing)."""


class PanelSection:
    """A ``Section``'s defaults: folded as ``style.FOLDED`` says, always shown, nothing when folded."""

    title = ""

    @property
    def folded(self) -> bool:
        return self.title in FOLDED

    def shows(self, ctx: PanelContext) -> bool:
        return True

    def draw(self, ctx: PanelContext) -> None:
        raise NotImplementedError

    def draw_folded(self, ctx: PanelContext) -> None:
        return None
