"""Signals: a signal stops a command cleanly (never inside numba code; the window between frames, its settings
saved; a benchmark), with no temporary file left; Ctrl-C while starting and a Python without the dependencies
each end in one line, and the no-display hint names the Python that runs. Over MPI ranks:
tests/test_reliability_mpi.py."""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mpi_support import CLEAN_ENV  # noqa: E402

EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
SIGNALS = [pytest.param(sig, id=sig.name) for sig in EXIT]


def leftovers(folder) -> list[str]:
    return [name for name in os.listdir(folder) if name.endswith(".partial")]


STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def no_process_left():
    """A test that fails half-way leaves no process running (a benchmark of minutes, an MPI job)."""
    yield
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL) if proc.pid == os.getpgid(proc.pid) else proc.kill()
            except ProcessLookupError:
                pass
            proc.wait()


def start(command: list[str], **kwargs) -> subprocess.Popen:
    """A process with Python's own signal dispositions (a test run in the background may ignore SIGINT)."""
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=kwargs.pop("env", CLEAN_ENV),
        preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in EXIT],
        **kwargs,
    )
    STARTED.append(proc)
    return proc


# --- a signal inside numba code --------------------------------------------------------------------------
NUMBA_LOOP = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {root!r})
    import numba, numpy as np
    from sim.cmdline import interrupts

    @numba.njit(parallel=True, cache=True)  # compiled by the first test's process, loaded by the others
    def work(a):
        for i in numba.prange(a.shape[0]):
            a[i] = np.sin(a[i]) + 1.0
        return a  # boxing the result calls numba's Python code from the compiled function

    ignore_hup = sys.argv[1] == "ignore-hup"
    if ignore_hup:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # like nohup
    a = np.ones(200_000)
    work(a)
    try:
        with interrupts.stopping():
            print("stepping", flush=True)
            for step in range(int(sys.argv[2])):  # each call goes through numba's Python helpers
                work(a)
                if ignore_hup and step == 1:  # a hang-up while the command runs, delivered before kill returns
                    os.kill(os.getpid(), signal.SIGHUP)
                interrupts.check()
    except KeyboardInterrupt:  # as main.py
        sys.exit(130)
    print("done")
""")


@pytest.fixture(scope="module")
def numba_loop(tmp_path_factory) -> str:
    """The loop as a file: numba caches compiled code only for functions defined in one."""
    script = tmp_path_factory.mktemp("numba_loop") / "numba_loop.py"
    script.write_text(NUMBA_LOOP.format(root=str(ROOT)))
    return str(script)


@pytest.mark.parametrize("sig", SIGNALS)
def test_a_signal_during_numba_code_exits_with_its_code_and_no_system_error(sig, numba_loop):
    for _ in range(3):  # a raising handler failed 11 times in 12 here
        proc = start([sys.executable, numba_loop, "-", "10000000"])
        assert proc.stdout.readline() == "stepping\n"
        time.sleep(0.3)
        proc.send_signal(sig)
        code = proc.wait(timeout=30)
        err = proc.stderr.read()
        assert code == EXIT[sig] and "Error" not in err and "Traceback" not in err, (code, err)


def test_an_ignored_sighup_stays_ignored_while_a_command_runs(numba_loop):
    proc = start([sys.executable, numba_loop, "ignore-hup", "20"])
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (0, "stepping\ndone\n"), err


@pytest.mark.window
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_window_between_frames(sig, code):
    """The window's frames step numba code too: a signal stops it between two frames, with no
    SystemError, and the window closes as when the user quits."""
    if not os.environ.get("DISPLAY"):
        pytest.skip("needs a display (make test runs under Xvfb)")
    env = {**CLEAN_ENV, "DISPLAY": os.environ["DISPLAY"]}
    proc = start([sys.executable, "main.py", "run", "balls", "--preset", "t", "--steps", "1000000"], env=env)
    if shutil.which("xdotool"):  # make test installs it: the window shows, then a second of frames
        subprocess.run(
            ["xdotool", "search", "--sync", "--onlyvisible", "--name", "kernel-lab"],
            env=env,
            capture_output=True,
            timeout=60,
        )
        time.sleep(1.0)
    else:
        time.sleep(8.0)  # the window opens, compiles and steps
    assert proc.poll() is None, proc.stderr.read()
    proc.send_signal(sig)
    assert proc.wait(timeout=60) == code
    err = proc.stderr.read()
    assert "SystemError" not in err and "Traceback" not in err, err


def wait_for_window(proc, width: int, height: int, seconds: float = 60) -> None:
    """Until a kernel-lab window of that size shows on the display (xdotool; else a fixed wait): a signal
    before the window opens ends the start-up, with no settings to save."""
    if shutil.which("xdotool") is None:
        time.sleep(8.0)
        return
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        found = subprocess.run(
            ["xdotool", "search", "--onlyvisible", "--name", "kernel-lab"], capture_output=True, text=True
        )
        for window in found.stdout.split():
            shape = subprocess.run(["xdotool", "getwindowgeometry", "--shell", window], capture_output=True, text=True)
            if f"WIDTH={width}\n" in shape.stdout and f"HEIGHT={height}\n" in shape.stdout:
                return
        time.sleep(0.2)
    raise AssertionError(f"no {width}x{height} kernel-lab window in {seconds:.0f} s")


@pytest.mark.window
@pytest.mark.parametrize("sig, code, width", [(signal.SIGINT, 130, 1001), (signal.SIGTERM, 143, 1003)])
def test_a_signal_closes_the_viewer_as_a_quit_does_with_its_settings_saved(tmp_path, sig, code, width):
    """Ctrl-C in the window: exit 130, and the settings saved as Esc Esc saves them (none half-written).
    Each case's own window size tells its window from those of tests running beside it."""
    if not os.environ.get("DISPLAY"):
        pytest.skip("needs a display (make test runs under Xvfb)")
    config = tmp_path / "config"
    proc = start(
        [sys.executable, "main.py", "view", "heat", "--preset", "dli", "--size", f"{width}x700"],
        env={**CLEAN_ENV, "DISPLAY": os.environ["DISPLAY"], "KERNEL_LAB_CONFIG_DIR": str(config)},
    )
    wait_for_window(proc, width, 700)
    time.sleep(2.0)  # it compiles and steps
    assert proc.poll() is None, proc.stderr.read()
    proc.send_signal(sig)
    assert proc.wait(timeout=60) == code
    err = proc.stderr.read()
    assert "Traceback" not in err and "settings not saved" not in err, err
    saved = (config / "settings.toml").read_text()
    assert 'scene = "heat"' in saved and 'preset = "dli"' in saved and leftovers(config) == []


def test_sighup_stops_a_balls_benchmark_with_129():
    proc = start([sys.executable, "main.py", "bench", "balls", "--preset", "block", "-n", "20000", "--steps", "100000"])
    assert "Ctrl-C stops it" in proc.stderr.readline()  # the run's time estimate
    assert "block" in proc.stderr.readline()  # "[1/1] block n=20,000 cpu ...": timing has started
    time.sleep(1.0)
    proc.send_signal(signal.SIGHUP)
    assert proc.wait(timeout=30) == 129
    assert "Traceback" not in proc.stderr.read() and proc.stdout.read() == ""


# --- the output's temporary file ---------------------------------------------------------------------------
KILLED_WRITER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from sim.cmdline import interrupts
    from sim.cmdline.writer import atomic_output
    with interrupts.stopping(together=True), atomic_output(sys.argv[1]) as f:
        f.write("x" * 1_000_000)
        print("writing", flush=True)
        time.sleep(60)  # no check: as a rank waiting in a collective when the job is aborted
""")


def test_the_signal_handler_removes_the_temporary_file_before_the_process_unwinds(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("previous")
    proc = start([sys.executable, "-c", KILLED_WRITER.format(root=str(ROOT)), str(target)])
    assert proc.stdout.readline() == "writing\n" and len(leftovers(tmp_path)) == 1
    proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 10
    while leftovers(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "still running: the signal waits for a check"
    proc.kill()  # what MPI_Abort does to the other ranks
    proc.wait(timeout=10)
    assert leftovers(tmp_path) == [] and target.read_text() == "previous"


# --- start-up ----------------------------------------------------------------------------------------------
INTERRUPTED_IMPORT = textwrap.dedent("""
    import importlib.abc, os, runpy, signal, sys

    class CtrlC(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == {module!r}:
                os.kill(os.getpid(), signal.SIGINT)
            return None

    sys.meta_path.insert(0, CtrlC())
    sys.argv = ["main.py", "--help"]
    runpy.run_path("main.py", run_name="__main__")
""")


@pytest.mark.parametrize("module", ["numpy", "sim.registry"])  # a dependency and our own; --help loads no numba
def test_ctrl_c_while_starting_exits_130_with_one_line(module):
    proc = start([sys.executable, "-c", INTERRUPTED_IMPORT.format(module=module)])
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and out == ""
    assert err.strip() == "kernel-lab: interrupted while starting"


def test_a_python_without_the_dependencies_says_how_to_install_in_one_line():
    # -S: no site-packages, so numpy and numba are missing, as for a system Python
    done = subprocess.run(
        [sys.executable, "-S", "-E", "main.py", "run", "balls"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "has no numpy" in lines[0] and "make install" in lines[0], done.stderr


def test_the_no_display_hint_names_the_python_that_runs():
    # a process of its own: without a display the viewer's first import picks headless GL for the process
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    done = subprocess.run(
        [sys.executable, "main.py", "view", "heat", "--no-settings"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    hint = done.stderr.strip().splitlines()[-1].split()
    assert os.path.samefile(hint[0], sys.executable) and hint[1:4] == ["main.py", "run", "heat"]
