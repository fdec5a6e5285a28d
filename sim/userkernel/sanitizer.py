"""Your kernel under NVIDIA's compute-sanitizer: one launch, its hazards at the lines of your file.

    outcome = run(source, inputs, block, "racecheck")     # SanitizerError when it cannot say
    outcome.hazards, outcome.lines(source)                # ["my_step.cu:18: error: racecheck: ...", ...]

The tool (part of the CUDA toolkit: ``find`` looks on PATH, in $CUDA_HOME/bin and /usr/local/cuda/bin)
starts a process of its own (``sim.userkernel.sanitize_child``) that compiles the kernel as the sandbox
does (``-lineinfo``: the tool names lines), gives it each buffer as an allocation of its own (no memory
pool: memcheck sees the real bounds, and pads each one) and launches it once. The tool writes its report
to a file; the child writes the buffers' addresses (an address is then named by buffer) and what it saw.

Bounded: the whole run has ``limit_s`` (the sanitizer slows a kernel 10-100 times, and attaches to a
new Python process); past it, on ``stop`` (a threading.Event) or on the caller's Ctrl-C the tool and the
child are killed, as a process group; they die with the caller as well (Linux), so nothing is left running.
A precise memcheck error (an access out of bounds) ends the kernel before the access is made: the run
reports the line where a plain run would have faulted the GPU (an MMU fault) and lost its context.
"""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sim.userkernel import sanitizer_report
from sim.userkernel.sanitizer_report import Finding, Report

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
WHAT = {
    "memcheck": "out-of-bounds and misaligned accesses",
    "racecheck": "shared-memory races",
    "synccheck": "misused barriers (__syncthreads in divergent code)",
    "initcheck": "reads of global memory never written",
}
LIMIT_S = 180.0  # the whole sanitized run: a new process, CuPy, the compile, one instrumented launch
PRINT_LIMIT = 20  # reports the tool prints (a wrong index repeats in every thread)
PADDING = 1 << 16  # bytes memcheck puts after every allocation: a write a few rows too far lands there
POLL_S = 0.05
TOOLKIT_BIN = "/usr/local/cuda/bin"  # where the CUDA toolkit installs by default
ROOT = str(Path(__file__).resolve().parents[2])  # the product's folder: the child imports sim from it
MISSING = (
    "compute-sanitizer was not found (on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin): it comes with "
    "the CUDA toolkit (https://developer.nvidia.com/cuda-downloads); put its bin folder on PATH or set "
    "CUDA_HOME"
)
# the tool's launcher: dies with its caller (PR_SET_PDEATHSIG outlives exec), then becomes compute-sanitizer
_LAUNCH = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None).prctl(1, signal.SIGKILL)\n"
    "os.getppid() == 1 and os._exit(1)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)
_CHILD = (
    "import sys; sys.path.insert(0, sys.argv[1]); from sim.userkernel.sanitize_child import main; main(*sys.argv[2:])"
)


class SanitizerError(RuntimeError):
    """The sanitized run said nothing about the kernel: ``kind`` is "missing" (no compute-sanitizer),
    "no-gpu", "compile", "timeout", "stopped" or "failed"; the message is one line."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass
class Outcome:
    """What one sanitized launch found."""

    tool: str
    report: Report
    buffers: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (device pointer, bytes)
    device: str = ""
    launch_error: str = ""  # what CUDA said about the launch, if it failed (after a memcheck error, often)

    @property
    def hazards(self) -> list[Finding]:
        """The findings in the kernel's code (a CUDA call that failed because of one is not one more)."""
        return self.report.hazards

    def lines(self, source) -> list[str]:
        """Each finding at its lines of ``source``, with the line's text."""
        return [sanitizer_report.described(f, source, self.buffers) for f in self.report.findings]


def find() -> str | None:
    """compute-sanitizer's path: on PATH, in $CUDA_HOME/bin (or $CUDA_PATH/bin), in /usr/local/cuda/bin."""
    places = [shutil.which("compute-sanitizer")]
    places += [
        os.path.join(os.environ[name], "bin", "compute-sanitizer")
        for name in ("CUDA_HOME", "CUDA_PATH")
        if os.environ.get(name)
    ]
    places.append(os.path.join(TOOLKIT_BIN, "compute-sanitizer"))
    return next((p for p in places if p and os.path.isfile(p) and os.access(p, os.X_OK)), None)


def arguments(exe: str, tool: str, log: str, limit_s: float = LIMIT_S, print_limit: int = PRINT_LIMIT) -> list[str]:
    """compute-sanitizer's command line before the application: its report to ``log``, device backtraces
    only (the host's would be Python's interpreter), the kernel ended (not the context) on a memory error."""
    if tool not in TOOLS:
        raise ValueError(f"the sanitizer's tool is one of {', '.join(TOOLS)}, not {tool!r}")
    args = [
        exe,
        "--tool",
        tool,
        "--print-limit",
        str(print_limit),
        "--show-backtrace",
        "device",
        "--log-file",
        log,
        "--launch-timeout",
        str(max(1, int(limit_s))),
        "--target-processes",
        "application-only",
        "--destroy-on-device-error",
        "kernel",
    ]
    if tool == "memcheck":
        args += ["--padding", str(PADDING)]
    return args


def _kill(process: subprocess.Popen) -> None:
    """The tool and the child it started (one process group), then reaped."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _wait(process: subprocess.Popen, limit_s: float, stop) -> None:
    deadline = time.monotonic() + limit_s
    while process.poll() is None:
        if stop is not None and stop.is_set():
            raise SanitizerError("stopped", "the sanitized run was stopped")
        if time.monotonic() > deadline:
            raise SanitizerError(
                "timeout",
                f"the sanitized run did not finish within {limit_s:g} s; it was stopped "
                "(a kernel that never returns, or one slowed past the limit)",
            )
        time.sleep(POLL_S)


def _read(path: Path, binary: bool = False):
    try:
        return path.read_bytes() if binary else path.read_text(errors="replace")
    except OSError:
        return None


def run(
    source,
    inputs: dict,
    block,
    tool: str = "memcheck",
    *,
    limit_s: float = LIMIT_S,
    print_limit: int = PRINT_LIMIT,
    stop=None,
    exe: str | None = None,
) -> Outcome:
    """One launch of ``source``'s kernel on ``inputs`` under ``tool``; SanitizerError when the run could not
    say anything about the kernel."""
    exe = exe or find()
    if exe is None:
        raise SanitizerError("missing", MISSING)
    with tempfile.TemporaryDirectory(prefix="kernel-lab-sanitize-") as folder:
        work = Path(folder)
        request, result, log, said = work / "request", work / "result", work / "report.txt", work / "output.txt"
        request.write_bytes(pickle.dumps((source, inputs, block, tool)))
        command = [
            sys.executable,
            "-P",
            "-S",
            "-c",
            _LAUNCH,
            *arguments(exe, tool, str(log), limit_s, print_limit),
            sys.executable,
            "-P",
            "-c",
            _CHILD,
            ROOT,
            str(request),
            str(result),
        ]
        with open(said, "wb") as output:
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
            )  # its own group: killed whole, Ctrl-C is ours
        try:
            _wait(process, limit_s, stop)
        finally:
            if process.returncode is None:
                _kill(process)
        text = _read(log) or _read(said) or ""  # the report goes to stdout where the log cannot be written
        answer = pickle.loads(_read(result, binary=True) or pickle.dumps({}))
        return _outcome(tool, text, answer, _read(said) or "", process.returncode)


def _outcome(tool: str, text: str, answer: dict, said: str, code: int) -> Outcome:
    status, message = answer.get("status"), answer.get("message", "")
    if status in ("no-gpu", "compile"):
        raise SanitizerError(status, message)
    if status == "error":
        raise SanitizerError("failed", f"the sanitized run failed: {message}")
    report = sanitizer_report.parse(text)
    if report.summary is None and status != "ok":  # the tool never reached the kernel, or never finished
        last = [line.strip() for line in said.splitlines() if line.strip()]
        why = report.problems[0] if report.problems else (last[-1] if last else f"exit code {code}")
        raise SanitizerError("failed", f"compute-sanitizer did not finish: {why}")
    return Outcome(tool, report, answer.get("buffers", {}), answer.get("device", ""), answer.get("launch_error", ""))


class Background:
    """One sanitized run at a time off the caller's thread (the viewer's frame thread reads ``running``,
    ``outcome`` and ``error`` each frame: no I/O there); ``cancel`` kills a run in flight."""

    def __init__(self, runner: Callable[..., Outcome] = run) -> None:
        self._runner = runner
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.tool = ""
        self.outcome: Outcome | None = None
        self.error = ""  # why the last run said nothing about the kernel
        self.size = 0  # the items of the step it ran on
        # the outcome's findings as (severity, text at file:line), made off the caller's thread
        self.lines: list[tuple[str, str]] = []

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, source, inputs: dict, block, tool: str, size: int = 0) -> bool:
        """Start a run; False (nothing done) while one is in flight."""
        if self.running:
            return False
        self._stop = threading.Event()
        self.tool, self.size, self.outcome, self.error, self.lines = tool, size, None, "", []
        self._thread = threading.Thread(
            target=self._work, args=(source, inputs, block, tool, self._stop), name="kernel-lab sanitizer", daemon=True
        )
        self._thread.start()
        return True

    def _work(self, source, inputs, block, tool, stop) -> None:
        """The thread that starts the tool waits for it too: the tool's launcher dies with this thread."""
        try:
            outcome = self._runner(source, inputs, block, tool, stop=stop)
        except SanitizerError as exc:
            if not stop.is_set():
                self.error = str(exc)
        except Exception as exc:  # noqa: BLE001  the viewer says why and keeps running
            first = (str(exc).strip().splitlines() or [""])[0]
            self.error = f"{type(exc).__name__}: {first}"
        else:
            if not stop.is_set():
                self.lines = [
                    (f.severity if f.in_kernel else "note", sanitizer_report.described(f, source, outcome.buffers))
                    for f in outcome.report.findings
                ]
                self.outcome = outcome

    def cancel(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
