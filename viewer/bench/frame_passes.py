"""The frame benchmark's passes (``python -m viewer.bench.frame``): the surface drawn into (an offscreen EGL
framebuffer or a window), whole frames timed by ``sim.gpu.measure`` on the host clock (with or without the
device synchronised between physics, feed and draw), the recording and picking passes, and ``measure``, which
runs them on one scene and returns the figures."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import moderngl
import numpy as np

from sim.cmdline import interrupts
from sim.gpu import measure as harness
from viewer.bench.panel_layer import PanelLayer, label
from viewer.frame import FrameComposer, Surface, offscreen_surface
from viewer.render.camera import OrbitCamera
from viewer.render.view import SceneView, default_camera


def window_surface(width: int, height: int) -> Surface:
    from viewer.window.display import _make_window

    window = _make_window(width, height, True, "kernel-lab frame benchmark")
    window.switch_to()
    ctx = moderngl.create_context()

    def present() -> None:
        window.dispatch_events()
        window.flip()

    return Surface(ctx, ctx.screen, present, window.close, "window")


RUN = 10  # the picking pass alternates this many frames with and without a pick
Frames = Callable[..., tuple[harness.Timing, np.ndarray]]  # time_frames of one measured setup: (frames, split, ...)


def device_sync(scene) -> None:
    """Wait for the scene's CUDA work (a no-op for a scene that runs none)."""
    scene.finish()


def time_frames(
    scene,
    composer: FrameComposer,
    surface: Surface,
    size: tuple[int, int],
    camera: OrbitCamera,
    mode: str,
    frames: int,
    split: bool,
    after_draw: Callable[[], None] | None = None,
    warmup: int = 0,
    before_draw: Callable[[], None] | None = None,
    panel: PanelLayer | None = None,
) -> tuple[harness.Timing, np.ndarray]:
    """(the whole frame's timing in ms, (frames, 3) milliseconds: physics, the view into the GL buffers,
    drawing), whole frames timed by ``sim.gpu.measure`` on the host clock: ``frames`` of them after ``warmup``.

    With ``split`` False nothing waits inside a frame, so the device's physics and interop work
    spills into the later columns: only the whole frame counts then. ``before_draw`` runs between the
    view's update and its drawing (a pick, where the window makes it), ``after_draw`` after the drawing (a
    recording's read-back), both inside the whole frame's time; ``panel``'s ImGui frame is laid out after the
    view's update and drawn over the view (the draw column holds both). No L2 flush:
    frames follow each other as in the window, each finding what the last one left.
    """
    parts: list[tuple[float, float, float]] = []
    view = composer.view

    def frame() -> None:
        start = time.perf_counter()
        scene.advance_frame()
        if split:
            device_sync(scene)
        physics_done = time.perf_counter()
        view.show(scene, mode)
        if split:
            device_sync(scene)
        fed = time.perf_counter()
        if panel is not None:
            panel.compose()
        if before_draw is not None:
            before_draw()
        composer.draw(surface.fbo, camera, size, panel.covered if panel else 0, panel is not None)
        if after_draw is not None:
            after_draw()
        surface.present()
        surface.ctx.finish()
        end = time.perf_counter()
        parts.append(((physics_done - start) * 1e3, (fed - physics_done) * 1e3, (end - fed) * 1e3))

    # exactly ``frames``: the scene moves on while it is timed (balls fall, splash, settle, and their steps cost
    # more or less), so more frames would time a later state; this way every run times the same stretch of it
    timing = harness.measure(
        frame, harness.HostClock(), warmup=warmup, min_repeats=frames, max_repeats=frames, between=interrupts.check
    )
    return timing, np.array(parts[warmup:]).reshape(-1, 3)


def recording_pass(run: Frames, scene, surface: Surface, size, frames: int, path) -> dict:
    """Whole frames (``run``: ``time_frames`` of the measured setup), each also recorded: read back through
    the pixel ring, encoded on its thread."""
    from viewer.record.recorder import STEPS, Recorder, RecordOptions

    recorder = Recorder(
        surface.ctx, path, size, RecordOptions(STEPS, every=scene.spec.steps_per_frame, fps=60), steps=scene.steps
    )
    try:
        timing, _ = run(
            frames, split=False, after_draw=lambda: recorder.capture(surface.fbo, copies=recorder.due(scene.steps))
        )
    except BaseException:
        recorder.abort()
        raise
    started = time.perf_counter()
    saved = recorder.stop()
    return {
        **timing.fields("record_frame_ms", "record_repeats"),
        "record_frames": recorder.frames,
        "record_finish_s": time.perf_counter() - started,
        "record_path": str(saved),
        "record_codec": recorder.writer.codec,
    }


def picking_pass(run: Frames, scene, composer: FrameComposer, size, camera, frames: int) -> dict:
    """Whole frames that also pick the item under the centre of the view and describe it as the window
    does (between the view's update and its drawing; the answer and the description a frame late where
    they are read from the device), interleaved in runs
    of ``RUN`` with as many frames that do not, so that the difference is not the scene's own drift
    (balls settling make later frames slower)."""
    from viewer.pick.picker import Picking
    from viewer.pick.tooltip import LateReports
    from viewer.window.input import scene_point

    picking, reports = Picking(), LateReports()
    sx, sy, origin, direction = scene_point(camera, size[0] / 2, size[1] / 2, size)
    pick_ms, found = [], []

    def pick() -> None:
        started = time.perf_counter()
        picking.hover(composer.view, (origin, direction), (sx, sy))
        if picking.hovered is not None:
            if reports.report(scene, picking.hovered, "hover") is not None:
                found.append(picking.hovered)
        pick_ms.append((time.perf_counter() - started) * 1e3)

    picked: list[bool] = []  # whether each frame picked

    def pick_or_not() -> None:
        picked.append((len(picked) // RUN) % 2 == 1)
        if picked[-1]:
            pick()

    try:
        _, parts = run(max(2 * frames, 4 * RUN), split=False, before_draw=pick_or_not)  # two runs of each at least
    finally:
        picking.release()
    whole = parts.sum(axis=1)
    on = np.array(picked[: len(whole)], bool)
    with_pick, without = harness.summarise(whole[on]), harness.summarise(whole[~on])
    return {
        **with_pick.fields("pick_frame_ms", "pick_repeats"),
        "pick_plain_frame_ms": without.median,
        "pick_plain_frame_ms_err": without.error,
        "pick_added_ms": with_pick.median - without.median,
        "pick_ms": float(np.median(pick_ms)),
        "pick_method": picking.used,
        "picked": len(found),
    }


def measure(
    scene,
    width: int,
    height: int,
    frames: int,
    warmup: int,
    headless: bool,
    record=None,
    pick: bool = False,
    opened: tuple[str, ...] | None = None,
) -> dict:
    """``opened``: the panel's open sections (``viewer.bench.panel_layer``), None for no panel."""
    surface = offscreen_surface(width, height) if headless else window_surface(width, height)
    layer = None
    try:
        view = SceneView(surface.ctx)
        composer = FrameComposer(view)
        try:
            mode = next(iter(scene.color_modes), "")
            view.show(scene, mode)
            camera = default_camera(view.current)
            size = (width, height)
            layer = PanelLayer(composer, scene, size, opened) if opened is not None else None
            run = functools.partial(time_frames, scene, composer, surface, size, camera, mode, panel=layer)
            whole, _ = run(frames, split=False, warmup=warmup)  # the warm-up compiles and settles
            split_timing, split = run(frames, split=True)
            extra = {}
            if record is not None:
                extra.update(recording_pass(run, scene, surface, size, frames, record))
            if pick:
                extra.update(picking_pass(run, scene, composer, size, camera, frames))
            return {
                **extra,
                "panel": label(opened),
                "surface": surface.kind,
                "renderer": surface.ctx.info.get("GL_RENDERER", "?"),
                "feed": view.feed.path if view.feed else "ImGui",
                "fallback": view.feed.fallback_reason if view.feed else None,
                "drawn_as": view.drawn_as + (f" ({view.splat_problem})" if view.splat_problem else ""),
                **whole.fields("frame_ms"),
                "physics_ms": float(np.median(split[:, 0])),
                "feed_ms": float(np.median(split[:, 1])),
                "draw_ms": float(np.median(split[:, 2])),
                **split_timing.fields("split_frame_ms", "split_repeats"),
                "stages": {name: scene.timer.median(name) for name in scene.timer.names},
            }
        finally:
            if layer is not None:
                layer.release()
            view.release()
    finally:
        surface.close()
