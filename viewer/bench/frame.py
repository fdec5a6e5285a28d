"""Time whole displayed frames: ``python -m viewer.bench.frame -n 1000000 --size 1920x1080 [--backend gpu]
[--scene NAME] [--preset P] [--variant V] [--frames 100] [--headless] [--panel all] [--record OUT.mp4] [--pick]``.

Loads a scene of the registry with n items and times frames as the viewer shows them: one
displayed frame of physics (``scene.advance_frame()``: ``spec.steps_per_frame`` steps), the view
into the GL buffers (CUDA–GL interop for a view on the device, host uploads otherwise), the
view of the whole scene drawn at the given size, and ``finish()``. By default the preset is the
scene's run preset when it takes a count, else its preset with the largest default count (the
balls' block lattice); the variant is the one the spec names for large counts (``gpu.fastest``).
The viewer's ``FrameComposer`` draws the view and over it the panel, laid out each frame with the
sections ``--panel`` opens (``viewer.bench.panel_layer``; default every section, as a user who opened
them has it; ``off``: the view alone). ``--headless`` (or no display) draws into an offscreen
framebuffer of a standalone EGL context: no X server needed.

Two passes: whole frames as the viewer runs them (the median is the headline), then the same
frames with the device synchronised after the physics and after the view reaches the GL buffers,
which splits each frame into physics, feed and draw time at the cost of the overlap between them.
``--record`` adds a pass of whole frames that are also recorded (read back through the recorder's
pixel ring and encoded to the MP4, a video frame per displayed frame) and reports its cost against
the plain pass; ``--pick`` adds a pass that picks the item under the view's centre every frame as
the window does when the pointer moves (the CUDA ray test on the device path, the ray test on the host
path, then the item's description) and reports what it adds per frame.

Each pass is timed by ``sim.gpu.measure`` on the host clock (a frame ends with the GL finish): at least
``--frames`` frames, more until the median is known to 1% or the budget ends; median ± error (frames).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable

import moderngl
import numpy as np

from sim.cmdline import interrupts
from sim.gpu import measure as harness
from sim.registry import SCENES
from viewer.bench.panel_layer import CHOICES, PanelLayer, label, sections
from viewer.frame import FrameComposer, Surface, offscreen_surface
from viewer.render.camera import OrbitCamera
from viewer.render.view import SceneView, default_camera


def timed_preset(spec) -> str:
    """The preset timed by default: the run preset if it takes a count, else the one that takes the
    largest default count (a lattice to fill with n items)."""
    start = spec.preset(spec.start_preset)
    if start.count is not None:
        return start.name
    counted = [p for p in spec.presets if p.count is not None]
    if not counted:
        return start.name
    return max(counted, key=lambda p: p.count).name


def timed_variant(spec) -> str | None:
    """The variant for large counts (the balls' grid: the z-sweep is far slower at millions)."""
    return (spec.gpu.fastest or spec.gpu.default_variant) if spec.gpu else None


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
    drawing), whole frames timed by ``sim.gpu.measure`` on the host clock: at least ``frames`` after ``warmup``.

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

    timing = harness.measure(frame, harness.HostClock(), warmup=warmup, min_repeats=frames, between=interrupts.check)
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
        _, parts = run(2 * frames, split=False, before_draw=pick_or_not)
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


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size {text!r} is not WIDTHxHEIGHT") from None
    if width < 1 or height < 1:
        raise argparse.ArgumentTypeError(f"size {text!r} must be positive")
    return width, height


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time whole displayed frames (physics + render).")
    parser.add_argument("-n", type=int, default=1_000_000, help="item count (default 1000000)")
    parser.add_argument(
        "--scene", choices=tuple(SCENES), default=next(iter(SCENES)), help=f"default {next(iter(SCENES))}"
    )
    parser.add_argument(
        "--preset", help="default: the run preset if it takes a count, else the preset with the largest default count"
    )
    parser.add_argument("--variant", help="GPU kernel variant; default: the spec's variant for large counts")
    parser.add_argument("--size", type=_size, default=(1920, 1080), help="WxH (default 1920x1080)")
    parser.add_argument(
        "--backend",
        choices=("cpu", "gpu", "auto"),
        default="auto",
        help="physics backend (default auto: the GPU when there is one)",
    )
    parser.add_argument(
        "--frames",
        type=int,
        default=100,
        help="timed frames per pass, at least (default 100; more until the median is known to 1%% "
        "or the time budget ends)",
    )
    parser.add_argument("--warmup", type=int, default=10, help="untimed frames first (default 10)")
    parser.add_argument(
        "--headless", action="store_true", help="draw offscreen through EGL (the default when there is no display)"
    )
    parser.add_argument("--record", metavar="MP4", help="also time frames recorded to this MP4 (H.264, --size: even)")
    parser.add_argument("--pick", action="store_true", help="also time frames that pick the item under the centre")
    parser.add_argument(
        "--panel",
        default="all",
        metavar="SECTIONS",
        help=f"the panel over the view with these sections open: {', '.join(CHOICES)} (no panel) or "
        "a comma list of section titles (default all: every section open)",
    )
    parser.add_argument(
        "--json", metavar="FILE", help="also write the figures as JSON to FILE (sim.cmdline.bench's report)"
    )
    args = parser.parse_args(argv)
    if args.n < 1 or args.frames < 1 or args.warmup < 0:
        parser.error("-n and --frames must be at least 1, --warmup at least 0")
    try:
        opened = sections(args.panel)
    except ValueError as exc:
        parser.error(str(exc))
    if args.record is not None:
        from sim.cmdline.cli import UsageError
        from viewer.record.video import check_video_target

        try:
            check_video_target(args.record, args.size)
        except UsageError as exc:
            parser.error(str(exc))
    if args.json is not None:
        from sim.cmdline.cli import UsageError
        from sim.cmdline.writer import check_target

        try:
            check_target(args.json, "JSON file")
        except UsageError as exc:
            parser.error(str(exc))

    from viewer.window.app import display_problem

    headless = args.headless or display_problem() is not None
    from sim.gpu.backend import BackendUnavailable

    spec = SCENES[args.scene]
    knobs = {"variant": args.variant or timed_variant(spec)} if spec.gpu else {}
    try:
        scene = spec.create(preset=args.preset or timed_preset(spec), n=args.n, backend=args.backend, **knobs)
    except BackendUnavailable as exc:
        print(f"frame_bench: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"frame_bench: {exc}", file=sys.stderr)
        return 2
    width, height = args.size
    started_with = scene.n  # the count timed (balls that fall out of the trough are dropped on the way)
    result = measure(scene, width, height, args.frames, args.warmup, headless, args.record, args.pick, opened)
    feed = result["feed"] + (f" (interop unavailable: {result['fallback']})" if result["fallback"] else "")
    unit = spec.words.unit
    variant = f", {scene.knobs.variant} variant" if spec.gpu else ""
    end = f", {scene.n:,} at the end" if scene.n != started_with else ""
    print(
        f"{started_with:,} {unit}{end} ({scene.preset} preset{variant}, {spec.steps_per_frame} steps a frame), "
        f"{scene.backend}, {width}x{height} {result['surface']} on {result['renderer']}; "
        f"view into GL through {feed}, drawn as {result['drawn_as']}; panel: {result['panel']}"
    )
    print(
        f"whole frame: median ± 95% error (frames) {harness.figure_text(result, 'frame_ms')} ms "
        f"({1e3 / result['frame_ms']:.1f} frames/s)"
    )
    render_ms = result["feed_ms"] + result["draw_ms"]
    print(
        f"split (device synced between parts): physics {result['physics_ms']:.2f} ms, "
        f"render {render_ms:.2f} ms = view into GL {result['feed_ms']:.2f} + draw {result['draw_ms']:.2f}, "
        f"frame {result['split_frame_ms']:.2f} ms (medians)"
    )
    stages = ", ".join(f"{name} {ms:.2f}" for name, ms in result["stages"].items())
    print(f"scene stage timer (ms per frame, median): {stages}")
    base = result["frame_ms"]
    if "record_frame_ms" in result:
        ms = result["record_frame_ms"]
        print(
            f"recording ({result['record_codec']}, a video frame per frame): median "
            f"{harness.figure_text(result, 'record_frame_ms', repeats='record_repeats')} ms "
            f"({1e3 / ms:.1f} frames/s), {100 * (base / ms - 1):+.1f}% frame rate against no recording; "
            f"{result['record_frames']} frames, finishing the file took {result['record_finish_s']:.2f} s: "
            f"{result['record_path']}"
        )
    if "pick_frame_ms" in result:
        ms = result["pick_frame_ms"]
        print(
            f"picking ({result['pick_method']}, every other run of {RUN} frames, {result['picked']} frames showed a "
            f"tooltip): median {harness.figure_text(result, 'pick_frame_ms', repeats='pick_repeats')} ms per frame, "
            f"{result['pick_added_ms']:+.2f} ms against the frames between them without (median "
            f"{result['pick_plain_frame_ms']:.2f} ms); the pick and description alone {result['pick_ms']:.3f} ms "
            f"of host time"
        )
    if args.json:
        write_report(args.json, scene, started_with, width, height, args.frames, result)
    return 0


def write_report(path: str, scene, n: int, width: int, height: int, frames: int, result: dict) -> None:
    """The figures as sim.cmdline.bench's report: one record, the scene's knobs (``n``: the count at the start, the
    configuration timed; ``n_end`` the count at the end) and every number measured."""
    import json

    from sim.cmdline import bench
    from sim.cmdline.writer import write_text

    record = {
        "scene": scene.spec.name,
        "preset": scene.preset,
        "n": n,
        "n_end": scene.n,
        "backend": scene.backend,
        "variant": scene.knobs.variant if scene.spec.gpu else None,
        "width": width,
        "height": height,
        "frames": frames,
        **{k: v for k, v in result.items() if v is None or isinstance(v, int | float | str | dict)},
    }
    write_text(path, json.dumps(bench.report("frame", [record]), indent=2) + "\n", "JSON file")


if __name__ == "__main__":
    sys.exit(main())
