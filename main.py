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

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input found after argparse (paths, presets): exit 2 with the message."""


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def positive_ints(text: str) -> list[int]:
    return [positive_int(v) for v in text.split(",")]


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

    particles = sub.add_parser(
        "particles", help="CS 267 particles, course-compatible: prints n, time, absmin, absavg; -o writes frames",
        description="Runs the CS 267 particle simulation like the course's starters: prints "
                    "'n = N, simulation time = T seconds, absmin = A, absavg = B' and the course's warnings.")
    particles.add_argument("-n", type=positive_int, default=1000, help="number of particles (default 1000)")
    particles.add_argument("-s", "--seed", type=int, default=1, help="random seed (default 1)")
    particles.add_argument("-o", "--output", metavar="FILE", help="write the course's trajectory file")
    particles.add_argument("--steps", type=positive_int, default=1000, help="steps (default 1000)")
    particles.add_argument("--backend", default="cpu", choices=("cpu", "gpu", "auto"), help="default cpu")
    particles.add_argument("--init", default="2020", help="initial state: 2020 (mt19937) or legacy (drand48)")
    particles.add_argument("--variant", default="plain", help="GPU variant: plain, tiled or blockscan")
    particles.add_argument("--precision", default="fp64", choices=("fp64", "fp32"), help="GPU precision")

    check = sub.add_parser("particles-check", help="the course's checker: compare two -o files",
                           description="Mean distance between two trajectory files per frame; passes when the "
                                       "mean over the first 50 frames < 3e-7 and over all frames < 0.025.")
    check.add_argument("a", metavar="A.out")
    check.add_argument("b", metavar="B.out")

    sdh = sub.add_parser("sdh", help="spatial distance histogram, course-compatible: ./SDH atoms width [block]",
                         description="The histogram of all N(N-1)/2 distances of N atoms from glibc rand() after "
                                     "srand(1) in a cube of side 23000, printed like the course's program.")
    sdh.add_argument("atoms", type=int, metavar="N", help="number of atoms (>= 2)")
    sdh.add_argument("width", type=float, metavar="W", help="bucket width (> 0)")
    sdh.add_argument("block", type=int, nargs="?", default=256, metavar="BLOCK",
                     help="CUDA block size, 1..1024 (multiple of 32 for the fast kernel; default 256)")
    sdh.add_argument("--backend", default="cpu", choices=("cpu", "gpu"), help="default cpu")
    sdh.add_argument("--kernel", default="fast",
                     help="GPU kernel: naive, naive-priv, tiled, tiled-priv, fast (default) or all")
    sdh.add_argument("--compare", action="store_true",
                     help="GPU: also compute on the CPU, print the difference histogram, exit 1 if any bucket differs")

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


def cmd_particles(args) -> int:
    import time

    from sim import create_scene
    from sim.particles.output import TrajectoryWriter
    from sim.particles.world import SAVE_EVERY

    if args.output:
        check_writable(args.output, "output file")
    try:
        scene = create_scene("particles", preset=args.init, backend=args.backend, n=args.n, seed=args.seed,
                             variant=args.variant, precision=args.precision)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    stream = None
    if args.output:  # written to a temporary file, renamed when complete: nothing half-written
        stream = open(args.output + ".partial", "w")
        writer = TrajectoryWriter(stream, scene.n, scene.size)
    try:
        start = time.perf_counter()
        for step in range(args.steps):
            scene.step()
            if stream and step % SAVE_EVERY == 0:
                writer.frame(*scene.host_positions())
        scene.finish()
        seconds = time.perf_counter() - start
    except BaseException:
        if stream:
            stream.close()
            os.unlink(args.output + ".partial")
        raise
    if stream:
        stream.close()
        os.replace(args.output + ".partial", args.output)
    stats = scene.stats_per_step
    print(f"n = {scene.n}, simulation time = {seconds:g} seconds, absmin = {stats.absmin:f}, "
          f"absavg = {stats.absavg:f}")
    for warning in stats.warnings():
        print(warning)
    return 0


def cmd_particles_check(args) -> int:
    from sim.particles.output import FormatError, check

    try:
        early, overall, passed = check(args.a, args.b)
    except FormatError as exc:
        raise UsageError(str(exc)) from None
    print(f"mean distance over the first 50 frames: {early:g} (must be < 3e-07)")
    print(f"mean distance over all frames: {overall:g} (must be < 0.025)")
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


def cmd_sdh(args) -> int:
    import time

    from sim.sdh import cpu, data
    from sim.sdh.output import format_histogram

    if args.atoms < 2:
        raise UsageError(f"need at least 2 atoms, got {args.atoms}")
    if not (args.width > 0 and args.width < float("inf")):
        raise UsageError(f"bucket width must be positive, got {args.width}")
    if not 1 <= args.block <= 1024:
        raise UsageError(f"block size must be 1..1024, got {args.block}")
    buckets = data.bucket_count(args.width)
    points = data.atoms(args.atoms)
    if args.backend == "cpu":
        start = time.perf_counter()
        counts = cpu.histogram(points, args.width, buckets, progress=sys.stderr.isatty() or args.atoms >= 100_000)
        seconds = time.perf_counter() - start
        print(f"Running time for CPU version: {int(seconds)}.{int(seconds % 1 * 1e6):06d}")
        print(format_histogram(counts), end="")
        return 0
    from sim.backend import BackendUnavailable, gpu_status

    if not gpu_status().available:
        raise BackendUnavailable(f"GPU backend unavailable: {gpu_status().reason}")
    from sim.sdh import gpu

    kernels = list(gpu.KERNELS) if args.kernel == "all" else [args.kernel]
    results = {}
    try:
        for kernel in kernels:
            gpu.launch_shape(kernel, args.atoms, args.block, buckets)  # every kernel checked before any runs
        for kernel in kernels:
            counts, ms = gpu.histogram(points, args.width, buckets, kernel, args.block)
            results[kernel] = counts
            label = "" if len(kernels) == 1 else f" ({kernel})"
            print(f"Running time for GPU version{label}: {ms:0.5f} ms")
    except gpu.KernelError as exc:
        raise UsageError(str(exc)) from None
    counts = results[kernels[0]]
    print(format_histogram(counts), end="")
    status = 0
    for kernel, other in results.items():
        if not np.array_equal(other, counts):
            print(f"kernel {kernel} disagrees with {kernels[0]}", file=sys.stderr)
            status = 1
    if args.compare:
        reference = cpu.histogram(points, args.width, buckets, progress=args.atoms >= 100_000)
        difference = counts - reference
        print("\nDifference histogram (GPU - CPU):", end="")
        print(format_histogram(difference), end="")
        if difference.any():
            print(f"{int(np.count_nonzero(difference))} buckets differ", file=sys.stderr)
            status = 1
    return status


COMMANDS = {"sdh": cmd_sdh, "view": cmd_view, "run": cmd_run, "bench": cmd_bench, "particles": cmd_particles,
            "particles-check": cmd_particles_check}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["view", *(argv if argv is not None else sys.argv[1:])])
    try:
        return COMMANDS[args.command](args)
    except UsageError as exc:
        print(f"kernel-lab {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BackendUnavailable as exc:  # a sound request this machine cannot serve
        print(f"kernel-lab {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
