"""The frozen request a parsed command line makes (``request_of``): ``view``, ``run``, ``bench`` (a scene's or
a user's kernel's), ``template``, ``check`` and the scenes' course commands, each from the Namespace of
``sim.cmdline.arguments``' parser. Nothing past here sees a Namespace."""

from __future__ import annotations

import argparse
import dataclasses

from sim.cmdline import cli
from sim.cmdline.arguments import DEFAULT_FPS, DEFAULT_SIZE
from sim.cmdline.cli import UsageError
from sim.cmdline.requests import RunRequest, SceneRequest, ViewRequest, frozen_mapping
from sim.registry import course_commands, spec
from sim.userkernel.requests import CheckRequest, KernelBenchRequest, TemplateRequest


def request_of(args: argparse.Namespace, scene: str):
    """The frozen request of the command ``args`` parsed, with the parser of ``scene`` (``placed``'s)."""
    if args.command == "view":
        return ViewRequest(
            scene_request(args, scene, backend=_view_backend(args)),
            args.size,
            args.baseline,
            args.no_settings,
            args.kernel_file,
            args.stage,
        )
    if args.command == "run":
        refuse_outputless_options(args)
        return RunRequest(
            scene_request(args, scene),
            args.steps,
            args.headless,
            args.screenshot,
            args.size or DEFAULT_SIZE,
            args.record,
            args.record_every,
            args.fps or DEFAULT_FPS,
        )
    if args.command == "bench":
        if getattr(args, "kernel_file", None) is not None:
            return cli.parsed(KernelBenchRequest, args)
        request = spec(args.scene).benchmark().request
        return cli.parsed(request, args, **scene_fields(request, args, scene))
    if args.command == "template":
        return cli.parsed(TemplateRequest, args)
    if args.command == "check":
        return cli.parsed(CheckRequest, args)
    return cli.parsed(next(c.request for c in course_commands() if c.name == args.command), args)


def scene_request(args: argparse.Namespace, scene: str, **computed) -> SceneRequest:
    """The scene of ``view`` or ``run`` as given (``computed``: values worked out instead)."""
    return cli.parsed(
        SceneRequest,
        args,
        **{
            "variant": getattr(args, "variant", None),
            "block": getattr(args, "block", None),
            "options": given_options(args, scene),
            **computed,
        },
    )


def scene_fields(request: type, args: argparse.Namespace, scene: str) -> dict:
    """The fields of ``request`` the parser of ``scene`` leaves to be worked out: the scene's options as one mapping
    (``options``), and ``variant`` and ``block`` (None) where the scene has no GPU knobs."""
    names = {f.name for f in dataclasses.fields(request)}
    found = {"options": given_options(args, scene)} if "options" in names else {}
    return found | {name: None for name in ("variant", "block") if name in names and not hasattr(args, name)}


def given_options(args: argparse.Namespace, scene: str):
    """The scene's own options the parser of ``scene`` took (None where not given)."""
    return frozen_mapping({option.name: getattr(args, option.name, None) for option in spec(scene).options})


def _view_backend(args: argparse.Namespace) -> str | None:
    """A user's kernel runs where the scene's GPU kernels run: ``auto`` unless --backend says otherwise."""
    return "auto" if args.kernel_file is not None and args.backend is None else args.backend


def refuse_outputless_options(args: argparse.Namespace) -> None:
    """``run``'s options that shape a recording or a picture, given without one: refused, not ignored."""
    if args.record is None:
        given = [
            name for name, value in (("--fps", args.fps), ("--record-every", args.record_every)) if value is not None
        ]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise UsageError(
                f"{' and '.join(given)} {verb} to a recording: add --record F.mp4, or leave "
                f"{'it' if len(given) == 1 else 'them'} out"
            )
    if args.headless and args.size is not None and args.screenshot is None and args.record is None:
        raise UsageError(
            "--size sets the picture or video of a headless run: add --screenshot or --record, or leave it out"
        )
