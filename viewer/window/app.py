"""The viewer window: pyglet for the window and input, moderngl for drawing, ImGui for the panel.

``Viewer.tick()`` runs exactly one frame (events, physics unless paused, the live histogram when
due, the scene's view into the renderers, the 3D or 2D view, plots and panel, flip), so tests can
drive the window without ``pyglet.app.run``. Pointer drags go to the camera or, by the rule in
``viewer.window.input``, to the scene's tool in scene coordinates.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import moderngl

from sim.cmdline import interrupts
from sim.contract import PointerEvent
from viewer.frame import FrameComposer
from viewer.keys import KeyMap
from viewer.panel import style
from viewer.panel.gui import Gui
from viewer.panel.help import draw_help
from viewer.panel.panel import Panel
from viewer.render.view import SceneView
from viewer.settings import Settings
from viewer.window.actions import WindowActions
from viewer.window.controller import Controller
from viewer.window.display import _make_window
from viewer.window.events import WindowEvents
from viewer.window.geometry import WindowGeometry
from viewer.window.icon import set_window_icon
from viewer.window.input import ImGuiInput
from viewer.window.loop import FrameLoop
from viewer.window.pointing import WindowPicking
from viewer.window.rates import RateMeter
from viewer.window.reach import draw_tool_reach
from viewer.window.recording import RECORDING_DIR, WindowRecording
from viewer.window.session import SessionSettings
from viewer.window.shortcuts import ViewerShortcuts
from viewer.window.viewpoint import Viewpoint

SCREENSHOT_DIR = Path("screenshots")


class Viewer(ViewerShortcuts):
    """The window and what it is made of, wired here: the ``controller`` (what the user does to the
    scene), the ``composer`` (a frame onto a framebuffer), ``events`` (pyglet's handlers), ``actions``
    (the window's own keys and buttons), ``loop`` (how frames follow one another), ``session`` (the
    settings kept between sessions), ``pointing`` (picking), ``recording`` (R), ``viewpoint`` (the camera and
    its bookmarks) and ``geometry`` (the window's sizes and the panel's share). Each part is given the few
    of these it acts on; the loop drives the viewer itself (``FrameHost``).

    ``settings``: what was saved (``viewer.settings``), applied now and updated by ``close()``;
    None starts clean and keeps the session's choices in memory only."""

    def __init__(
        self,
        scene,
        width: int = 1280,
        height: int = 800,
        visible: bool = True,
        max_fps: float | None = 60.0,
        screenshot_dir: Path | str = SCREENSHOT_DIR,
        recording_dir: Path | str = RECORDING_DIR,
        settings: Settings | None = None,
        baseline: dict | None = None,
    ):
        self.window = _make_window(width, height, visible, f"kernel-lab — {scene.spec.name}")
        set_window_icon(self.window)
        self.window.switch_to()
        self.ctx = moderngl.create_context()
        if self.ctx.version_code < 330:
            raise RuntimeError(f"OpenGL 3.3 needed, got {self.ctx.info['GL_VERSION']}")
        self.controller = controller = Controller(scene)
        self.geometry = WindowGeometry(self.window)
        self.view = SceneView(self.ctx)
        self.viewpoint = Viewpoint(self.view)
        self.gui = Gui(self.ctx)
        self.composer = FrameComposer(self.view, self.gui)
        self.input = ImGuiInput(self.gui, lambda: self.window.get_size()[1])
        self.panel = Panel(baseline)
        self.pointing = WindowPicking(self.view, self.viewpoint, self.geometry, self.input, controller)
        self.recording = WindowRecording(recording_dir)
        self.max_fps = max_fps
        self.frame_rate = RateMeter()
        self.render_ms = 0.0
        self.frames = 0
        self.last_tick = time.perf_counter()
        self.closed = False
        self.scene_replaced = False  # the controller switched scenes since this frame began
        self._interop_reported = False  # the reason for host uploads of a GPU view is said once
        self._splat_reported = False  # likewise why its items are not splatted by CUDA
        self.settings = settings if settings is not None else Settings(None)  # in memory only when None
        self.ui_scale = style.clamp_ui_scale(getattr(self.window, "scale", 1.0) or 1.0)  # the monitor's
        self.actions = WindowActions(
            self.geometry,
            self.ctx,
            controller,
            self.viewpoint,
            self.recording,
            self.pointing,
            self.draw_frame,
            Path(screenshot_dir),
        )
        self.loop = FrameLoop(self, controller, self.actions, self.settings)
        self.session = SessionSettings(self.settings, controller, self.window, self.viewpoint, self.recording)
        self.events = WindowEvents(
            self.input,
            self.pointing,
            self.viewpoint,
            self.geometry,
            controller,
            self.actions,
            KeyMap(controller, self.actions),
            busy=lambda: self.loop.warm_up is not None,
        )
        controller.on_switch = self._scene_switched
        controller.new_scene = self.session.new_scene
        self.ui_scale = self.session.apply(self.ui_scale)
        self.window.push_handlers(self.events)  # held weakly by pyglet; the viewer holds it

    def _scene_switched(self, old, old_color_mode: str) -> None:
        """The controller replaced the scene: its settings kept and the new one's applied, the pin and the
        camera dropped (the new view is framed afresh), its first frame due on the worker."""
        self.session.scene_switched(old, old_color_mode)
        self.pointing.picking.unpin()
        self.viewpoint.camera = None
        self.scene_replaced = True
        self.loop.warm_up_due = True

    # --- one frame --------------------------------------------------------------------------
    def tick(self) -> bool:
        """Run one frame; returns False once the window is closed."""
        if self.closed:
            return False
        interrupts.check()  # a signal noted while numba ran stops the window here, between frames
        self.window.switch_to()
        self.window.dispatch_events()
        if self.actions.quit_requested:
            self.close()
            return False
        now = time.perf_counter()
        dt, self.last_tick = now - self.last_tick, now
        self.scene_replaced = False
        if self.loop.warming_up(dt):
            return True

        self.loop.advance(self.render_ms)
        self.controller.histogram.frame(self.scene)
        start = time.perf_counter()
        self.upload()
        fb_size = self.geometry.fb_size()
        if self.recording.size_changed(fb_size):
            self.actions.stop_recording("the window changed size")
        self._set_ui_scale()
        if not self.composer.compose_ui(
            self.window.get_size(), fb_size, dt, self.geometry.plots_area(), self._overlays, self._point_moved
        ):
            return True  # the panel switched scenes: this frame's view and legend are the old one's
        recording = self.recording.active
        target = self.recording.framebuffer(self.ctx, fb_size) if recording else self.ctx.screen
        self.draw_frame(target, fb_size)
        if recording:
            self.recording.target.show(self.ctx.screen)  # what the user sees
            if not self.controller.act("recording", self.recording.capture, self.scene.steps):
                self.actions.abandon_recording()
        if self.actions.screenshot_requested:
            self.actions.screenshot_requested = False
            self.actions.save_screenshot(fb_size)
        self.loop.after_draw(fb_size)
        self.window.flip()
        self.render_ms = (time.perf_counter() - start) * 1e3
        self.frames += 1
        self.frame_rate.update(self.frames)
        return True

    def _overlays(self, fb_size: tuple[int, int]) -> bool:
        """The window's share of the ImGui frame: the panel, picking, the tool's reach, the help."""
        self.panel.draw(self.controller, self, shown=self.view.current, feed=self.view.feed, legend=self.view.legend)
        if self.scene_replaced:
            return False
        drag = self.events.drag
        self.pointing.update(fb_size, dragging=drag is not None)
        self.pointing.draw(fb_size)
        draw_tool_reach(
            self.scene,
            self.viewpoint.camera,
            self.pointing.pointer,
            self.geometry,
            self.input.wants_mouse,
            fb_size,
            drag,
        )
        if self.actions.show_help:
            self.actions.show_help = draw_help(self.scene.spec)
        return True

    def show_initial_state(self) -> None:
        self.window.switch_to()
        self.upload()

    def draw_busy_frame(self, dt: float, note: str, overlay) -> None:
        """A frame while the scene is busy on the worker: its state and legend, the panel waiting (saying
        ``note``) and ``overlay((width, height))`` over the view beside the panel; no plots (the scene steps)."""
        fb_size = self.geometry.fb_size()
        area = self.geometry.plots_area()

        def busy(_fb_size) -> bool:
            self.panel.draw_busy(self.controller, note)
            overlay((area[2], area[3]))
            return True

        self.composer.compose_ui(self.window.get_size(), fb_size, dt, area, busy)
        self.draw_frame(self.ctx.screen, fb_size)
        self.window.flip()

    def _set_ui_scale(self) -> None:
        if abs(style.ui_scale() - self.ui_scale) > 1e-6 or abs(self.gui.scale - self.ui_scale) > 1e-6:
            self.ui_scale = style.set_ui_scale(self.ui_scale)
            self.gui.set_ui_scale(self.ui_scale)

    def upload(self) -> None:
        """The scene's view into the GL buffers (framing a new one with the default or saved camera)."""
        ctl = self.controller
        ctl.watch_scene()
        with ctl.guard("reading the scene"):
            if self.view.show(ctl.scene, ctl.color_mode) or self.viewpoint.camera is None:
                self.viewpoint.reset()  # another trough, box, extent or scene: frame the new one
                self.session.restore_pending_camera()
        feed, shown = self.view.feed, self.view.current
        if feed is not None and feed.fallback_reason and shown.on_device and not self._interop_reported:
            self._interop_reported = True
            ctl.say(f"GPU {self._drawn_noun()} drawn through host copies: {feed.fallback_reason}")

    def _drawn_noun(self) -> str:
        return self.scene.spec.words.unit if self.view.kind == "points" else "field"

    def _point_moved(self, target: str, x: float, y: float) -> None:
        self.controller.pointer(PointerEvent("point", x, y, target=target))

    def draw_frame(self, target: moderngl.Framebuffer, fb_size: tuple[int, int]) -> None:
        """The frame composed last (the view under the ImGui layer) into ``target``."""
        self.composer.draw(target, self.viewpoint.camera, fb_size, self.geometry.covered_right(fb_size), ui=True)
        if self.view.splat_problem and not self._splat_reported:
            self._splat_reported = True
            self.controller.say(f"GPU {self._drawn_noun()} drawn as impostors: {self.view.splat_problem}")

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.loop.finish_warm_up()  # the worker steps the scene: let it finish before the scene is saved
        self.controller.kernel.drop()  # a user's kernel: its watcher and sandbox worker stop
        self.window.switch_to()
        self.session.save(self.ui_scale)
        if self.recording.active:  # the panel goes with the window: say on the terminal where the video went
            self.actions.stop_recording("the viewer closed")
            print(f"viewer: {self.message}", file=sys.stderr)
        self.recording.release()
        self.pointing.release()
        self.gui.release()
        self.view.release()
        # Release moderngl's context while its window still exists: released after the window
        # closed (by the garbage collector), the next window's moderngl.create_context fails.
        self.ctx.release()
        self.window.remove_handlers(self.events)
        self.window.close()
