"""The viewer run from the command line: ``main`` opens the window on a scene until the user quits, or
for a scripted run (``--steps``, ``--screenshot``), and returns the process's exit status."""

from __future__ import annotations

import faulthandler
import sys
from pathlib import Path

from viewer.settings import Settings
from viewer.window.app import Viewer
from viewer.window.display import display_problem


def main(
    scene,
    width: int = 1280,
    height: int = 800,
    steps: int | None = None,
    screenshot: str | Path | None = None,
    settings: Settings | None = None,
    kernel=None,
    baseline: dict | None = None,
) -> int:
    """Open the viewer on ``scene`` until the user quits; returns a process exit status.

    With ``steps``: a scripted run that advances the scene to exactly that many physics steps,
    saves the window to ``screenshot`` if given (its path printed, like headless runs do), and
    closes (status 1 if a step or the picture failed). ``settings``: restored now, saved on exit.
    ``kernel``: a user's own kernel (``sim.userkernel.source.UserSource``) to run as the scene's variant.
    ``baseline``: a benchmark report (``sim.cmdline.baseline.load``) drawn as ghost bars beside the stage times.
    """
    problem = display_problem()
    if problem:
        print(f"viewer: {problem}", file=sys.stderr)
        return 2
    if not faulthandler.is_enabled():  # a crash in native code (GL driver, FFmpeg's encoder thread) leaves its stacks
        faulthandler.enable()
    try:
        viewer = Viewer(scene, width, height, settings=settings, baseline=baseline)
    except Exception as exc:  # noqa: BLE001  no window: say why in one line
        print(f"viewer: cannot open the window: {exc}", file=sys.stderr)
        return 1
    if kernel is not None:
        # compiled in the background: a compile error shows in the panel, the window opens anyway
        viewer.controller.act(f"loading {kernel.variant}", viewer.controller.kernel.use, kernel)
    if steps is not None or screenshot:
        viewer.loop.script(steps, Path(screenshot) if screenshot else None)
    viewer.loop.run()
    if viewer.loop.exit_status and viewer.message:
        print(f"viewer: {viewer.message}", file=sys.stderr)
    elif viewer.loop.final_screenshot is not None and viewer.last_screenshot is not None:
        print(f"screenshot: {viewer.last_screenshot}")
    return viewer.loop.exit_status
