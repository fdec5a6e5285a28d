"""The viewer window: pyglet for the window and input, moderngl for drawing, ImGui for the panel.

``Viewer.tick()`` runs exactly one frame (events, physics unless paused, the live histogram when
due, the scene's view into the renderers, the 3D or 2D view, plots and panel, flip), so tests can
drive the window without ``pyglet.app.run``. Pointer drags go to the camera or, by the rule in
``viewer.window.input``, to the scene's tool in scene coordinates.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime
from pathlib import Path

import moderngl

from sim.contract import PointerEvent
from viewer import AUTO_HEADLESS, pyglet
from viewer.panel.gui import Gui
from viewer.panel.help import draw_help
from viewer.panel.panel import PANEL_WIDTH, Panel
from viewer.png import write_png
from viewer.render.offscreen import Offscreen
from viewer.render.view import SceneView, default_camera
from viewer.window.controller import Controller
from viewer.window.icon import set_window_icon
from viewer.window.input import BUTTON_NAMES, ORBIT, PAN, TOOL, ZOOM, ImGuiInput, gesture, scene_point
from viewer.window.keys import dispatch_key, key
from viewer.window.rates import RateMeter

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
        self.window = _make_window(width, height, visible, f"kernel-lab — {scene.spec.name}")
        set_window_icon(self.window)
        self.window.switch_to()
        self.ctx = moderngl.create_context()
        if self.ctx.version_code < 330:
            raise RuntimeError(f"OpenGL 3.3 needed, got {self.ctx.info['GL_VERSION']}")
        self.controller = Controller(scene)
        self.view = SceneView(self.ctx)
        self.camera = None  # framed on the first view (plots have none)
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
        self._drag: str | None = None  # the gesture of the button held down (a camera move or TOOL)
        self._tool_button = ""  # the button of a tool drag
        self.stop_at_steps: int | None = None  # scripted run: quit once the scene reaches this step
        self.final_screenshot: Path | None = None  # ... after saving the window here
        self.exit_status = 0
        self._interop_reported = False  # the reason for host uploads of a GPU view is said once
        self._splat_reported = False  # likewise why its items are not splatted by CUDA
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
        self.view.draw_plots(self._plots_area(), self._point_moved)
        self.panel.draw(self.controller, self, shown=self.view.current, feed=self.view.feed)
        if self.show_help:
            self.show_help = draw_help(self.scene.spec)
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

    def _upload(self) -> None:
        ctl = self.controller
        ctl.watch_scene()
        with ctl.guard("reading the scene"):
            if self.view.show(ctl.scene, ctl.color_mode) or self.camera is None:
                self.reset_camera()  # another trough, box, extent or scene: frame the new one
        feed = self.view.feed
        if feed is not None and feed.fallback_reason and not self._interop_reported:
            self._interop_reported = True
            ctl.say(f"GPU {self._drawn_noun()} drawn through host copies: {feed.fallback_reason}")

    def _drawn_noun(self) -> str:
        return self.scene.spec.words.unit if self.view.kind == "points" else "field"

    def _covered_right(self, fb_size: tuple[int, int]) -> int:
        """Framebuffer pixels the panel covers at the right edge."""
        scale = fb_size[0] / max(self.window.get_size()[0], 1)
        return int((PANEL_WIDTH + 16) * scale)

    def _plots_area(self) -> tuple[float, float, float, float]:
        width, height = self.window.get_size()
        return 0.0, 0.0, float(max(width - PANEL_WIDTH - 16, 1)), float(height)

    def _point_moved(self, target: str, x: float, y: float) -> None:
        self.controller.pointer(PointerEvent("point", x, y, target=target))

    def _draw(self, target: moderngl.Framebuffer, fb_size: tuple[int, int]) -> None:
        self.view.draw(target, self.camera, fb_size, self._covered_right(fb_size))
        if self.view.splat_problem and not self._splat_reported:
            self._splat_reported = True
            self.controller.say(f"GPU {self._drawn_noun()} drawn as impostors: {self.view.splat_problem}")
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
        self.camera = default_camera(self.view.current)

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
        if wanted or self._drag is not None or self.camera is None:
            return
        spec = self.scene.spec
        self._drag = gesture(button, modifiers, spec.tool is not None, self.scene.tool_on, self.camera.orbit_enabled)
        if self._drag == TOOL:
            self._tool_button = BUTTON_NAMES[button]
            self._send_pointer("press", x, y, modifiers)

    def on_mouse_release(self, x, y, button, modifiers):
        self.input.mouse_button(x, y, button, False)
        if self._drag == TOOL:
            self._send_pointer("release", x, y, modifiers)
        self._drag = None

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self.input.mouse_position(x, y)
        if self.camera is None:
            return
        if self._drag == ORBIT:
            self.camera.orbit(dx, dy)
        elif self._drag == PAN:
            self.camera.pan(dx, dy, self.window.get_size()[1])
        elif self._drag == ZOOM:
            self.camera.zoom(1.01 ** -dy)
        elif self._drag == TOOL:
            self._send_pointer("drag", x, y, modifiers)

    def _send_pointer(self, kind: str, x: float, y: float, modifiers: int) -> None:
        """A tool event at window point (x, y), in scene coordinates (3D views: with the ray)."""
        fb_size = self.window.get_framebuffer_size()
        scale = fb_size[0] / max(self.window.get_size()[0], 1)
        sx, sy, origin, direction = scene_point(self.camera, x * scale, y * scale, fb_size,
                                                self._covered_right(fb_size))
        ray = {"origin": tuple(map(float, origin)), "direction": tuple(map(float, direction))} \
            if self.camera.orbit_enabled else {}
        self.controller.pointer(PointerEvent(kind, sx, sy, self._tool_button, bool(modifiers & key.MOD_SHIFT),
                                             bool(modifiers & key.MOD_CTRL), **ray))

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.input.mouse_position(x, y)
        self.input.scroll(scroll_x, scroll_y)
        if not self.input.wants_mouse and self.camera is not None:
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
