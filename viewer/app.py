"""The viewer window: pyglet for the window and input, moderngl for drawing, ImGui for the panel.

``Viewer.tick()`` runs exactly one frame (events, physics unless paused, the live histogram when
due, upload, 3D view, panel, flip), so tests can drive the window without ``pyglet.app.run``.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime
from pathlib import Path

import moderngl

from viewer import AUTO_HEADLESS, pyglet
from viewer.controller import Controller
from viewer.gui import Gui
from viewer.imgui_input import ImGuiInput
from viewer.keys import dispatch_key, key, mouse
from viewer.offscreen import Offscreen
from viewer.panel import PANEL_WIDTH, Panel, draw_help
from viewer.png import write_png
from viewer.rates import RateMeter
from viewer.scene_words import words_for
from viewer.view3d import SceneView, default_camera

SCREENSHOT_DIR = Path("screenshots")
EVENT_HANDLED = pyglet.event.EVENT_HANDLED


def display_problem() -> str | None:
    """None when a window can be opened here, else a one-line reason. Never raises."""
    try:
        if pyglet.options.get("headless") and not AUTO_HEADLESS:
            return "no display: pyglet runs headless (PYGLET_HEADLESS is set)"
        if sys.platform.startswith("linux"):
            name = os.environ.get("DISPLAY")
            if not name:
                if os.environ.get("WAYLAND_DISPLAY"):
                    return "no display: DISPLAY is not set (the viewer needs X11 or XWayland)"
                return "no display: DISPLAY is not set"
            # Ask X directly: pyglet keeps its first connection, so it would not notice a change.
            from pyglet.libs.x11 import xlib

            connection = xlib.XOpenDisplay(name.encode())
            if not connection:
                return f"cannot open display {name!r}"
            xlib.XCloseDisplay(connection)
        else:
            pyglet.display.get_display()
    except Exception as exc:  # noqa: BLE001  any failure here is the answer, not a crash
        return f"cannot open a display: {exc}"
    if AUTO_HEADLESS:
        return "no display when the viewer was imported: pyglet runs headless"
    return None


def _make_window(width: int, height: int, visible: bool, caption: str):
    base = dict(width=width, height=height, caption=caption, resizable=True, vsync=False, visible=visible)
    configs = (
        pyglet.gl.Config(major_version=3, minor_version=3, forward_compatible=True, double_buffer=True,
                         depth_size=24),
        None,  # whatever the platform offers; moderngl checks the version below
    )
    error = None
    for config in configs:
        try:
            return pyglet.window.Window(config=config, **base)
        except pyglet.window.NoSuchConfigException as exc:
            error = exc
    raise RuntimeError(f"no OpenGL 3.3 window configuration: {error}")


class Viewer:
    def __init__(self, scene, width: int = 1280, height: int = 800, visible: bool = True,
                 max_fps: float | None = 60.0, screenshot_dir: Path | str = SCREENSHOT_DIR):
        self.window = _make_window(width, height, visible, f"kernel-lab — {scene.name}")
        self.window.switch_to()
        self.ctx = moderngl.create_context()
        if self.ctx.version_code < 330:
            raise RuntimeError(f"OpenGL 3.3 needed, got {self.ctx.info['GL_VERSION']}")
        self.controller = Controller(scene)
        self.view = SceneView(self.ctx)
        self.camera = default_camera(scene)
        self.gui = Gui(self.ctx)
        self.input = ImGuiInput(self.gui, lambda: self.window.get_size()[1])
        self.panel = Panel()
        self.show_help = False
        self.max_fps = max_fps
        self.screenshot_dir = Path(screenshot_dir)
        self.last_screenshot: Path | None = None
        self.frame_rate = RateMeter()
        self.render_ms = 0.0
        self.frames = 0
        self.closed = False
        self._quit_requested = False
        self._screenshot_requested = False
        self._drag: str | None = None  # camera gesture of the button held down, if the scene owns it
        self.stop_at_steps: int | None = None  # scripted run: quit once the scene reaches this step
        self.final_screenshot: Path | None = None  # ... after saving the window here
        self.exit_status = 0
        self._interop_reported = False  # the reason for host uploads of a GPU scene is said once
        self._splat_reported = False  # likewise why its balls are not splatted by CUDA
        self._last_tick = time.perf_counter()
        self.window.push_handlers(self)  # held weakly by pyglet; the viewer owns itself

    # --- shortcuts ------------------------------------------------------------------------
    @property
    def scene(self):
        return self.controller.scene

    @property
    def paused(self) -> bool:
        return self.controller.paused

    @property
    def message(self) -> str:
        return self.controller.message

    # --- one frame --------------------------------------------------------------------------
    def tick(self) -> bool:
        """Run one frame; returns False once the window is closed."""
        if self.closed:
            return False
        self.window.switch_to()
        self.window.dispatch_events()
        if self._quit_requested:
            self.close()
            return False
        now = time.perf_counter()
        dt, self._last_tick = now - self._last_tick, now

        if self.stop_at_steps is None:
            self.controller.advance(self.render_ms)
        else:
            self._scripted_advance()
        self.controller.histogram.frame(self.scene)
        start = time.perf_counter()
        self._upload()
        fb_size = self.window.get_framebuffer_size()
        self.gui.new_frame(self.window.get_size(), fb_size, dt)
        self.panel.draw(self.controller, self)
        if self.show_help:
            self.show_help = draw_help()
        self.gui.end_frame()
        self._draw(self.ctx.screen, fb_size)
        if self._screenshot_requested:
            self._screenshot_requested = False
            self._save_screenshot(fb_size)
        if self.stop_at_steps is not None and self.scene.steps >= self.stop_at_steps:
            self._finish_scripted_run(fb_size)
        self.window.flip()
        self.render_ms = (time.perf_counter() - start) * 1e3
        self.frames += 1
        self.frame_rate.update(self.frames)
        return True

    def _scripted_advance(self) -> None:
        """Advance towards ``stop_at_steps`` exactly: whole frames, then single steps."""
        remaining = self.stop_at_steps - self.scene.steps
        if remaining >= getattr(self.scene, "steps_per_frame", 6):
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

    def _upload(self) -> None:
        ctl = self.controller
        ctl.watch_scene()
        with ctl.guard("reading the scene"):
            if self.view.show(ctl.scene, ctl.color_mode):
                self.reset_camera()  # another trough size, box or scene: frame the new one
        reason = self.view.feed.fallback_reason
        if reason and not self._interop_reported:
            self._interop_reported = True
            ctl.say(f"GPU {words_for(ctl.scene).unit} drawn through host copies: {reason}")

    def _draw(self, target: moderngl.Framebuffer, fb_size: tuple[int, int]) -> None:
        scale = fb_size[0] / max(self.window.get_size()[0], 1)
        self.view.draw(target, self.camera, fb_size, int((PANEL_WIDTH + 16) * scale))
        if self.view.splat_problem and not self._splat_reported:
            self._splat_reported = True
            self.controller.say(f"GPU {words_for(self.scene).unit} drawn as impostors: {self.view.splat_problem}")
        self.gui.draw(target)

    def run(self) -> None:
        """Frames until the window closes, at most ``max_fps`` per second when set."""
        while self.tick():
            if self.max_fps:
                spare = 1.0 / self.max_fps - (time.perf_counter() - self._last_tick)
                if spare > 0:
                    time.sleep(spare)
        self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.window.switch_to()
        self.gui.release()
        self.view.release()
        # Release moderngl's context while its window still exists: released after the window
        # closed (by the garbage collector), the next window's moderngl.create_context fails.
        self.ctx.release()
        self.window.remove_handlers(self)
        self.window.close()

    # --- actions for keys and panel -------------------------------------------------------------
    def quit(self) -> None:
        self._quit_requested = True

    def toggle_help(self) -> None:
        self.show_help = not self.show_help

    def reset_camera(self) -> None:
        self.camera = default_camera(self.scene)

    def screenshot(self) -> None:
        """Saved at the end of this frame's drawing, so the PNG shows exactly what the window does."""
        self._screenshot_requested = True

    def _screenshot_path(self) -> Path:
        stem = f"kernel-lab-{datetime.now():%Y%m%d-%H%M%S}"
        path = self.screenshot_dir / f"{stem}.png"
        suffix = 1
        while path.exists():
            path = self.screenshot_dir / f"{stem}-{suffix}.png"
            suffix += 1
        return path

    def _save_screenshot(self, fb_size: tuple[int, int], path: Path | None = None) -> Path | None:
        # Read an offscreen copy of the frame, not the window: Mesa leaves a GL error behind
        # after reading the default framebuffer.
        with self.controller.guard("screenshot"):
            target = Offscreen(self.ctx, fb_size)
            try:
                self._draw(target.fbo, fb_size)
                path = write_png(path or self._screenshot_path(), target.read_rgb())
            finally:
                target.release()
            self.last_screenshot = path
            self.controller.say(f"screenshot: {path}")
            return path
        return None

    # --- pyglet events -----------------------------------------------------------------------
    def on_key_press(self, symbol: int, modifiers: int):
        self.input.key(symbol, modifiers, True)
        if self.input.wants_keyboard:
            return EVENT_HANDLED  # typing into a widget; Esc leaves the widget, not the viewer
        dispatch_key(symbol, modifiers, self, self.controller)
        return EVENT_HANDLED  # also keeps pyglet from closing the window on Esc by itself

    def on_key_release(self, symbol: int, modifiers: int):
        self.input.key(symbol, modifiers, False)
        return EVENT_HANDLED

    def on_text(self, text: str):
        self.input.text(text)
        return EVENT_HANDLED

    def on_mouse_motion(self, x, y, dx, dy):
        self.input.mouse_position(x, y)

    def on_mouse_press(self, x, y, button, modifiers):
        wanted = self.input.wants_mouse
        self.input.mouse_button(x, y, button, True)
        if wanted or self._drag is not None:
            return
        if button == mouse.LEFT:
            # A 2D scene's camera does not orbit: its left drag pans.
            orbit = self.camera.orbit_enabled and not modifiers & key.MOD_SHIFT
            self._drag = "orbit" if orbit else "pan"
        elif button == mouse.MIDDLE:
            self._drag = "pan"
        elif button == mouse.RIGHT:
            self._drag = "zoom"

    def on_mouse_release(self, x, y, button, modifiers):
        self.input.mouse_button(x, y, button, False)
        self._drag = None

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self.input.mouse_position(x, y)
        if self._drag == "orbit":
            self.camera.orbit(dx, dy)
        elif self._drag == "pan":
            self.camera.pan(dx, dy, self.window.get_size()[1])
        elif self._drag == "zoom":
            self.camera.zoom(1.01 ** -dy)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.input.mouse_position(x, y)
        self.input.scroll(scroll_x, scroll_y)
        if not self.input.wants_mouse:
            self.camera.zoom(0.9**scroll_y)

    def on_resize(self, width, height):
        return EVENT_HANDLED  # sizes are read every frame; pyglet's own projection is not used

    def on_activate(self):
        self.input.focus(True)

    def on_deactivate(self):
        self.input.focus(False)

    def on_close(self):
        self._quit_requested = True
        return EVENT_HANDLED


def main(scene, width: int = 1280, height: int = 800, steps: int | None = None,
         screenshot: str | Path | None = None) -> int:
    """Open the viewer on ``scene`` until the user quits; returns a process exit status.

    With ``steps``: a scripted run that advances the scene to exactly that many physics steps,
    saves the window to ``screenshot`` if given, and closes (status 1 if a step or the PNG failed).
    """
    problem = display_problem()
    if problem:
        print(f"viewer: {problem}", file=sys.stderr)
        return 2
    try:
        viewer = Viewer(scene, width, height)
    except Exception as exc:  # noqa: BLE001  no window: say why in one line
        print(f"viewer: cannot open the window: {exc}", file=sys.stderr)
        return 1
    if steps is not None:
        viewer.stop_at_steps = scene.steps + int(steps)
        viewer.final_screenshot = Path(screenshot) if screenshot else None
    elif screenshot:
        viewer.final_screenshot = Path(screenshot)
        viewer.stop_at_steps = scene.steps
    viewer.run()
    if viewer.exit_status and viewer.message:
        print(f"viewer: {viewer.message}", file=sys.stderr)
    return viewer.exit_status
