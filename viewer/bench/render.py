"""Time the viewer's frames: ``python -m viewer.bench.render [--scene NAME] [-n 10000] [--live]``.

Opens a real window (needs a display, e.g. Xvfb), loads the scene (default: the first of the
registry) with n items on the preset ``viewer.bench.frame`` times, lets it settle a few frames,
pauses (unless --live: physics keeps running in each frame), then times ``Viewer.tick()``
(physics when live + the view + panel + flip).
"""

from __future__ import annotations

import argparse
import sys
import time

from sim.registry import SCENES
from viewer.bench.frame import timed_preset
from viewer.window.app import Viewer
from viewer.window.display import display_problem


def measure(
    n: int, width: int, height: int, frames: int, live: bool = False, scene_name: str = next(iter(SCENES))
) -> tuple[float, float]:
    """(frames per second, median render ms) over ``frames`` frames."""
    spec = SCENES[scene_name]
    viewer = Viewer(spec.create(preset=timed_preset(spec), n=n), width, height, max_fps=None)
    try:
        for _ in range(3):
            viewer.tick()
        viewer.controller.paused = not live
        for _ in range(10):  # shaders compile on first use
            viewer.tick()
        render_ms = []
        start = time.perf_counter()
        for _ in range(frames):
            viewer.tick()
            render_ms.append(viewer.render_ms)
        elapsed = time.perf_counter() - start
    finally:
        viewer.close()
    render_ms.sort()
    return frames / elapsed, render_ms[len(render_ms) // 2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scene", choices=tuple(SCENES), default=next(iter(SCENES)), help=f"default {next(iter(SCENES))}"
    )
    parser.add_argument("-n", type=int, default=10_000, help="item count (default 10000)")
    parser.add_argument("--size", default="1280x800", help="window size WxH (default 1280x800)")
    parser.add_argument("--frames", type=int, default=100, help="timed frames (default 100)")
    parser.add_argument("--live", action="store_true", help="keep the physics running (a displayed frame each tick)")
    args = parser.parse_args(argv)
    problem = display_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    width, height = (int(v) for v in args.size.lower().split("x"))
    fps, median_ms = measure(args.n, width, height, args.frames, args.live, args.scene)
    mode = "physics running" if args.live else "physics paused"
    print(
        f"{args.n} {SCENES[args.scene].words.unit}, {width}x{height}, panel on, {mode}: {fps:.1f} frames/s, "
        f"median render {median_ms:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
