"""The frame benchmark's panel (``viewer.bench.frame --panel``): the viewer's panel drawn over the view each
timed frame, with the sections a user has open, so that a frame is timed as the window shows it.

``--panel`` takes ``all`` (the default: every section open, as a user who opened them all has it),
``default`` (the panel's first layout: all open but ``style.FOLDED``), ``folded`` (every section folded),
``off`` (no panel: the view alone) or a comma list of section titles to open (the rest folded).
"""

from __future__ import annotations

from viewer.panel import style

CHOICES = ("all", "default", "folded", "off")


def sections(text: str) -> tuple[str, ...] | None:
    """The sections ``--panel text`` opens; None for ``off``. ValueError for a title the panel has not."""
    if text == "off":
        return None
    if text == "all":
        return style.SECTIONS
    if text == "default":
        return tuple(t for t in style.SECTIONS if t not in style.FOLDED)
    if text == "folded":
        return ()
    titles = tuple(t.strip() for t in text.split(",") if t.strip())
    if not titles:
        raise ValueError(f"--panel {text!r}: {', '.join(CHOICES)} or a comma list of section titles")
    unknown = [t for t in titles if t not in style.SECTIONS]
    if unknown:
        raise ValueError(
            f"--panel: no section {', '.join(map(repr, unknown))} (the sections: {', '.join(style.SECTIONS)})"
        )
    return titles


def label(opened: tuple[str, ...] | None) -> str:
    """How a report names the panel timed: "off", "all", "folded" or the open titles."""
    if opened is None:
        return "off"
    if set(opened) == set(style.SECTIONS):
        return "all"
    return ", ".join(opened) if opened else "folded"


class PanelLayer:
    """The panel over the view: an ImGui frame laid out per displayed frame (``compose``), drawn by the
    composer with the view (``covered`` pixels at the right edge under it)."""

    def __init__(self, composer, scene, size: tuple[int, int], opened: tuple[str, ...]):
        from viewer.panel.gui import Gui
        from viewer.panel.panel import Panel
        from viewer.window.controller import Controller

        style.open_sections(opened)
        self.composer, self.size = composer, size
        composer.gui = Gui(composer.view.ctx)
        self.panel = Panel()
        self.controller = Controller(scene)  # running, as a user watches it (the bench steps the scene itself)
        self.covered = style.panel_cover()

    def compose(self) -> None:
        """One ImGui frame of the panel over the view's current state, after the window's per-frame panel work
        (the live histogram, when a user turned it on)."""
        view, composer = self.composer.view, self.composer
        self.controller.histogram.frame(self.controller.scene)
        area = (0.0, 0.0, float(self.size[0] - self.covered), float(self.size[1]))

        def panel(_fb_size) -> bool:
            self.panel.draw(self.controller, shown=view.current, feed=view.feed, legend=view.legend)
            return True

        composer.compose_ui(self.size, self.size, 1 / 60, area, panel)

    def release(self) -> None:
        if self.composer.gui is not None:
            self.composer.gui.release()
            self.composer.gui = None
