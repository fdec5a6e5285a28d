"""Standard output that cannot be written (closed, a full device): one line on stderr and exit 1, no traceback
and no "Exception ignored" from the interpreter's last flush (sim/cmdline/stdout.py, at main's edge)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "template": (["template", "heat", "step"], "kernel-lab template"),
    "particles": (["particles", "-n", "100", "--steps", "10"], "kernel-lab particles"),
}


def run(argv, stdout):
    return subprocess.run(
        [sys.executable, str(ROOT / "main.py"), *argv],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_a_full_standard_output_is_one_line_and_exit_1(command):
    argv, prefix = COMMANDS[command]
    with open("/dev/full", "w") as full:
        out = run(argv, full)
    assert out.returncode == 1
    assert out.stderr.splitlines()[-1] == (
        f"{prefix}: cannot write the output to standard output: No space left on device"
    )
    assert "Traceback" not in out.stderr and "Exception ignored" not in out.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_a_closed_standard_output_is_one_line_and_exit_1(command):
    argv, prefix = COMMANDS[command]
    code = (
        f"import os, runpy, sys; os.close(1); sys.argv = ['main.py', *{argv!r}]; "
        f"sys.path[:0] = [{str(ROOT)!r}]; runpy.run_path({str(ROOT / 'main.py')!r}, run_name='__main__')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 1, out.stderr
    assert out.stderr.splitlines()[-1].startswith(f"{prefix}: cannot write the output to standard output: ")
    assert "Traceback" not in out.stderr and "Exception ignored" not in out.stderr


def test_a_written_standard_output_is_untouched(tmp_path):
    with open(tmp_path / "out.cu", "w") as f:
        assert run(["template", "heat", "step"], f).returncode == 0
    assert (tmp_path / "out.cu").read_text() == (ROOT / "sim" / "heat" / "templates" / "step.cu").read_text()
