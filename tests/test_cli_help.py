"""Every command's ``--help`` and the parse-time usage errors, byte for byte as recorded in
tests/data/cli_help.json: the parsers may be rebuilt, the text a user reads stays the same.

After an intended change of a help text, record them again: ``python tests/test_cli_help.py --write``.
"""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sim.registry import SCENES, course_commands  # noqa: E402

RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "cli_help.json")
COLUMNS = "100"  # argparse wraps to the terminal's width: one fixed width for the record


def command_lines() -> list[list[str]]:
    """The help of every command (view, run and bench of every scene), and usage errors that find the
    scene among the options."""
    lines = [
        ["--help"],
        ["view", "--help"],
        ["run", "--help"],
        ["bench", "--help"],
        ["template", "--help"],
        ["check", "--help"],
    ]
    lines += [[command, scene, "--help"] for command in ("view", "run", "bench") for scene in SCENES]
    lines += [["bench", scene, "--kernel-file", "mine.cu", "--help"] for scene in SCENES if SCENES[scene].user_stages]
    lines += [[c.name, "--help"] for c in course_commands()]
    lines += [
        ["bench", "--steps", "5", "sdh"],
        ["bench", "--kernel", "all", "heat", "--sizes", "1"],
        ["run", "--preset", "nope", "particles", "--steps", "0"],
        ["run", "--steps", "x", "heat"],
        ["view", "--size", "9x9", "durbin"],
        ["bench", "balls", "--kernel", "all"],
        ["bench", "--json"],
        ["run", "--bogus", "sdh"],
        ["view", "nope"],
        ["frobnicate"],
        ["heat", "--ni", "2"],
        ["sdh", "1"],
        ["durbin", "--version", "9"],
        ["particles", "-n", "0"],
        ["check", "heat"],
        ["template"],
        ["bench", "sdh", "--width", "-"],
        ["bench", "durbin", "--batch", "1x1"],
        ["run", "balls", "-n", "abc"],
    ]
    return lines


def record(cli, argv: list[str]) -> dict:
    ran = cli(*argv)
    return {"argv": argv, "returncode": ran.returncode, "stdout": ran.stdout, "stderr": ran.stderr}


@pytest.fixture()
def columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", COLUMNS)


def recorded() -> dict:
    with open(RECORDED, encoding="utf-8") as f:
        return {" ".join(r["argv"]): r for r in json.load(f)}


@pytest.mark.parametrize("argv", command_lines(), ids=" ".join)
def test_help_and_usage_errors_are_as_recorded(cli, columns, argv):
    assert record(cli, argv) == recorded()[" ".join(argv)]


def test_every_recorded_command_line_is_checked():
    assert set(recorded()) == {" ".join(argv) for argv in command_lines()}


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    from conftest import run_main

    os.environ["COLUMNS"] = COLUMNS
    with open(RECORDED, "w", encoding="utf-8") as f:
        json.dump([record(run_main, argv) for argv in command_lines()], f, indent=1, ensure_ascii=False)
        f.write("\n")
