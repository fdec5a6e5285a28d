"""Every tracked Python file is linted: ruff's default excludes skip folders with conventional names
(``dist``, ``build``, ``site-packages`` ...), so a package given one of those names would pass CI unread."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
RUFF = shutil.which("ruff", path=str(pathlib.Path(sys.executable).parent)) or shutil.which("ruff")


def _lines(command: list[str], cwd: pathlib.Path) -> list[str]:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line.strip()]


def unlinted(root: pathlib.Path) -> list[str]:
    """The Python files git tracks under ``root`` that ``ruff check .`` does not read."""
    tracked = set(_lines(["git", "ls-files", "*.py"], root))
    assert tracked, "git lists no Python files"
    linted = {
        pathlib.Path(line).resolve().relative_to(root.resolve()).as_posix()
        for line in _lines([RUFF, "check", "--show-files", "."], root)
    }
    return sorted(tracked - linted)


@pytest.fixture(autouse=True)
def tools():
    if RUFF is None or shutil.which("git") is None:
        pytest.skip("needs ruff and git")


def test_ruff_checks_every_tracked_python_file():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    unread = unlinted(ROOT)
    assert not unread, f"ruff check . skips tracked files (rename their folder, or stop excluding it): {unread}"


def test_a_tracked_package_in_a_folder_named_dist_is_reported(tmp_path):
    """What the check above catches: ruff's defaults exclude ``dist``, git tracks it."""
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 120\n")
    for path in ("main.py", "sim/__init__.py", "sim/dist/__init__.py", "sim/dist/comm.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("import os\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    assert unlinted(tmp_path) == ["sim/dist/__init__.py", "sim/dist/comm.py"]
