"""kernel-lab command line: no arguments opens the viewer; subcommands run scenes headless.

  python main.py                                  the viewer (default scene: balls dripping)
  python main.py view particles                   the viewer on a chosen scene (and --preset)
  python main.py run balls --preset T --steps 600 --headless --screenshot out.png
  python main.py bench balls --preset t --steps 600 --json results.json

``view``, ``run`` and ``bench`` work for every scene in ``sim.registry`` with that scene's
defaults; the course-compatible commands come from the scene packages.
"""

from __future__ import annotations

import argparse
import os
import sys


def _typed(path: str, command: bool = False) -> str:
    """``path`` as the user would type it here: relative below the current folder, else absolute."""
    path = os.path.abspath(path)
    short = os.path.relpath(path)
    if short.startswith(os.pardir):
        return path
    return short if os.sep in short or not command else os.path.join(os.curdir, short)


def this_command() -> str:
    """How to start kernel-lab again as it was started: the interpreter running it (outside the
    project's environment, a bare ``python`` may lack the dependencies) and main.py."""
    if os.path.basename(sys.argv[0]) == "kernel-lab":
        return "kernel-lab"
    return f"{_typed(sys.executable, command=True)} {_typed(__file__)}"


def _missing_dependency(name: str) -> str:
    """One line for a Python without the dependencies: how to set them up, or the Python that has them."""
    here = os.path.dirname(os.path.abspath(__file__))
    venv = os.path.join(here, ".venv", "bin", "python")
    make = "make" if os.path.abspath(os.curdir) == here else f"make -C {_typed(here)}"
    other = (f", or start it with the project's Python: {_typed(venv, command=True)} {_typed(__file__)}"
             if os.path.exists(venv) and os.path.abspath(sys.executable) != venv else "")
    return f"kernel-lab: this Python ({sys.executable}) has no {name}: set up the project with '{make} install'{other}"


try:
    from sim import cli, interrupts
    from sim.backend import BackendUnavailable
    from sim.baseline import argument as baseline_argument
    from sim.cli import EXIT_INTERRUPTED, EXIT_USAGE, UsageError
    from sim.contract import load
    from sim.mpi import ranks, world
    from sim.registry import SCENES, course_commands, spec
    from sim.userkernel import commands as user_kernel
    from sim.writer import OutputError
except KeyboardInterrupt:  # Ctrl-C while the modules load
    print("kernel-lab: interrupted while starting", file=sys.stderr)
    sys.exit(130)
except ModuleNotFoundError as exc:  # a dependency, not one of kernel-lab's own modules
    if not exc.name or exc.name.partition(".")[0] in ("sim", "viewer"):
        raise
    print(_missing_dependency(exc.name.partition(".")[0]), file=sys.stderr)
    sys.exit(1)

DEFAULT_SCENE = "balls"
DEFAULT_SIZE = (1280, 800)  # window, picture and video
DEFAULT_FPS = 30.0  # a headless recording's frames per second
COMMON = ("view", "run", "bench")


def user_bench(argv: list[str]) -> bool:
    """``bench SCENE --kernel-file FILE``: the user's kernel timed beside the built-in variants."""
    return bool(argv) and argv[0] == "bench" and any(t == "--kernel-file" or t.startswith("--kernel-file=")
                                                     for t in argv)


def chosen_scene(argv: list[str]) -> str:
    """The scene view/run/bench names, wherever it stands among the options: the one whose own parser
    (with that scene's options, given before or after its name) reads that name as the scene."""
    if not argv or argv[0] not in COMMON:
        return DEFAULT_SCENE
    probe = [token for token in argv if token not in ("-h", "--help")]  # help names the scene's options too
    for name in SCENES:
        try:
            found, _ = build_parser(name, cli.ProbeParser, user_bench(argv)).parse_known_args(probe)
        except cli.ProbeParser.Mismatch:
            continue
        if (found.scene or DEFAULT_SCENE) == name:
            return name
    return DEFAULT_SCENE


def add_scene_args(p: argparse.ArgumentParser, scene: str, many: bool = False) -> None:
    """The arguments every scene takes, plus the chosen scene's own options."""
    s = spec(scene)
    some = "comma-separated " if many else ""
    p.add_argument("scene", nargs="?", default=DEFAULT_SCENE,
                   help=f"scene: {', '.join(SCENES)} (default {DEFAULT_SCENE})")
    p.add_argument("--preset", type=cli.items if many else str,
                   help=f"{some}initial state of {scene}: " + "; ".join(f"{x.name} ({x.description})"
                                                                          for x in s.presets))
    p.add_argument("-n", "--count", *(("--sizes",) if many else ()), dest="count",
                   type=cli.counts if many else cli.positive_int,
                   help=f"{some}number of {s.words.unit} for presets that take one (e.g. 10k, 1e6)")
    p.add_argument("--backend", default="cpu", choices=("cpu", "gpu", "auto"),
                   help="physics backend (default cpu; auto = GPU when available)")
    if s.gpu:
        p.add_argument("--variant", type=cli.items if many else str,
                       help=f"{some}{s.words.variant}: {', '.join(s.gpu.variants)}" + (", or all" if many else "")
                            + f" (default {s.gpu.default_variant})")
        p.add_argument("--block", type=cli.blocks if many else cli.block,
                       help=f"{some}CUDA block: {', '.join(map(cli.block_text, s.gpu.blocks))} "
                            f"(default {cli.block_text(s.gpu.default_block)})")
    for option in s.options:
        p.add_argument(f"--{option.name}", type=cli.items if many else str,
                       help=f"{some}{option.help}: {', '.join(option.choices)} (default {option.default})")
    p.add_argument("--seed", type=cli.seed, help="random seed of the initial state, 0..2^32-1")


def build_parser(scene: str = DEFAULT_SCENE, parser_class=argparse.ArgumentParser,
                 kernel_file: bool = False) -> argparse.ArgumentParser:
    parser = parser_class(
        prog="kernel-lab",
        description="Interactive viewer and headless runner for classic GPU kernels. Scenes: "
                    + "; ".join(f"{s.name} ({s.title})" for s in SCENES.values()) + ". With no subcommand, "
                    "opens the viewer.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Examples:\n" + "\n".join(__doc__.splitlines()[2:6]))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    view = sub.add_parser("view", help="open the viewer window (the default command)")
    add_scene_args(view, scene)
    view.add_argument("--size", type=cli.window_size, help="window size WxH (default 1280x800, or the saved size)")
    view.add_argument("--baseline", metavar="OLD.json", type=baseline_argument,
                      help="a benchmark JSON (bench ... --json) whose stage times the panel draws beside the live ones")
    view.add_argument("--no-settings", action="store_true",
                      help="start clean: neither read nor save the settings (scene, sliders, camera, ...)")
    view.add_argument("--kernel-file", metavar="FILE",
                      help="your own CUDA kernel for one of the scene's stages: a variant named after the file (q), "
                           "compiled again on every save, compared with the CPU twin under verification (v)")
    view.add_argument("--stage", help="with --kernel-file: the stage it replaces (default: the scene's first)")
    view.set_defaults(scene=None, backend=None)  # unset: the saved settings or the defaults decide

    run = sub.add_parser("run", help="run a scene for a number of steps, in the viewer or headless")
    add_scene_args(run, scene)
    steps = spec(scene).run_steps
    run.add_argument("--steps", type=cli.positive_int, default=steps,
                     help=f"steps, each a {spec(scene).words.step} (default {steps})")
    run.add_argument("--headless", action="store_true", help="no window: simulate, print a summary")
    run.add_argument("--screenshot", metavar="FILE", help="save a picture of the final state (works headless): "
                                                           ".png, .jpg or .webp")
    run.add_argument("--size", type=cli.window_size,
                     help="window, picture or video size WxH (default 1280x800; even for --record; headless: "
                          "with --screenshot or --record only)")
    run.add_argument("--record", metavar="MP4", help="headless: record the run to an MP4 (H.264), a video frame "
                                                     "every --record-every steps")
    run.add_argument("--record-every", metavar="K", type=cli.positive_int,
                     help="with --record: physics steps per video frame (default: the scene's steps per "
                          "displayed frame)")
    run.add_argument("--fps", type=_frames_per_second,
                     help=f"with --record: video frames per second (default {DEFAULT_FPS:g})")
    add_quiet(run)

    bench = sub.add_parser("bench", help="time a scene; print a table, optionally JSON",
                           epilog="bench SCENE --kernel-file FILE [--stage S]: your own kernel of a stage timed "
                                  "beside the built-in variants (bench SCENE --kernel-file FILE --help)")
    own = spec(scene).bench
    if kernel_file:
        user_kernel.add_bench_arguments(bench)
    elif own:
        bench.add_argument("scene", nargs="?", default=DEFAULT_SCENE, help=f"scene: {', '.join(SCENES)}")
        cli.load_command(own).add_arguments(bench)
    else:
        add_scene_args(bench, scene, many=True)
        bench.add_argument("--steps", type=cli.positive_int, default=600,
                           help="timed physics steps, at least (default 600; more frames until the median is known "
                                "to 1%% or the time budget ends)")
        bench.add_argument("--warmup", type=cli.non_negative_int, default=12,
                           help="untimed steps first (compilation; default 12)")
    bench.add_argument("--json", metavar="FILE", help="write the results as JSON to FILE, or - for stdout")
    bench.add_argument("--baseline", metavar="OLD.json", type=baseline_argument,
                       help="also print each figure beside the same configuration's in this earlier JSON: "
                            "faster, slower or the same within the error")
    add_quiet(bench)

    template = sub.add_parser("template", help="write a working, commented kernel of a stage to start from",
                              description="Stages your own kernel can replace: " + user_kernel.stages_text())
    user_kernel.add_template_arguments(template)
    check = sub.add_parser("check", help="grade your own kernel of a stage against the CPU twin: exit 0 correct, "
                                         "1 wrong, 2 bad input or a compile error, 3 no GPU here")
    user_kernel.add_check_arguments(check)
    add_quiet(check)

    for command in course_commands():
        course = sub.add_parser(command.name, help=command.help, description=command.description or command.help)
        command.add_arguments(course)
        add_quiet(course)
    return parser


def add_quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress bar")


# --- view and run ---------------------------------------------------------------------------------
def scene_kwargs(args, s) -> dict:
    """Keyword arguments for the scene from the common options; options that do not apply are refused."""
    kwargs = {"backend": args.backend}
    for name in ("preset", "seed"):
        if getattr(args, name, None) is not None:
            kwargs[name] = getattr(args, name)
    if args.count is not None:
        kwargs["n"] = args.count
    for name in ("variant", "block"):
        if getattr(args, name, None) is not None:
            kwargs[name] = getattr(args, name)
    for option in s.options:
        value = getattr(args, option.name)
        if value is not None:
            kwargs[option.name] = value
    return kwargs


def refuse_unused(args, s, scene) -> None:
    """GPU-only options given for a scene whose GPU kernels will not run: refused, not ignored."""
    if scene.gpu_kernels_run():
        return
    hint = s.gpu.kernels_run_hint if s.gpu else ""
    unused = [f"--{o.name}" for o in s.options if o.gpu_only and getattr(args, o.name, None) is not None]
    if s.gpu and getattr(args, "block", None) is not None:
        unused.append("--block")
    if s.gpu and not s.gpu.cpu_variants and getattr(args, "variant", None) is not None:
        unused.append("--variant")
    if unused:
        verb = "applies" if len(unused) == 1 else "apply"
        raise UsageError(f"{' and '.join(unused)} {verb} to the {s.name} scene's GPU kernels, which do not run on the "
                         f"{scene.backend.upper()} backend here ({hint})")


def check_resources(args, s, steps: int = 0) -> None:
    """Refuse (exit 2, with the estimate) a scene that cannot fit this machine, or ``steps`` of it that
    could not finish, before building it."""
    from sim import resources
    from sim.backend import gpu_status

    preset = s.preset(args.preset or s.default_preset) if (args.preset or s.default_preset) else None
    count = args.count or (preset.count if preset else None)
    gpu = args.backend == "gpu" or (args.backend == "auto" and gpu_status().available)
    resources.check(resources.scene_estimate(s, count, gpu, steps, args.preset or s.default_preset))


def make_scene(args, steps: int = 0):
    """The scene of ``args``; ``steps``: how many it will run (refused when they could not finish)."""
    s = spec(args.scene)
    try:
        check_resources(args, s, steps)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        scene = s.create(**scene_kwargs(args, s))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except MemoryError as exc:  # a sound request too large for this machine
        raise BackendUnavailable(str(exc)) from None
    refuse_unused(args, s, scene)
    return scene


def cmd_view(args) -> int:
    from viewer.window.app import display_problem

    if args.stage is not None and args.kernel_file is None:
        raise UsageError("--stage names the stage of --kernel-file: add --kernel-file FILE")
    if args.kernel_file is not None and args.backend is None:
        args.backend = "auto"  # a user's kernel runs where the scene's GPU kernels run

    problem = display_problem()
    if problem:
        scene = args.scene or DEFAULT_SCENE
        print(f"kernel-lab: cannot open the viewer window: {problem}\n"
              "Run headless instead, e.g.:\n"
              f"  {this_command()} run {scene} --steps 600 --headless --screenshot {scene}.png",
              file=sys.stderr)
        return 1
    from viewer.settings import Settings

    settings = None
    if not args.no_settings:
        settings = Settings.load()
        if settings.problem:
            print(f"kernel-lab: {settings.problem}", file=sys.stderr)
        settings.fill_args(args, SCENES)
    args.scene, args.backend = args.scene or DEFAULT_SCENE, args.backend or "cpu"
    args.size = args.size or DEFAULT_SIZE
    for option in spec(args.scene).options:  # the parser knew another scene's options
        setattr(args, option.name, getattr(args, option.name, None))
    kernel = None
    if args.kernel_file is not None:  # read now: a bad file or stage stops before the window opens
        from sim.userkernel import source

        try:
            kernel = source.load(args.kernel_file, spec(args.scene), args.stage)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    try:
        scene = make_scene(args)
    except UsageError as exc:  # a saved count that cannot run here: the preset's own count instead
        notice = settings.forget_count(args, exc) if settings is not None else ""
        if not notice:
            raise
        print(f"kernel-lab: {notice}", file=sys.stderr)
        scene = make_scene(args)
    from viewer.window.app import main as viewer_main

    return viewer_main(scene, *args.size, settings=settings, kernel=kernel, baseline=args.baseline)


def _frames_per_second(text: str) -> float:
    fps = cli.number(text, "frames per second")
    if not 1 <= fps <= 240:
        raise argparse.ArgumentTypeError(f"frames per second must be 1 to 240, got {text}")
    return fps


def refuse_outputless_options(args) -> None:
    """Options that shape a recording or a picture, given without one: refused, not ignored."""
    if args.record is None:
        given = [name for name, value in (("--fps", args.fps), ("--record-every", args.record_every))
                 if value is not None]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise UsageError(f"{' and '.join(given)} {verb} to a recording: add --record F.mp4, or leave "
                             f"{'it' if len(given) == 1 else 'them'} out")
    if args.headless and args.size is not None and args.screenshot is None and args.record is None:
        raise UsageError("--size sets the picture or video of a headless run: add --screenshot or --record, "
                         "or leave it out")


def cmd_run(args) -> int:
    from sim import progress

    refuse_outputless_options(args)
    args.size, args.fps = args.size or DEFAULT_SIZE, args.fps or DEFAULT_FPS
    if args.screenshot is not None:
        from viewer.image import check_image_target

        check_image_target(args.screenshot, "screenshot")
    if args.record is not None:
        if not args.headless:
            raise UsageError("--record records a headless run (add --headless); in the viewer window press R")
        from viewer.record.video import check_video_target

        check_video_target(args.record, args.size)
    if not args.headless:
        from viewer.window.app import display_problem

        problem = display_problem()
        if problem:
            raise UsageError(f"cannot open a window ({problem}); add --headless")
    if args.preset is None:
        args.preset = spec(args.scene).start_preset
    scene = make_scene(args, args.steps)
    if not args.headless:
        from viewer.window.app import main as viewer_main

        return viewer_main(scene, *args.size, steps=args.steps, screenshot=args.screenshot)
    recording = None
    if args.record is not None:
        from viewer.headless import HeadlessRecording

        every = args.record_every or scene.spec.steps_per_frame
        recording = HeadlessRecording(scene, args.record, args.size, every, args.fps)
    try:
        timing = progress.run_steps(scene, args.steps, recording.after_step if recording else None)
    except BaseException:
        if recording is not None:
            recording.abort()
        raise
    stats = scene.stats()
    print(timing.startup_line())
    timed = f" ({scene.sim_time:.3f} s simulated)" if scene.spec.dt else ""
    rate = (f"{timing.steps_per_s:.0f} steps/s over the {timing.timed_steps} after start-up"
            if timing.timed_steps else "no steps after start-up to time")
    print(f"{scene.spec.name} preset {scene.preset} on {scene.backend}: {timing.steps} steps{timed} in "
          f"{timing.startup_s + timing.run_s:.2f} s, {rate}")
    for stat in scene.spec.stats:
        print(stat.text(stats))
    if recording is not None:
        path = recording.stop()
        width, height = args.size
        frames = f"{recording.frames} frame{'s' if recording.frames != 1 else ''}"
        print(f"recording: {frames}, {width}x{height} at {args.fps:g} frames/s, one every "
              f"{cli.count_text(every)} steps ({timing.after_s:.2f} s drawing and encoding): {path}")
    if args.screenshot:
        from viewer.headless import render_image

        render_image(scene, args.screenshot, *args.size)
        print(f"screenshot: {args.screenshot}")
    return 0


# --- bench ---------------------------------------------------------------------------------------
def cmd_bench(args) -> int:
    from sim import bench
    from sim.writer import check_target

    if getattr(args, "kernel_file", None) is not None:
        return user_kernel.run_bench(args)
    if args.json not in (None, "-"):
        check_target(args.json, "JSON file")
    s = spec(args.scene)
    if world().size > 1:  # mpiexec -n R: the scene's strong and weak scaling over the ranks
        from sim.mpi import bench as scaling

        return scaling.run(args, s)
    if s.bench:
        return cli.load_command(s.bench).run(args)
    configs = bench.configurations(args, s)
    bench.check_resources(args, s, configs)
    records = []
    for i, config in enumerate(configs, 1):
        for name, value in config.items():
            setattr(args, name, value)
        scene = make_scene(args)
        knob = f" {scene.variant} block {cli.block_text(scene.block)}" if scene.gpu_kernels_run() else ""
        label = f"[{i}/{len(configs)}] {scene.preset} n={scene.n:,} {scene.backend}{knob}"
        print(f"{label} ...", file=sys.stderr, flush=True)
        records.append(bench.run(scene, steps=args.steps, warmup=args.warmup))
        print(f"{label}: {records[-1]['step_ms']:.4f} ms/step, {records[-1]['item_steps_per_s']:.3g} "
              f"{s.words.one}-steps/s", file=sys.stderr, flush=True)
        del scene
        bench.release_memory()
    report = bench.report(s.name, records)
    bench.publish(report, bench.table(report, load(s.scene).bench_lines), args.json, args.baseline)
    return 0


COMMANDS = {"view": cmd_view, "run": cmd_run, "bench": cmd_bench, "template": user_kernel.run_template,
            "check": user_kernel.run_check}


@ranks  # under mpiexec -n R: every rank runs the command, rank 0 prints (sim/mpi/launch.py)
def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    known = set(COMMANDS) | {c.name for c in course_commands()}
    if not argv or (argv[0] not in known and argv[0] not in ("-h", "--help")):
        argv = ["view", *argv]
    parser = build_parser(chosen_scene(argv), kernel_file=user_bench(argv))
    args = parser.parse_args(argv)
    if getattr(args, "scene", None) is not None and args.scene not in SCENES:
        print(f"kernel-lab {args.command}: error: unknown scene {args.scene!r} (choose from {', '.join(SCENES)})",
              file=sys.stderr)
        return EXIT_USAGE
    commands = {**COMMANDS, **{c.name: c.run for c in course_commands()}}
    from sim import progress
    from sim.mpi import links

    progress.set_quiet(getattr(args, "quiet", False))  # every command but view takes --quiet
    try:  # a signal stops a command cleanly: between steps, frames or chunks, never inside numba
        links.forced_transport()
        with interrupts.stopping(together=world().size > 1):
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
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
