"""kernel-lab command line: no arguments opens the viewer; subcommands run scenes headless.

``view``, ``run`` and ``bench`` work for every scene in ``sim.registry`` with that scene's
defaults; ``template`` and ``check`` serve your own kernel; the course-compatible commands come from
the scene packages. The arguments are ``sim.cmdline.arguments``'s (``python main.py --help`` shows examples);
the commands are here.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace


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
    other = (
        f", or start it with the project's Python: {_typed(venv, command=True)} {_typed(__file__)}"
        if os.path.exists(venv) and os.path.abspath(sys.executable) != venv
        else ""
    )
    return f"kernel-lab: this Python ({sys.executable}) has no {name}: set up the project with '{make} install'{other}"


try:
    from sim.cmdline import cli, interrupts, stdout
    from sim.cmdline.arguments import DEFAULT_SCENE, DEFAULT_SIZE, build_parser, placed, user_bench
    from sim.cmdline.cli import EXIT_INTERRUPTED, EXIT_USAGE, UsageError
    from sim.cmdline.from_args import request_of
    from sim.cmdline.requests import RunRequest, ViewRequest
    from sim.cmdline.scenes import make_scene
    from sim.cmdline.writer import OutputError
    from sim.gpu.backend import BackendUnavailable
    from sim.mpi import ranks, world
    from sim.registry import SCENES, course_commands, spec
    from sim.userkernel import commands as user_kernel
    from sim.userkernel.requests import KernelBenchRequest
except KeyboardInterrupt:  # Ctrl-C while the modules load
    print("kernel-lab: interrupted while starting", file=sys.stderr)
    sys.exit(130)
except ModuleNotFoundError as exc:  # a dependency, not one of kernel-lab's own modules
    if not exc.name or exc.name.partition(".")[0] in ("sim", "viewer"):
        raise
    print(_missing_dependency(exc.name.partition(".")[0]), file=sys.stderr)
    sys.exit(1)


# --- view and run ---------------------------------------------------------------------------------
def cmd_view(request: ViewRequest) -> int:
    from viewer.window.display import display_problem

    if request.stage is not None and request.kernel_file is None:
        raise UsageError("--stage names the stage of --kernel-file: add --kernel-file FILE")
    problem = display_problem()
    if problem:
        scene = request.scene.scene or DEFAULT_SCENE
        print(
            f"kernel-lab: cannot open the viewer window: {problem}\n"
            "Run headless instead, e.g.:\n"
            f"  {this_command()} run {scene} --steps 600 --headless --screenshot {scene}.png",
            file=sys.stderr,
        )
        return 1
    from viewer.settings import Settings

    settings = None
    if not request.no_settings:
        settings = Settings.load()
        if settings.problem:
            print(f"kernel-lab: {settings.problem}", file=sys.stderr)
        request = settings.filled(request, SCENES)
    chosen = replace(request.scene, scene=request.scene.scene or DEFAULT_SCENE, backend=request.scene.backend or "cpu")
    kernel = None
    if request.kernel_file is not None:  # read now: a bad file or stage stops before the window opens
        from sim.userkernel import source

        kernel = source.load(request.kernel_file, spec(chosen.scene), request.stage)  # UsageError: one line, exit 2
    try:
        scene = make_scene(chosen)
    except UsageError as exc:  # a saved count that cannot run here: the preset's own count instead
        notice = settings.forget_count(chosen, exc) if settings is not None else ""
        if not notice:
            raise
        print(f"kernel-lab: {notice}", file=sys.stderr)
        scene = make_scene(replace(chosen, count=None))
    from viewer.window.launch import main as viewer_main

    return viewer_main(
        scene, *(request.size or DEFAULT_SIZE), settings=settings, kernel=kernel, baseline=request.baseline
    )


def cmd_run(request: RunRequest) -> int:
    from sim.cmdline import progress

    if request.screenshot is not None:
        from viewer.image import check_image_target

        check_image_target(request.screenshot, "screenshot")
    if request.record is not None:
        if not request.headless:
            raise UsageError("--record records a headless run (add --headless); in the viewer window press R")
        from viewer.record.video import check_video_target

        check_video_target(request.record, request.size)
    if not request.headless:
        from viewer.window.display import display_problem

        problem = display_problem()
        if problem:
            raise UsageError(f"cannot open a window ({problem}); add --headless")
    scene = make_scene(request.scene, request.steps)  # without --preset, the scene's default_preset: view's
    if not request.headless:
        from viewer.window.launch import main as viewer_main

        return viewer_main(scene, *request.size, steps=request.steps, screenshot=request.screenshot)
    recording = None
    if request.record is not None:
        from viewer.headless import HeadlessRecording

        every = request.record_every or scene.spec.steps_per_frame
        recording = HeadlessRecording(scene, request.record, request.size, every, request.fps)
    try:
        timing = progress.run_steps(scene, request.steps, recording.after_step if recording else None)
    except BaseException:
        if recording is not None:
            recording.abort()
        raise
    stats = scene.stats()
    print(timing.startup_line())
    timed = f" ({scene.sim_time:.3f} s simulated)" if scene.spec.dt else ""
    rate = (
        f"{timing.steps_per_s:.0f} steps/s over the {timing.timed_steps} after start-up"
        if timing.timed_steps
        else "no steps after start-up to time"
    )
    print(
        f"{scene.spec.name} preset {scene.preset} on {scene.backend}: {timing.steps} steps{timed} in "
        f"{timing.startup_s + timing.run_s:.2f} s, {rate}"
    )
    for stat in scene.spec.stats:
        print(stat.text(stats))
    if recording is not None:
        path = recording.stop()
        width, height = request.size
        frames = f"{recording.frames} frame{'s' if recording.frames != 1 else ''}"
        print(
            f"recording: {frames}, {width}x{height} at {request.fps:g} frames/s, one every "
            f"{cli.count_text(every)} steps ({timing.after_s:.2f} s drawing and encoding): {path}"
        )
    if request.screenshot:
        from viewer.headless import render_image

        render_image(scene, request.screenshot, *request.size)
        print(f"screenshot: {request.screenshot}")
    return 0


# --- bench ---------------------------------------------------------------------------------------
def cmd_bench(request) -> int:
    """``bench``: your kernel (KernelBenchRequest) or the scene's benchmark (``SceneSpec.bench``: the timed frames
    unless it declares its own); over MPI ranks, the same benchmark's scaling runs."""
    from sim.cmdline.writer import check_target

    if isinstance(request, KernelBenchRequest):
        return user_kernel.run_bench(request)
    if request.json not in (None, "-"):
        check_target(request.json, "JSON file")
    s = spec(request.scene)
    if world().size > 1:  # mpiexec -n R: the scene's strong and weak scaling over the ranks
        from sim.mpi import bench as scaling

        return scaling.run(request, s)
    return s.benchmark().run(request)


COMMANDS = {
    "view": cmd_view,
    "run": cmd_run,
    "bench": cmd_bench,
    "template": user_kernel.run_template,
    "check": user_kernel.run_check,
}


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
        print(
            f"kernel-lab {args.command}: error: unknown scene {args.scene!r} (choose from {', '.join(SCENES)})",
            file=sys.stderr,
        )
        return EXIT_USAGE
    commands = {**COMMANDS, **{c.name: c.run for c in course_commands()}}
    from sim.cmdline import progress
    from sim.mpi import links

    progress.set_quiet(getattr(args, "quiet", False))  # every command but view takes --quiet
    try:  # a signal stops a command cleanly: between steps, frames or chunks, never inside numba
        links.forced_transport()
        with interrupts.stopping(together=world().size > 1), stdout.guarded():  # stdout closed or full: exit 1
            return commands[args.command](request_of(args, scene))
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
