"""The command line's arguments: the parser of every command (``view``, ``run``, ``bench`` with each scene's
own options, ``template``, ``check``, the scenes' course commands) and which scene a command line names;
the frozen request a parsed command line makes is ``sim.cmdline.from_args``'s. ``main.py`` dispatches the
request."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from sim.cmdline import cli
from sim.cmdline.baseline import add_option as add_baseline
from sim.registry import SCENES, course_commands, spec
from sim.userkernel import arguments as user_kernel

EXAMPLES = """  python main.py                                  the viewer (default scene: balls dripping)
  python main.py view particles                   the viewer on a chosen scene (and --preset)
  python main.py run balls --preset T --steps 600 --headless --screenshot out.png
  python main.py bench balls --preset t --steps 600 --json results.json"""
DEFAULT_SCENE = "balls"
DEFAULT_SIZE = (1280, 800)  # window, picture and video
DEFAULT_FPS = 30.0  # a headless recording's frames per second
COMMON = ("view", "run", "bench")


def user_bench(argv: list[str]) -> bool:
    """``bench SCENE --kernel-file FILE``: the user's kernel timed beside the built-in variants."""
    return (
        bool(argv) and argv[0] == "bench" and any(t == "--kernel-file" or t.startswith("--kernel-file=") for t in argv)
    )


def chosen_scene(argv: list[str]) -> str:
    """The scene view/run/bench names, wherever it stands among the options (``placed``)."""
    return placed(argv)[0]


def placed(argv: list[str]) -> tuple[str, list[str]]:
    """The scene view/run/bench names and the command line to parse for it.

    The scene is the name a look-ahead parser with every scene's options (an option means the same in each)
    reads as the scene, where that scene's own parser reads it so too; the command line is then parsed as
    given. Where it does not, an option the scene does not take stands before its name and took the value
    after it as the scene (``bench --steps 5 sdh``: sdh's bench has no --steps): the scene is the name given,
    moved first, so that the parse names the option it does not take instead of mistaking its value for the
    scene. Two look-ahead parsers at most."""
    if not argv or argv[0] not in COMMON:
        return DEFAULT_SCENE, argv
    command, kernel_file = argv[0], user_bench(argv)
    probe = [token for token in argv[1:] if token not in ("-h", "--help")]  # help names the scene's options too
    name = _scene_read(_probe(command, list(SCENES), kernel_file), probe)
    if name in SCENES and _scene_read(_probe(command, [name], kernel_file), probe) == name:
        return name, argv
    at = _scene_name_at(argv)
    if at is None:
        return DEFAULT_SCENE, argv
    return argv[at], [argv[0], argv[at], *argv[1:at], *argv[at + 1 :]]


def _probe(command: str, scenes: list[str], kernel_file: bool) -> cli.ProbeParser:
    """A look-ahead parser of ``command`` taking the options of each of ``scenes``."""
    parser = cli.ProbeParser(prog="kernel-lab", conflict_handler="resolve")
    if command == "bench" and kernel_file:  # the same arguments, scene included, for every scene
        add_bench_arguments(parser, DEFAULT_SCENE, kernel_file=True)
        return parser
    parser.add_argument("scene", nargs="?")
    for name in scenes:
        ARGUMENTS[command](parser, name, positional=False)
    return parser


def _scene_read(parser: cli.ProbeParser, argv: list[str]) -> str | None:
    """The scene ``parser`` reads in ``argv``; None where it cannot parse them."""
    try:
        found, _ = parser.parse_known_args(argv)
    except cli.ProbeParser.Mismatch:
        return None
    return found.scene or DEFAULT_SCENE


def _scene_name_at(argv: list[str]) -> int | None:
    """Where a scene's name stands, preferring one that is not right after an option (its value, then)."""
    names = [i for i in range(1, len(argv)) if argv[i] in SCENES and "--" not in argv[1:i]]
    loose = [i for i in names if not (argv[i - 1].startswith("-") and "=" not in argv[i - 1])]
    return next(iter(loose or names), None)


def add_scene_args(p: argparse.ArgumentParser, scene: str, many: bool = False, positional: bool = True) -> None:
    """The arguments every scene takes, plus the chosen scene's own options; ``positional``: the scene's
    name among them."""
    s = spec(scene)
    some = "comma-separated " if many else ""
    if positional:
        add_scene_name(p)
    start = s.start_preset if many else s.default_preset  # bench times its own; view and run open the same
    p.add_argument(
        "--preset",
        type=cli.items if many else str,
        help=f"{some}initial state of {scene} (default {start}): "
        + "; ".join(f"{x.name} ({x.description})" for x in s.presets),
    )
    p.add_argument(
        "-n",
        "--count",
        *(("--sizes",) if many else ()),
        dest="count",
        type=cli.counts if many else cli.positive_int,
        help=f"{some}number of {s.words.unit} for presets that take one (e.g. 10k, 1e6)",
    )
    p.add_argument(
        "--backend",
        default="cpu",
        choices=("cpu", "gpu", "auto"),
        help="physics backend (default cpu; auto = GPU when available)",
    )
    if s.gpu:
        p.add_argument(
            "--variant",
            type=cli.items if many else str,
            help=f"{some}{s.words.variant}: {', '.join(s.gpu.variants)}"
            + (", or all" if many else "")
            + f" (default {s.gpu.default_variant})",
        )
        p.add_argument(
            "--block",
            type=cli.blocks if many else cli.block,
            help=f"{some}CUDA block: {', '.join(map(cli.block_text, s.gpu.blocks))} "
            f"(default {cli.block_text(s.gpu.default_block)})",
        )
    for option in s.options:
        p.add_argument(
            f"--{option.name}",
            type=cli.items if many else str,
            help=f"{some}{option.help}: {', '.join(option.choices)} (default {option.default})",
        )
    p.add_argument("--seed", type=cli.seed, help="random seed of the initial state, 0..2^32-1")


def add_scene_name(p: argparse.ArgumentParser, default_shown: bool = True) -> None:
    """The scene's name, a positional argument (``placed`` finds it among the options)."""
    p.add_argument(
        "scene",
        nargs="?",
        default=DEFAULT_SCENE,
        help=f"scene: {', '.join(SCENES)}" + (f" (default {DEFAULT_SCENE})" if default_shown else ""),
    )


def own_bench_arguments(add_options):
    """A scene's own benchmark's ``add_arguments`` (``sim.contract.Bench``): the scene's name where ``positional``,
    then ``add_options(parser)``, the options alone (``python -m sim.heat.bench`` takes them too)."""

    def add_arguments(p: argparse.ArgumentParser, scene: str, positional: bool = True) -> None:
        if positional:
            add_scene_name(p, default_shown=False)
        add_options(p)

    return add_arguments


def build_parser(
    scene: str = DEFAULT_SCENE, parser_class=argparse.ArgumentParser, kernel_file: bool = False
) -> argparse.ArgumentParser:
    parser = parser_class(
        prog="kernel-lab",
        description="Interactive viewer and headless runner for classic GPU kernels. Scenes: "
        + "; ".join(f"{s.name} ({s.title})" for s in SCENES.values())
        + ". With no subcommand, "
        "opens the viewer.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Examples:\n" + EXAMPLES,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_view_arguments(sub.add_parser("view", help="open the viewer window (the default command)"), scene)
    add_run_arguments(sub.add_parser("run", help="run a scene for a number of steps, in the viewer or headless"), scene)
    bench = sub.add_parser(
        "bench",
        help="time a scene; print a table, optionally JSON",
        epilog="bench SCENE --kernel-file FILE [--stage S]: your own kernel of a stage timed "
        "beside the built-in variants (bench SCENE --kernel-file FILE --help)",
    )
    add_bench_arguments(bench, scene, kernel_file=kernel_file)

    template = sub.add_parser(
        "template",
        help="write a working, commented kernel of a stage to start from",
        description="Stages your own kernel can replace: " + user_kernel.stages_text(),
    )
    user_kernel.add_template_arguments(template)
    check = sub.add_parser(
        "check",
        help="grade your own kernel of a stage against the CPU twin: exit 0 correct, "
        "1 wrong, 2 bad input or a compile error, 3 no GPU here",
    )
    user_kernel.add_check_arguments(check)
    add_quiet(check)

    for command in course_commands():
        course = sub.add_parser(command.name, help=command.help, description=command.description or command.help)
        command.add_arguments(course)
        add_quiet(course)
    return parser


def add_view_arguments(view: argparse.ArgumentParser, scene: str, positional: bool = True) -> None:
    add_scene_args(view, scene, positional=positional)
    view.add_argument("--size", type=cli.window_size, help="window size WxH (default 1280x800, or the saved size)")
    add_baseline(view, "a benchmark JSON (bench ... --json) whose stage times the panel draws beside the live ones")
    view.add_argument(
        "--no-settings",
        action="store_true",
        help="start clean: neither read nor save the settings (scene, sliders, camera, ...)",
    )
    view.add_argument(
        "--kernel-file",
        metavar="FILE",
        help="your own CUDA kernel for one of the scene's stages: a variant named after the file (q), "
        "compiled again on every save, compared with the CPU twin under verification (v)",
    )
    view.add_argument("--stage", help="with --kernel-file: the stage it replaces (default: the scene's first)")
    view.set_defaults(scene=None, backend=None)  # unset: the saved settings or the defaults decide


def add_run_arguments(run: argparse.ArgumentParser, scene: str, positional: bool = True) -> None:
    add_scene_args(run, scene, positional=positional)
    steps = spec(scene).run_steps
    run.add_argument(
        "--steps",
        type=cli.positive_int,
        default=steps,
        help=f"steps, each a {spec(scene).words.step} (default {steps})",
    )
    run.add_argument("--headless", action="store_true", help="no window: simulate, print a summary")
    run.add_argument(
        "--screenshot", metavar="FILE", help="save a picture of the final state (works headless): .png, .jpg or .webp"
    )
    run.add_argument(
        "--size",
        type=cli.window_size,
        help="window, picture or video size WxH (default 1280x800; even for --record; headless: "
        "with --screenshot or --record only)",
    )
    run.add_argument(
        "--record",
        metavar="MP4",
        help="headless: record the run to an MP4 (H.264), a video frame every --record-every steps",
    )
    run.add_argument(
        "--record-every",
        metavar="K",
        type=cli.positive_int,
        help="with --record: physics steps per video frame (default: the scene's steps per displayed frame)",
    )
    run.add_argument(
        "--fps", type=frames_per_second, help=f"with --record: video frames per second (default {DEFAULT_FPS:g})"
    )
    add_quiet(run)


def add_bench_arguments(
    bench: argparse.ArgumentParser, scene: str, kernel_file: bool = False, positional: bool = True
) -> None:
    """The bench of your kernel (``kernel_file``) or the scene's benchmark (``SceneSpec.bench``)."""
    if kernel_file:
        user_kernel.add_bench_arguments(bench)
    else:
        spec(scene).benchmark().add_arguments(bench, scene, positional)
    bench.add_argument("--json", metavar="FILE", help="write the results as JSON to FILE, or - for stdout")
    add_baseline(bench)
    add_quiet(bench)


ARGUMENTS: dict[str, Callable[..., None]] = {
    "view": add_view_arguments,
    "run": add_run_arguments,
    "bench": add_bench_arguments,
}


def add_quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def frames_per_second(text: str) -> float:
    fps = cli.number(text, "frames per second")
    if not 1 <= fps <= 240:
        raise argparse.ArgumentTypeError(f"frames per second must be 1 to 240, got {text}")
    return fps
