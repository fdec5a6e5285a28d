"""How the window's frames follow one another: paced to ``max_fps``, the first one on a worker
thread while the kernels compile, and a scripted run (``--steps``) that stops at an exact physics
step, saves the picture and quits. ``Viewer.tick()`` draws each frame. A mixin of ``Viewer``."""

from __future__ import annotations

import time

from viewer.window.startup import WarmUp, draw_compile_box


class FrameLoop:
    def run(self) -> None:
        """Frames until the window closes, at most ``max_fps`` per second when set. A running scene
        first compiles its kernels on a worker thread while the window shows its progress."""
        if self.stop_at_steps is None and not self.paused:
            self.run_warm_up()
        while self.tick():
            if self.max_fps:
                spare = 1.0 / self.max_fps - (time.perf_counter() - self._last_tick)
                if spare > 0:
                    time.sleep(spare)
        self.close()

    def run_warm_up(self) -> None:
        """The scene's first frame on a worker thread (kernels compile then) while the window draws the
        initial state under a "compiling kernels…" box; keys other than quitting wait until it is done."""
        self.window.switch_to()
        self._upload()  # the initial state, drawn from the GL buffers while the worker steps
        key_name = f"{self.scene.spec.name}/{self.scene.backend}"
        startup = self.settings.table("startup")
        expected = startup.get(key_name) if isinstance(startup.get(key_name), int) else None
        self.warm_up = warm = WarmUp(self.scene, expected).start()
        try:
            while not warm.done and not self._quit_requested and not self.closed:
                self.window.dispatch_events()
                fb_size = self.window.get_framebuffer_size()
                self.gui.new_frame(self.window.get_size(), fb_size, 1 / 30)
                draw_compile_box(warm, tuple(float(v) for v in self.window.get_size()))
                self.gui.end_frame()
                self._draw(self.ctx.screen, fb_size)
                self.window.flip()
                time.sleep(1 / 30)
        finally:
            warm.finish()
            self.warm_up = None
        if warm.error is not None:
            self.controller.paused = True
            self.controller._failed("simulation step", warm.error)
        else:
            if warm.compiled:
                startup[key_name] = len(warm.compiled)
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
