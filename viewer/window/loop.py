"""How the window's frames follow one another: paced to ``max_fps``, the first one of a scene (at
start-up and after a scene switch) on a worker thread while the kernels compile, and a scripted run
(``--steps``) that stops at an exact physics step, saves the picture and quits. ``Viewer.tick()``
draws each frame; ``FrameLoop`` decides what each one does."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from sim.cmdline import interrupts
from viewer.settings import Settings
from viewer.window.startup import WarmUp, draw_compile_box

WARM_UP_FPS = 30


def _startup_key(scene) -> str:
    """Where the settings keep how many kernels the scene's last cold start compiled."""
    return f"{scene.spec.name}/{scene.backend}"


class FrameHost(Protocol):
    """What the loop needs of the window it drives (``viewer.window.app.Viewer``)."""

    max_fps: float | None  # None: as fast as it can
    last_tick: float  # perf_counter() at the start of the last frame

    def tick(self) -> bool: ...  # one frame; False once the window is closed

    def close(self) -> None: ...

    def show_initial_state(self) -> None: ...  # the scene's state into the GL buffers, before it steps

    def draw_busy_frame(self, dt: float, note: str, overlay: Callable[[tuple[float, float]], None]) -> None:
        """A frame while the scene is busy on the worker: its state, the panel saying ``note``, and
        ``overlay(view size)`` over the view."""


class FrameLoop:
    """``host``: the window whose ``tick`` draws a frame; ``controller``: the scene and its physics; ``actions``:
    quitting and screenshots (``WindowActions``); ``settings``: where the number of kernels a cold start
    compiles is kept."""

    def __init__(self, host: FrameHost | None, controller, actions, settings: Settings | None):
        self.host, self.controller, self.actions = host, controller, actions
        self.settings = settings
        self.warm_up: WarmUp | None = None  # a scene's first frame compiling on a worker thread
        self.warm_up_due = False  # the scene's first frame goes to the worker once it runs (run(), a switch)
        self.stop_at_steps: int | None = None  # scripted run: quit once the scene reaches this step
        self.final_screenshot: Path | None = None  # ... after saving the window here
        self.exit_status = 0

    def run(self) -> None:
        """Frames until the window closes, at most ``max_fps`` per second when set. The scene's first
        frame compiles its kernels on a worker thread while the window shows its progress (not in a
        scripted run, which counts its steps exactly)."""
        host = self.host
        self.warm_up_due = self.stop_at_steps is None
        try:
            while host.tick():
                # While kernels compile, a few frames a second leave the worker the CPU.
                rate = WARM_UP_FPS if self.warm_up is not None else host.max_fps
                if rate:
                    spare = 1.0 / rate - (time.perf_counter() - host.last_tick)
                    if spare > 0:
                        time.sleep(spare)
        finally:  # closed by the user, or stopped by a signal (Ctrl-C): closed as a quit, settings saved
            with interrupts.answering():
                host.close()

    # --- the scene's first frame on a worker thread ------------------------------------------------
    def warming_up(self, dt: float) -> bool:
        """At the start of a frame: start the warm-up when due, draw its frame while it runs; True
        when this frame was the warm-up's (the scene is busy on the worker)."""
        if self.warm_up_due and not self.controller.paused:
            self.warm_up_due = False
            self.start_warm_up()  # the scene's kernels compile while its state is shown
        if self.warm_up is None:
            return False
        self._warm_up_frame(dt)
        return True

    def start_warm_up(self) -> None:
        """The scene's first frame on a worker thread (kernels compile then); until it is done,
        ``tick`` draws warm-up frames: the initial state under a "compiling kernels…" box, and keys
        other than Esc wait."""
        scene = self.controller.scene
        self.host.show_initial_state()  # drawn from the GL buffers while the worker steps
        expected = self.settings.table("startup").get(_startup_key(scene))
        self.warm_up = WarmUp(scene, expected if isinstance(expected, int) else None).start()

    def _warm_up_frame(self, dt: float) -> None:
        """One frame while the worker runs: the scene's state, its legend, the panel (waiting) and the box;
        or, once the worker is done, the end of the warm-up."""
        warm = self.warm_up
        if warm.done:
            self.finish_warm_up()
            return
        self.host.draw_busy_frame(
            dt,
            "compiling kernels… the controls return once they are ready (Esc quits)",
            lambda view: draw_compile_box(warm, view),
        )

    def finish_warm_up(self) -> None:
        """Wait for the worker (it is done unless the window is closing) and say how it went."""
        warm, self.warm_up = self.warm_up, None
        if warm is None:
            return
        controller = self.controller
        warm.finish()
        if warm.error is not None:
            controller.paused = True
            controller.failed("simulation step", warm.error)
            return
        if warm.compiled:
            self.settings.table("startup")[_startup_key(warm.scene)] = len(warm.compiled)
        controller.step_rate.update(warm.scene.steps)
        names = f": {', '.join(warm.compiled)}" if warm.compiled else " (loaded from the cache)"
        controller.say(f"kernels ready in {warm.seconds:.1f} s{names}")

    # --- physics for a frame, and a scripted run ---------------------------------------------------
    def script(self, steps: int | None, screenshot: Path | None) -> None:
        """Stop after ``steps`` more physics steps (none: at once) and save the window to ``screenshot``."""
        self.stop_at_steps = self.controller.scene.steps + (int(steps) if steps is not None else 0)
        self.final_screenshot = screenshot

    def advance(self, render_ms: float) -> None:
        """This frame's physics: a displayed frame, in a scripted run one that stops at ``stop_at_steps``
        exactly."""
        controller = self.controller
        scene = controller.scene
        if self.stop_at_steps is None:
            controller.advance(render_ms)
            return
        remaining = self.stop_at_steps - scene.steps
        if remaining > 0:
            controller.advance(render_ms, most=remaining)
        if controller.step_failed:
            self.exit_status = 1
            self.actions.quit()

    def after_draw(self, fb_size: tuple[int, int]) -> None:
        """A scripted run that reached its step (or the scene its end): pause, save the picture, quit."""
        scene = self.controller.scene
        if self.stop_at_steps is None or (scene.steps < self.stop_at_steps and not scene.at_end):
            return
        self.stop_at_steps = None
        self.controller.paused = True
        if self.final_screenshot is not None:
            if self.actions.save_screenshot(fb_size, self.final_screenshot) is None:
                self.exit_status = 1
        self.actions.quit()
