"""kernel-lab command line: no arguments opens the viewer; subcommands run scenes headless.

  python main.py                                  the viewer (default scene: balls dripping)
  python main.py view balls --preset t            the viewer on a chosen scene and preset
  python main.py run balls --preset T --steps 600 --headless --screenshot out.png
  python main.py bench balls --preset t --steps 600 --json results.json
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from sim.backend import BackendUnavailable
from sim.cli import EXIT_USAGE, UsageError, positive_int
from sim.writer import OutputError

positive_ints = __import__("sim.cli", fromlist=["counts"]).counts


def add_scene_args(p: argparse.ArgumentParser, default_preset: str, many: bool = False) -> None:
    from sim import SCENES

    some = "comma-separated " if many else ""
    p.add_argument("scene", nargs="?", default="balls", help=f"scene: {', '.join(SCENES)} (default balls)")
    p.add_argument("--preset", default=default_preset,
                   help=f"{some}initial state; balls: drip (default for the viewer), T (1715-ball lattice), "
                        "t (8575), block (a lattice of -n balls; the trough widens past 27k balls)")
    counts = ("-n", "--count", "--sizes") if many else ("-n", "--count")
    p.add_argument(*counts, dest="count", type=positive_ints if many else positive_int,
                   help=f"{some}ball count for presets that take one (drip, block); particle count")
    p.add_argument("--backend", default="cpu", choices=("cpu", "gpu", "auto"),
                   help="physics backend (default cpu; auto = GPU when available)")
    p.add_argument("--variant", default="global",
                   help=f"{some}proximity variant: global, texture, shared (z-sweep kernels; on the CPU the "
                        "z-sweep twin) or grid" + (", or all" if many else "") + " (default global)")
    p.add_argument("--block", default="128", type=positive_ints if many else positive_int,
                   help=f"{some}CUDA block size of the proximity kernel, 32..1024 (default 128)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the initial state (default 0)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kernel-lab",
        description="Interactive viewer and headless runner for classic GPU simulation kernels. "
                    "With no subcommand, opens the viewer.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Examples:\n" + "\n".join(__doc__.splitlines()[2:6]))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    view = sub.add_parser("view", help="open the viewer window (the default command)")
    add_scene_args(view, "drip")
    view.add_argument("--size", default="1280x800", help="window size WxH (default 1280x800)")

    run = sub.add_parser("run", help="run a scene for a number of steps, in the viewer or headless")
    add_scene_args(run, "T")
    run.add_argument("--steps", type=positive_int, default=600,
                     help="physics steps (dt = 1/360 s; default 600)")
    run.add_argument("--headless", action="store_true", help="no window: simulate, print a summary")
    run.add_argument("--screenshot", metavar="PNG", help="save a picture of the final state (works headless)")
    run.add_argument("--size", default="1280x800", help="window or picture size WxH (default 1280x800)")

    for command in course_commands():
        parser_ = sub.add_parser(command.name, help=command.help, description=command.description or command.help)
        command.add_arguments(parser_)

    bench = sub.add_parser("bench", help="time a scene's stages; print a table, optionally JSON")
    add_scene_args(bench, "t", many=True)
    bench.add_argument("--precision", default="fp64", choices=("fp64", "fp32"), help="particles: float precision")
    bench.add_argument("--kernel", default="all", help="sdh: kernel(s), comma-separated, or all (default)")
    bench.add_argument("--width", type=float, default=500.0, help="sdh: bucket width (default 500)")
    bench.add_argument("--steps", type=positive_int, default=600, help="timed physics steps (default 600)")
    bench.add_argument("--warmup", type=int, default=12, help="untimed steps first (compilation; default 12)")
    bench.add_argument("--json", metavar="FILE", help="write the results as JSON to FILE, or - for stdout")
    return parser


def parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise UsageError(f"--size must look like 1280x800, got {text!r}") from None
    if not (16 <= w <= 16384 and 16 <= h <= 16384):
        raise UsageError(f"--size out of range: {text}")
    return w, h


def check_writable(path: str, what: str) -> None:
    """Fail before any work if ``path`` cannot be written (nothing is half-written later)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"{what} {path!r} is a directory")
    if not os.path.isdir(folder):
        raise UsageError(f"{what} {path!r}: folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError(f"{what} {path!r} is not writable")


def make_scene(args, preset=None, n=None, variant=None, block=None):
    from sim import create_scene

    try:
        return create_scene(args.scene, preset=preset or args.preset, backend=args.backend,
                            n=n if n is not None else args.count, seed=args.seed,
                            variant=variant or args.variant, block=block or args.block)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except MemoryError as exc:  # a sound request too large for this machine
        raise BackendUnavailable(str(exc)) from None


def cmd_view(args) -> int:
    from viewer.app import display_problem

    problem = display_problem()
    if problem:
        print(f"kernel-lab: cannot open the viewer window: {problem}\n"
              "Run headless instead, e.g.:\n"
              "  python main.py run balls --preset T --steps 600 --headless --screenshot balls.png",
              file=sys.stderr)
        return 1
    width, height = parse_size(args.size)
    scene = make_scene(args)
    from viewer.app import main as viewer_main

    return viewer_main(scene, width=width, height=height)


def cmd_run(args) -> int:
    import time

    width, height = parse_size(args.size)
    if args.screenshot:
        check_writable(args.screenshot, "screenshot")
    if not args.headless:
        from viewer.app import display_problem

        problem = display_problem()
        if problem:
            raise UsageError(f"cannot open a window ({problem}); add --headless")
    scene = make_scene(args)
    if not args.headless:
        from viewer.app import main as viewer_main

        return viewer_main(scene, width=width, height=height, steps=args.steps, screenshot=args.screenshot)
    start = time.perf_counter()
    for _ in range(args.steps):
        scene.single_step()
    wall = time.perf_counter() - start
    stats = scene.stats()
    print(f"{scene.name} preset {scene.preset} on {scene.backend}: {args.steps} steps "
          f"({stats['sim_time']:.3f} s simulated) in {wall:.2f} s, {args.steps / wall:.0f} steps/s")
    print(f"balls {stats['n']}, last proximity pass: {stats['tests']} tests, {stats['pairs']} pairs")
    if args.screenshot:
        from viewer.headless import render_png

        render_png(scene, args.screenshot, width=width, height=height)
        print(f"screenshot: {args.screenshot}")
    return 0


def cmd_bench(args) -> int:
    from sim import bench

    if args.json and args.json != "-":
        check_writable(args.json, "JSON file")
    if args.warmup < 0:
        raise UsageError("--warmup must be >= 0")
    from sim import SCENES

    if args.scene == "sdh":
        return bench_sdh(args)
    if args.scene not in SCENES:
        raise UsageError(f"unknown scene {args.scene!r} (choose from {', '.join(SCENES)})")
    kind = SCENES[args.scene]
    if args.scene == "particles":
        return bench_particles(args, kind)
    presets = args.preset.split(",")
    variants = list(kind.variants) if args.variant == "all" else args.variant.split(",")
    for name, known, what in ((presets, kind.presets, "preset"), (variants, kind.variants, "variant")):
        unknown = [v for v in name if v not in known]
        if unknown:
            raise UsageError(f"unknown {what} {unknown[0]!r} (choose from {', '.join(known)})")
    configs = [(p, n, v, b) for p in presets for n in (args.count or [None]) for v in variants for b in args.block]
    records = []
    for i, (preset, n, variant, block) in enumerate(configs, 1):
        scene = make_scene(args, preset, n, variant, block)
        label = f"[{i}/{len(configs)}] {preset} n={scene.n:,} {scene.backend} {variant} block {block}"
        print(f"{label} ...", file=sys.stderr, flush=True)
        records.append(bench.run_balls(scene, steps=args.steps, warmup=args.warmup))
        print(f"{label}: {records[-1]['step_ms']:.4f} ms/step, {records[-1]['ball_steps_per_s']:.3g} ball-steps/s",
              file=sys.stderr, flush=True)
        del scene
        bench.release_memory()
    report = bench.report(kind.name, records, backend=args.backend)
    return publish(args, report, bench.table(report))


def publish(args, report: dict, table: str) -> int:
    """The table on stdout (stderr when the JSON goes to stdout), and the JSON where --json says."""
    from sim import bench

    print(table, file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json:
        bench.write_json(report, args.json)
    return 0


def bench_sdh(args) -> int:
    from sim import bench
    from sim.backend import BackendUnavailable, gpu_status
    from sim.sdh import data

    if not gpu_status().available:
        raise BackendUnavailable(f"the sdh benchmark times GPU kernels: {gpu_status().reason}")
    from sim.sdh import gpu

    kernels = list(gpu.KERNELS) if args.kernel == "all" else args.kernel.split(",")
    unknown = [k for k in kernels if k not in gpu.KERNELS]
    if unknown:
        raise UsageError(f"unknown kernel {unknown[0]!r} (choose from {', '.join(gpu.KERNELS)})")
    if not args.width > 0:
        raise UsageError(f"bucket width must be positive, got {args.width}")
    buckets = data.bucket_count(args.width)
    records = []
    for n in args.count or [100_000]:
        points = data.atoms(n)
        reference = None
        for kernel in kernels:
            for block in args.block:
                try:
                    counts, ms = gpu.histogram(points, args.width, buckets, kernel, block, repeats=3)
                except gpu.KernelError as exc:
                    raise UsageError(str(exc)) from None
                reference = counts if reference is None else reference
                if not np.array_equal(counts, reference) or counts.sum() != data.pair_count(n):
                    print(f"kernel {kernel} block {block} disagrees at n={n}", file=sys.stderr)
                    return 1
                pairs = data.pair_count(n)
                records.append({"n": n, "w": args.width, "backend": "gpu", "kernel": kernel, "block": block,
                                "kernel_ms": ms,
                                "pairs_per_s": pairs / (ms * 1e-3)})
                print(f"n={n:,} {kernel} block {block}: {ms:.3f} ms, {pairs / (ms * 1e-3):.4g} pairs/s",
                      file=sys.stderr, flush=True)
        del points
        bench.release_memory()
    report = bench.report("sdh", records, backend="gpu")
    return publish(args, report, bench.sdh_table(report))


def bench_particles(args, kind) -> int:
    from sim import bench, create_scene

    variants = list(kind.variants) if args.variant == "all" else args.variant.split(",")
    if args.variant == "global":  # the balls default: particles' is plain
        variants = ["plain"]
    unknown = [v for v in variants if v not in kind.variants]
    if unknown:
        raise UsageError(f"unknown variant {unknown[0]!r} (choose from {', '.join(kind.variants)})")
    configs = [(n, v, b) for n in (args.count or [100_000]) for v in variants for b in args.block]
    records = []
    for i, (n, variant, block) in enumerate(configs, 1):
        try:
            scene = create_scene("particles", n=n, seed=args.seed, backend=args.backend, variant=variant,
                                 block=block, precision=args.precision, stats=False)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        label = f"[{i}/{len(configs)}] n={n:,} " + (f"gpu {variant} block {block} {args.precision}"
                                                       if scene.backend == "gpu" else "cpu binned fp64")
        print(f"{label} ...", file=sys.stderr, flush=True)
        records.append(bench.run_particles(scene, steps=args.steps, warmup=args.warmup))
        print(f"{label}: {records[-1]['total_s']:.3f} s", file=sys.stderr, flush=True)
        del scene
        bench.release_memory()
    report = bench.report("particles", records, backend=args.backend)
    return publish(args, report, bench.particles_table(report))


COMMANDS = {"view": cmd_view, "run": cmd_run, "bench": cmd_bench}


def course_commands():
    from sim.particles.cli import COMMANDS as particles
    from sim.sdh.cli import COMMANDS as sdh

    return (*particles, *sdh)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["view", *(argv if argv is not None else sys.argv[1:])])
    commands = {**COMMANDS, **{c.name: c.run for c in course_commands()}}
    try:
        return commands[args.command](args)
    except UsageError as exc:
        print(f"kernel-lab {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OutputError as exc:  # the run happened, its output could not be written
        print(f"kernel-lab {args.command}: {exc}", file=sys.stderr)
        return 1
    except BackendUnavailable as exc:  # a sound request this machine cannot serve
        print(f"kernel-lab {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
