"""Progress: a tqdm bar on a terminal, nothing extra when output is not a terminal or with --quiet;
``run`` reports its start-up (kernels compiled or loaded) apart from its steps/s."""

import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import numba
from streams import Terminal

from sim.cmdline import progress

ROOT = Path(__file__).resolve().parent.parent


def test_a_bar_on_a_terminal_nothing_elsewhere_or_when_quiet():
    term = Terminal()
    with progress.Progress("work", 200, "steps", stream=term) as bar:
        assert bar.active
        bar.advance(50)
        bar.bar.refresh()
    assert "work:  25%" in term.getvalue() and "50/200" in term.getvalue() and "steps/s" in term.getvalue()
    pipe = io.StringIO()
    with progress.Progress("work", 200, stream=pipe) as bar:
        bar.advance(200)
    assert pipe.getvalue() == "" and not bar.active
    progress.set_quiet(True)
    quiet = Terminal()
    with progress.Progress("work", 200, stream=quiet) as bar:
        bar.advance(10)
    assert quiet.getvalue() == "" and not progress.shown(quiet)


def test_frames_callback_draws_one_bar_and_closes_it():
    term = Terminal()
    callback = progress.frames_callback("timed frames", stream=term)
    for done in range(1, 6):
        callback(done, 5)
    assert "timed frames" in term.getvalue()


def test_no_progress_output_when_stdout_is_not_a_terminal(cli):
    result = cli("run", "balls", "--preset", "T", "--headless", "--steps", "30")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "" and "\r" not in result.stdout
    lines = result.stdout.splitlines()
    assert lines[0].startswith("start-up: ") and " in the first step" in lines[0]
    assert "steps/s over the 29 after start-up" in lines[1]


def _on_a_terminal(*args) -> str:
    """stderr of main.py run on a pseudo-terminal."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a terminal 120 wide
    try:
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "main.py"), *args], stdout=subprocess.DEVNULL, stderr=follower, cwd=ROOT
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=300)
    finally:
        os.close(leader)
    return b"".join(chunks).decode(errors="replace")


def test_a_bar_on_a_terminal_and_quiet_silences_it():
    shown = _on_a_terminal("run", "balls", "--preset", "T", "--headless", "--steps", "240")
    assert "balls:" in shown and "steps" in shown and "%" in shown
    assert _on_a_terminal("run", "balls", "--preset", "T", "--headless", "--steps", "240", "--quiet") == ""


class CompilingScene:
    """Steps call a numba function compiled on first use (a fresh one: never cached)."""

    class spec:
        name = "compiling"

    def __init__(self):
        @numba.njit
        def fresh_kernel(x):
            return x * 2 + 1

        self.kernel = fresh_kernel
        self.steps = 0

    def run_frame(self, steps):
        self.kernel(self.steps)
        self.steps += 1
        return 1

    def finish(self):
        pass


def test_start_up_is_timed_apart_and_names_what_compiled():
    seen = []
    timing = progress.run_steps(CompilingScene(), 50, after_step=lambda scene: seen.append(scene.steps))
    assert timing.startup_steps == 1 and timing.timed_steps == 49 and timing.compiled == ["fresh_kernel"]
    assert seen == list(range(1, 51))
    assert timing.startup_s > timing.run_s / 49, "the compiling step took longer than a step"
    assert "compiling kernels (numba: fresh_kernel)" in timing.startup_line()
