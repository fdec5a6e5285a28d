"""Time whole displayed frames: ``python -m viewer.frame_bench -n 1000000 --size 1920x1080 [--backend gpu]
[--scene balls|particles] [--preset P] [--variant V] [--frames 100] [--headless]``.

Loads a scene (balls: the "block" preset, grid variant; particles: the "2020" preset, plain
variant) with n balls or particles and times frames as the viewer shows them: one displayed frame
of physics (``scene.advance_frame()``: 6 steps for balls, 10 for particles), the positions and
colours into the GL buffers (CUDA–GL interop for a GPU scene, host uploads otherwise), the 3D
view of the whole scene drawn at the given size, and ``finish()``.
No panel. ``--headless`` (or no display) draws into an offscreen framebuffer of a standalone EGL
context: no X server needed.

Two passes: whole frames as the viewer runs them (the median is the headline), then the same
frames with the device synchronised after the physics and after the balls reach the GL buffers,
which splits each frame into physics, feed and draw time at the cost of the overlap between them.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import moderngl
import numpy as np

from viewer.camera import OrbitCamera
from viewer.offscreen import Offscreen
from viewer.scene_words import words_for
from viewer.view3d import SceneView, default_camera

# Per scene: the preset and variant timed by default. The balls' z-sweep variants are far slower
# than the grid at millions of balls.
DEFAULTS = {"balls": ("block", "grid"), "particles": ("2020", "plain")}


@dataclass
class Surface:
    """Where frames are drawn: a framebuffer, how to show a finished frame, how to let go."""

    ctx: moderngl.Context
    fbo: moderngl.Framebuffer
    present: Callable[[], None]
    close: Callable[[], None]
    kind: str


def offscreen_surface(width: int, height: int) -> Surface:
    ctx = moderngl.create_standalone_context(backend="egl", require=330)
    target = Offscreen(ctx, (width, height))

    def close() -> None:
        target.release()
        ctx.release()

    return Surface(ctx, target.fbo, lambda: None, close, "headless EGL")


def window_surface(width: int, height: int) -> Surface:
    from viewer.app import _make_window

    window = _make_window(width, height, True, "kernel-lab frame benchmark")
    window.switch_to()
    ctx = moderngl.create_context()

    def present() -> None:
        window.dispatch_events()
        window.flip()

    return Surface(ctx, ctx.screen, present, window.close, "window")


def device_sync(scene) -> None:
    """Wait for the scene's CUDA work (a no-op for a scene that runs none)."""
    if scene.backend == "gpu" or getattr(scene, "gpu_proximity", False):
        import cupy

        cupy.cuda.get_current_stream().synchronize()


def time_frames(scene, view: SceneView, surface: Surface, size: tuple[int, int], camera: OrbitCamera,
                mode: str, frames: int, split: bool) -> np.ndarray:
    """(frames, 4) milliseconds: physics, balls into the GL buffers, drawing, whole frame.

    With ``split`` False nothing waits inside a frame, so the device's physics and interop work
    spills into the later columns: only the whole frame counts then.
    """
    times = np.empty((frames, 4))
    for i in range(frames):
        start = time.perf_counter()
        scene.advance_frame()
        if split:
            device_sync(scene)
        physics_done = time.perf_counter()
        view.show(scene, mode)
        if split:
            device_sync(scene)
        fed = time.perf_counter()
        view.draw(surface.fbo, camera, size)
        surface.present()
        surface.ctx.finish()
        end = time.perf_counter()
        times[i] = ((physics_done - start) * 1e3, (fed - physics_done) * 1e3, (end - fed) * 1e3,
                    (end - start) * 1e3)
    return times


def measure(scene, width: int, height: int, frames: int, warmup: int, headless: bool) -> dict:
    surface = offscreen_surface(width, height) if headless else window_surface(width, height)
    try:
        view = SceneView(surface.ctx)
        try:
            camera = default_camera(scene)
            mode = next(iter(scene.color_modes), "uniform")
            size = (width, height)
            time_frames(scene, view, surface, size, camera, mode, warmup, split=True)  # compile, settle
            whole = time_frames(scene, view, surface, size, camera, mode, frames, split=False)
            split = time_frames(scene, view, surface, size, camera, mode, frames, split=True)
            return {
                "surface": surface.kind,
                "renderer": surface.ctx.info.get("GL_RENDERER", "?"),
                "feed": view.feed.path,
                "fallback": view.feed.fallback_reason,
                "balls_drawn": view.balls_drawn + (f" ({view.splat_problem})" if view.splat_problem else ""),
                "frame_ms": float(np.median(whole[:, 3])),
                "physics_ms": float(np.median(split[:, 0])),
                "feed_ms": float(np.median(split[:, 1])),
                "draw_ms": float(np.median(split[:, 2])),
                "split_frame_ms": float(np.median(split[:, 3])),
                "stages": {name: scene.timer.median(name) for name in scene.timer.names},
            }
        finally:
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
    parser.add_argument("-n", type=int, default=1_000_000, help="ball or particle count (default 1000000)")
    parser.add_argument("--scene", choices=tuple(DEFAULTS), default="balls", help="default balls")
    parser.add_argument("--preset", help="default: block (balls), 2020 (particles)")
    parser.add_argument("--variant", help="GPU kernel variant; default: grid (balls), plain (particles)")
    parser.add_argument("--size", type=_size, default=(1920, 1080), help="WxH (default 1920x1080)")
    parser.add_argument("--backend", choices=("cpu", "gpu", "auto"), default="auto",
                        help="physics backend (default auto: the GPU when there is one)")
    parser.add_argument("--frames", type=int, default=100, help="timed frames per pass (default 100)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed frames first (default 10)")
    parser.add_argument("--headless", action="store_true",
                        help="draw offscreen through EGL (the default when there is no display)")
    args = parser.parse_args(argv)
    if args.n < 1 or args.frames < 1 or args.warmup < 0:
        parser.error("-n and --frames must be at least 1, --warmup at least 0")

    from viewer.app import display_problem

    headless = args.headless or display_problem() is not None
    from sim import create_scene
    from sim.backend import BackendUnavailable

    preset, variant = DEFAULTS[args.scene]
    try:
        scene = create_scene(args.scene, preset=args.preset or preset, n=args.n, backend=args.backend,
                             variant=args.variant or variant)
    except BackendUnavailable as exc:
        print(f"frame_bench: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"frame_bench: {exc}", file=sys.stderr)
        return 2
    width, height = args.size
    result = measure(scene, width, height, args.frames, args.warmup, headless)
    feed = result["feed"] + (f" (interop unavailable: {result['fallback']})" if result["fallback"] else "")
    unit = words_for(scene).unit
    print(f"{scene.n:,} {unit} ({scene.preset} preset, {scene.variant} variant, {scene.steps_per_frame} steps "
          f"a frame), {scene.backend}, {width}x{height} {result['surface']} on {result['renderer']}; "
          f"{unit} into GL through {feed}, drawn as {result['balls_drawn']}")
    print(f"whole frame: median {result['frame_ms']:.2f} ms ({1e3 / result['frame_ms']:.1f} frames/s) "
          f"over {args.frames} frames")
    render_ms = result["feed_ms"] + result["draw_ms"]
    print(f"split (device synced between parts): physics {result['physics_ms']:.2f} ms, "
          f"render {render_ms:.2f} ms = {unit} into GL {result['feed_ms']:.2f} + draw {result['draw_ms']:.2f}, "
          f"frame {result['split_frame_ms']:.2f} ms (medians)")
    stages = ", ".join(f"{name} {ms:.2f}" for name, ms in result["stages"].items())
    print(f"scene stage timer (ms per frame, median): {stages}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
