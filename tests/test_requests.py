"""The commands' input is a frozen request built once from the parsed command line: no module below
main.py names argparse's Namespace (but sim/cmdline/arguments.py and from_args.py, which parse the command
line and build the requests from it) or writes to a command's arguments, and every request type is a frozen
dataclass whose fields its parser fills."""

import argparse
import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

from sim.cmdline import requests
from sim.cmdline.arguments import build_parser
from sim.cmdline.from_args import request_of, scene_fields
from sim.registry import SCENES, course_commands
from sim.userkernel import requests as user_requests

ROOT = Path(__file__).resolve().parent.parent
EDGE = {Path("sim/cmdline/arguments.py"), Path("sim/cmdline/from_args.py")}  # where a namespace becomes a request
ARGUMENT_NAMES = {"args", "request", "namespace"}


def modules() -> list[Path]:
    return sorted(p.relative_to(ROOT) for folder in ("sim", "viewer") for p in (ROOT / folder).rglob("*.py"))


def _named(node) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def problems(path: Path, root: Path = ROOT) -> list[str]:
    """Each place ``path`` (under ``root``) names argparse.Namespace or writes to a command's arguments."""
    found = []
    for node in ast.walk(ast.parse((root / path).read_text(), str(path))):
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "Namespace"
            and _named(node.value) == "argparse"
            and path not in EDGE
        ):
            found.append(f"{path}:{node.lineno}: argparse.Namespace")
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "argparse"
            and any(alias.name == "Namespace" for alias in node.names)
        ):
            found.append(f"{path}:{node.lineno}: imports Namespace")
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AugAssign, ast.AnnAssign))
            else []
        )
        for target in targets:
            for part in target.elts if isinstance(target, ast.Tuple) else [target]:
                if isinstance(part, ast.Attribute) and _named(part.value) in ARGUMENT_NAMES:
                    found.append(f"{path}:{node.lineno}: writes {_named(part.value)}.{part.attr}")
        if (
            isinstance(node, ast.Call)
            and _named(node.func) == "setattr"
            and node.args
            and _named(node.args[0]) in ARGUMENT_NAMES
        ):
            found.append(f"{path}:{node.lineno}: setattr({_named(node.args[0])}, ...)")
    return sorted(found)


def test_no_module_below_main_names_the_namespace_or_writes_to_the_arguments():
    assert [p for path in modules() for p in problems(path)] == []


def test_the_check_finds_what_it_looks_for(tmp_path):
    planted = tmp_path / "sim" / "planted.py"
    planted.parent.mkdir()
    planted.write_text(
        "import argparse\n\ndef f(args: argparse.Namespace):\n    args.size = 1\n"
        "    request.a, b = 2, 3\n    setattr(args, 'x', 4)\n"
    )
    assert problems(Path("sim/planted.py"), tmp_path) == [
        "sim/planted.py:3: argparse.Namespace",
        "sim/planted.py:4: writes args.size",
        "sim/planted.py:5: writes request.a",
        "sim/planted.py:6: setattr(args, ...)",
    ]


def request_types() -> list[type]:
    found = {
        cls
        for module in (requests, user_requests)
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if cls.__module__ == module.__name__
    }
    found |= {c.request for c in course_commands()}
    found |= {s.benchmark().request for s in SCENES.values()}
    return sorted(found, key=lambda cls: cls.__qualname__)


@pytest.mark.parametrize("request_type", request_types(), ids=lambda cls: cls.__qualname__)
def test_every_request_is_a_frozen_dataclass(request_type):
    assert dataclasses.is_dataclass(request_type) and request_type.__dataclass_params__.frozen
    values = {f.name: None for f in dataclasses.fields(request_type)}
    made = request_type(**values)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.__setattr__(dataclasses.fields(request_type)[0].name, 1)


def destinations(parser: argparse.ArgumentParser, command: str) -> set[str]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {a.dest for a in sub._actions}


@pytest.mark.parametrize("command", course_commands(), ids=lambda c: c.name)
def test_a_course_command_s_parser_fills_each_field_of_its_request(command):
    assert {f.name for f in dataclasses.fields(command.request)} <= destinations(build_parser(), command.name)


@pytest.mark.parametrize("scene", list(SCENES))
def test_a_bench_s_parser_fills_each_field_of_its_request(scene):
    request, parser = SCENES[scene].benchmark().request, build_parser(scene)
    args = parser.parse_args(["bench", scene])
    parsed = {f.name for f in dataclasses.fields(request)} - set(scene_fields(request, args, scene))
    assert parsed <= destinations(parser, "bench")
    assert isinstance(request_of(args, scene), request)
