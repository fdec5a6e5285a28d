"""How the window's frames follow one another: paced to ``max_fps``, the first one of a scene (at
start-up and after a scene switch) on a worker thread while the kernels compile, and a scripted run
(``--steps``) that stops at an exact physics step, saves the picture and quits. ``Viewer.tick()``
draws each frame. A mixin of ``Viewer``."""

from __future__ import annotations

import time

from viewer.window.startup import WarmUp, draw_compile_box

WARM_UP_FPS = 30


def _startup_key(scene) -> str:
    """Where the settings keep how many kernels the scene's last cold start compiled."""
    return f"{scene.spec.name}/{scene.backend}"


class FrameLoop:
    def run(self) -> None:
        """Frames until the window closes, at most ``max_fps`` per second when set. The scene's first
        frame compiles its kernels on a worker thread while the window shows its progress (not in a
        scripted run, which counts its steps exactly)."""
        self._warm_up_due = self.stop_at_steps is None
        while self.tick():
            # While kernels compile, a few frames a second leave the worker the CPU.
            rate = WARM_UP_FPS if self.warm_up is not None else self.max_fps
            if rate:
                spare = 1.0 / rate - (time.perf_counter() - self._last_tick)
                if spare > 0:
                    time.sleep(spare)
        self.close()

    def start_warm_up(self) -> None:
        """The scene's first frame on a worker thread (kernels compile then); until it is done,
        ``tick`` draws warm-up frames: the initial state under a "compiling kernels…" box, and keys
        other than Esc wait."""
        self.window.switch_to()
        self._upload()  # the initial state, drawn from the GL buffers while the worker steps
        expected = self.settings.table("startup").get(_startup_key(self.scene))
        self.warm_up = WarmUp(self.scene, expected if isinstance(expected, int) else None).start()

    def _warm_up_frame(self, dt: float) -> None:
        """One frame while the worker runs: the scene's state, its legend and the box; or, once the
        worker is done, the end of the warm-up."""
        warm = self.warm_up
        if warm.done:
            self.finish_warm_up()
            return
        fb_size = self.window.get_framebuffer_size()
        display = self.window.get_size()

        def compile_box() -> bool:
            draw_compile_box(warm, tuple(float(v) for v in display))
            return True

        self.composer.compose_ui(display, fb_size, dt, self._plots_area(), compile_box)  # no plots: the worker steps
        self._draw(self.ctx.screen, fb_size)
        self.window.flip()

    def finish_warm_up(self) -> None:
        """Wait for the worker (it is done unless the window is closing) and say how it went."""
        warm, self.warm_up = self.warm_up, None
        if warm is None:
            return
        warm.finish()
        if warm.error is not None:
            self.controller.paused = True
            self.controller.failed("simulation step", warm.error)
            return
        if warm.compiled:
            self.settings.table("startup")[_startup_key(warm.scene)] = len(warm.compiled)
        self.controller.step_rate.update(self.scene.steps)
        names = f": {', '.join(warm.compiled)}" if warm.compiled else " (loaded from the cache)"
        self.controller.say(f"kernels ready in {warm.seconds:.1f} s{names}")

    # --- a scripted run -------------------------------------------------------------------------
    def _scripted_advance(self) -> None:
        """Advance towards ``stop_at_steps`` exactly: whole frames, then single steps."""
        remaining = self.stop_at_steps - self.scene.steps
        if remaining >= self.scene.spec.steps_per_frame:
            self.controller.advance(self.render_ms)
        elif remaining > 0 and not self.controller.paused:
            for _ in range(remaining):
                self.controller.single_step()
            self.controller.paused = False
        if self.controller.step_failed:
            self.exit_status = 1
            self._quit_requested = True

    def _finish_scripted_run(self, fb_size: tuple[int, int]) -> None:
        self.stop_at_steps = None
        self.controller.paused = True
        if self.final_screenshot is not None:
            if self._save_screenshot(fb_size, self.final_screenshot) is None:
                self.exit_status = 1
        self._quit_requested = True
