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

Each pass is timed by ``sim.gpu.measure`` on the host clock (a frame ends with the GL finish):
``--frames`` frames, no more (the scene moves on while it is timed: a run that took more frames would time a
later state, and the balls' steps cost more once they splash); median ± error (frames).

This module holds the command (its options, the figures it prints, the JSON report) and the preset and
variant timed by default; the passes that time the frames are in ``viewer.bench.frame_passes``.
"""

from __future__ import annotations

import argparse
import sys

from sim.gpu import measure as harness
from sim.registry import SCENES
from viewer.bench.frame_passes import RUN, measure
from viewer.bench.panel_layer import CHOICES, sections


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
        help="timed frames per pass (default 100; every run times the same stretch of the scene)",
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
        "--json", metavar="FILE", help="also write the figures as JSON to FILE (sim.cmdline.bench_report's report)"
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

    from viewer.window.display import display_problem

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
    """The figures as sim.cmdline.bench_report's report: one record, the scene's knobs (``n``: the count at the
    start, the configuration timed; ``n_end`` the count at the end) and every number measured."""
    import json

    from sim.cmdline import bench_report
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
    write_text(path, json.dumps(bench_report.report("frame", [record]), indent=2) + "\n", "JSON file")


if __name__ == "__main__":
    sys.exit(main())
