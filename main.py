"""kernel-lab command line: no arguments opens the viewer; subcommands run scenes headless.

``view``, ``run`` and ``bench`` work for every scene in ``sim.registry`` with that scene's
defaults; ``template`` and ``check`` serve your own kernel; the course-compatible commands come from
the scene packages. The arguments are ``sim.arguments``'s (``python main.py --help`` shows examples);
the commands are here.
"""

from __future__ import annotations

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
    from sim import cli, interrupts, stdout
    from sim.arguments import DEFAULT_FPS, DEFAULT_SCENE, DEFAULT_SIZE, build_parser, placed, user_bench
    from sim.backend import BackendUnavailable
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

        kernel = source.load(args.kernel_file, spec(args.scene), args.stage)  # UsageError: one line, exit 2
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
    scene = make_scene(args, args.steps)  # without --preset, the scene's default_preset: the one view opens
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
        knob = f" {scene.knobs.variant} block {cli.block_text(scene.knobs.block)}" if scene.gpu_kernels_run() else ""
        label = f"[{i}/{len(configs)}] {scene.preset} n={scene.n:,} {scene.backend}{knob}"
        print(f"{label} ...", file=sys.stderr, flush=True)
        records.append(bench.run(scene, steps=args.steps, warmup=args.warmup))
        print(f"{label}: {records[-1]['step_ms']:.4f} ms/step (median stages), {records[-1]['item_steps_per_s']:.3g} "
              f"{s.words.one}-steps/s (over the wall time)", file=sys.stderr, flush=True)
        del scene
        bench.release_memory()
    report = bench.report(s.name, records)
    bench.publish(report, bench.table(report, load(s.scene).bench_type.lines), args.json, args.baseline)
    return 0


COMMANDS = {"view": cmd_view, "run": cmd_run, "bench": cmd_bench, "template": user_kernel.run_template,
            "check": user_kernel.run_check}


@ranks  # under mpiexec -n R: every rank runs the command, rank 0 prints (sim/mpi/launch.py)
def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    known = set(COMMANDS) | {c.name for c in course_commands()}
    if not argv or (argv[0] not in known and argv[0] not in ("-h", "--help")):
        argv = ["view", *argv]
    scene, argv = placed(argv)
    parser = build_parser(scene, kernel_file=user_bench(argv))
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
        with interrupts.stopping(together=world().size > 1), stdout.guarded():  # stdout closed or full: exit 1
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
