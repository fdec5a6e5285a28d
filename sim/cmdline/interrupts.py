"""Stopping a command on SIGINT (Ctrl-C), SIGTERM or SIGHUP: with its cleanup, never inside numba.

A Python signal handler that raises while numba-compiled code has called back into Python (numba
unpickles constants that way) turns into ``SystemError: CPUDispatcher(...) returned a result with
an exception set``, exit 1. So while a command runs (``with stopping():``) the handler raises the
signal's exit (KeyboardInterrupt, exit 130; SystemExit(128 + signal): 143 for SIGTERM, 129 for
SIGHUP) only in the command's own Python code; where it finds numba's code it notes the signal, and
the loops that take the time (steps, frames, chunks of a long kernel) call ``check()`` between
iterations, which raises it there. Either way every ``finally`` and ``with`` runs on the way out.

- ``stopping(together=True)`` (several MPI ranks): every signal waits for a check, where the ranks
  agree (``sim.mpi.launch.check_interrupts``) and all leave at the same step.
- Output temporaries registered with ``removed_on_signal`` (sim.cmdline.writer's) are removed by the handler
  itself: a process killed before it unwinds (an MPI job aborted by another rank) leaves none; over
  MPI ranks a watcher removes them even after SIGKILL.
- A second signal while one is pending stops at once (for a phase without a check).
- ``answering()``: a block that answers the signal as a quit would (the viewer window closing, its
  settings saved) publishes its outputs; a second signal still stops it at once.
- A signal the process was told to ignore (``nohup``) or that has a handler of its own keeps it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

COMPILED_CALLERS = ("numba", "llvmlite")  # their Python code runs called back from compiled code, or compiling it
_pending = 0  # the first signal noted while stopping() is active, 0 for none
_installed = False
_together = False
_temporaries: set[str] = set()


def exit_for(signum: int) -> BaseException:
    """The exception that ends a command stopped by ``signum``: exit 128 + signum."""
    return KeyboardInterrupt() if signum == signal.SIGINT else SystemExit(128 + signum)


def pending() -> int:
    """The signal that asked the command to stop (0: none)."""
    return _pending


def check() -> None:
    """Between two steps: end the command if a signal asked for it."""
    if _pending:
        raise exit_for(_pending)


def _note(signum: int, frame) -> None:
    global _pending
    for path in tuple(_temporaries):
        try:
            os.unlink(path)
        except OSError:
            pass
    if _pending:
        raise exit_for(signum)
    _pending = signum
    module = frame.f_globals.get("__name__", "") if frame is not None else ""
    if not _together and module.partition(".")[0] not in COMPILED_CALLERS:
        raise exit_for(signum)


def _takes_over(sig: int) -> bool:
    return signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler)


@contextmanager
def stopping(together: bool = False) -> Iterator[None]:
    """The command's signal handlers while the block runs (main thread); a signal still pending when the
    block ends raises its exit there. ``together``: every signal waits for a check."""
    global _pending, _installed, _together
    if _installed or threading.current_thread() is not threading.main_thread():
        yield
        return
    _pending, _together = 0, together
    replaced = {sig: signal.signal(sig, _note) for sig in SIGNALS if _takes_over(sig)}
    _installed = True
    try:
        yield
        check()
    finally:
        for sig, previous in replaced.items():
            signal.signal(sig, previous)
        _installed = False
        _pending = 0


@contextmanager
def answering() -> Iterator[None]:
    """The pending signal is answered by the block, as a quit would be (the window closing: its settings
    saved): within it nothing is pending, so its outputs are published; a second signal stops it at once
    (nothing half-written); after it the first signal is pending again and ends the command as before."""
    global _pending
    signum, _pending = _pending, 0
    try:
        yield
    finally:
        _pending = _pending or signum


@contextmanager
def removed_on_signal(path: str) -> Iterator[None]:
    """While the block runs, a stopping signal removes ``path`` at once (an output's temporary file).
    Over MPI ranks, so does this process's death: a launcher that is hung up (mpiexec on SIGHUP) has
    its ranks killed with SIGKILL, which no handler sees."""
    _temporaries.add(path)
    guard = _removed_when_gone(path) if _together else None
    try:
        yield
    finally:
        _temporaries.discard(path)
        if guard is not None:
            if guard.stdin is not None:  # always: the guard reads a pipe
                guard.stdin.close()  # the block is over: the file was renamed into place or is removed next
            guard.wait()


def _removed_when_gone(path: str) -> subprocess.Popen:
    """A shell, in a session of its own, that removes ``path`` when this process closes its pipe: at the
    end of the block, or when the process dies however it dies."""
    return subprocess.Popen(
        ["sh", "-c", 'read -r _; rm -f -- "$0"', path],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
