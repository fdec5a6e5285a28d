"""Running kernel-lab's command line on every rank of an MPI launch.

``@ranks`` wraps ``main``: with one rank it calls ``main`` untouched (no MPI is loaded). With
several, every rank runs the same command line; rank 0 prints, the others' stdout is discarded and
their stderr kept (its last part) in case they fail. How a run ends, with no rank left waiting:

- A command that shares work calls ``begin()`` once its arguments are checked and before the first
  message between ranks: every rank says whether it got there (one all-reduce). If one failed
  before (a bad argument, a file it cannot write), the others learn it there and all exit with its
  code, its message printed once (by rank 0 if it failed, else by the lowest rank that did).
- A rank that fails after ``begin()`` and before ``end()`` may leave others inside a collective:
  it prints its message (naming its rank) and aborts the whole job (MPI_Abort), exit code kept.
- After ``end()`` (no more messages), every rank's exit code is agreed again and the largest wins.
- Commands that never call ``begin()`` (the viewer, the checker) run on every rank and agree once at
  the end.
- Every rank must run rank 0's command line: ranks started with other arguments stop the job before
  it starts (exit 2, rank 0 names the first that differs).
- A signal (Ctrl-C, SIGTERM, SIGHUP) stops every rank at the same step: step loops over ranks call
  ``check_interrupts(comm)``, so none is left in a collective, rank 0 removes its output's temporary
  file and the job ends with the signal's exit code, without MPI_Abort.
- Started with a launcher's variables (PMI_SIZE=2 ...) but not by that launcher: one line, exit 2.
"""

from __future__ import annotations

import fcntl
import functools
import io
import json
import os
import shlex
import stat
import struct
import sys
import termios
import time
import traceback
from typing import TextIO

import numpy as np

from sim.cmdline import interrupts
from sim.cmdline.cli import EXIT_INTERRUPTED, EXIT_USAGE
from sim.mpi.comm import LaunchError, launched_size, world

TAIL_CHARS = 64 * 1024  # of a non-root rank's stderr, kept for its failure message


class _Tail(io.TextIOBase):
    """A text stream that keeps the last TAIL_CHARS characters written to it."""

    def __init__(self) -> None:
        self.text = ""

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.text = (self.text + s)[-TAIL_CHARS:]
        return len(s)

    def isatty(self) -> bool:
        return False


class _State:
    phase = "setup"  # setup -> running (begin) -> ended (end); "failed": a peer failed in setup
    real_stderr: TextIO | None = None
    tail: _Tail | None = None


_state = _State()


def ranks(main):
    """Decorator for the command line's ``main(argv)``: see the module's description."""

    @functools.wraps(main)
    def wrapper(argv=None):
        if launched_size() <= 1:
            try:
                return main(argv)
            except KeyboardInterrupt:  # before the command runs (it stops on its own): reading the arguments
                print("kernel-lab: interrupted while starting", file=sys.stderr)
                return EXIT_INTERRUPTED
        try:
            world()
        except LaunchError as exc:
            print(f"kernel-lab: {exc}", file=sys.stderr)
            return EXIT_USAGE
        return _run_ranks(main, argv)

    return wrapper


def begin() -> None:
    """Every rank checked its arguments: go on together, or all exit with the first failure's code."""
    comm = world()
    if comm.size == 1 or _state.phase != "setup":
        return
    code, _ = _agree(0)
    if code:
        _state.phase = "failed"
        raise SystemExit(code)
    _state.phase = "running"


def end() -> None:
    """No more messages between ranks in this command (failures from here on are agreed, not aborted)."""
    if _state.phase == "running":
        _state.phase = "ended"


def check_interrupts(comm) -> None:
    """Between two steps over ranks: a signal that reached any rank stops every rank here, together."""
    if comm.size == 1:
        interrupts.check()
        return
    signum = int(comm.allreduce(np.array([interrupts.pending()], np.int64), "max")[0])
    if signum:
        end()  # every rank leaves now: nobody waits in a collective, no abort
        raise interrupts.exit_for(signum)


def _arguments_differ(comm, argv: list[str]) -> str | None:
    """None when every rank has rank 0's arguments; else rank 0's message naming the first rank that has
    others (empty on the other ranks)."""
    mine = np.frombuffer(json.dumps(argv).encode(), np.uint8)
    lengths = comm.allgather(np.array([mine.size], np.int64))[:, 0]
    every = comm.gatherv(mine)
    first = np.zeros(1, np.int64)  # the first rank with other arguments, 0 for none
    if comm.is_root:
        texts = [json.loads(part.tobytes()) for part in np.split(every, np.cumsum(lengths)[:-1])]
        first[0] = next((q for q in range(1, comm.size) if texts[q] != texts[0]), 0)
    q = int(comm.bcast(first)[0])
    if not q:
        return None
    if not comm.is_root:
        return ""
    return (
        f"rank {q} of {comm.size} was started with other arguments ({shlex.join(texts[q])}) than rank 0 "
        f"({shlex.join(texts[0])}): every rank must run the same command line"
    )


def _agree(code: int) -> tuple[int, int]:
    """(largest exit code over the ranks, lowest rank with a non-zero code or -1)."""
    comm = world()
    mine = np.array([code, -comm.rank if code else -comm.size], np.int64)
    largest, first = comm.allreduce(mine, "max")
    return int(largest), (-int(first) if first > -comm.size else -1)


def _run_ranks(main, argv) -> int:
    comm = world()
    differ = _arguments_differ(comm, list(sys.argv[1:] if argv is None else argv))
    if differ is not None:
        if differ:
            print(f"kernel-lab: {differ}", file=sys.stderr)
        return EXIT_USAGE
    _share_cores(comm)
    _state.phase = "setup"
    _state.real_stderr = sys.stderr
    if not comm.is_root:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (for the life of the process)
        _state.tail = _Tail()
        sys.stderr = _state.tail
    code = _call(main, argv)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    if _state.phase == "failed":  # a peer failed before begin(): already agreed
        return code
    if _state.phase == "running" and code:
        _report(comm, code)
        _wait_until_read(_state.real_stderr, sys.__stdout__)
        comm.abort(code)
        return code
    agreed, first = _agree(code)
    if agreed and first == comm.rank and not comm.is_root:
        _report(comm, code)
    return agreed


def _wait_until_read(*streams, limit_s: float = 2.0) -> None:
    """Wait (at most ``limit_s``) until the launcher has read what this rank wrote to the pipes or sockets
    behind ``streams``: MPI_Abort tears the job down at once, and a message still in a pipe to the launcher's
    stdio forwarder is lost with it (seen under load: a traceback cut after its first line)."""
    fds = []
    for stream in streams:
        try:
            fd = stream.fileno()
            kind = os.fstat(fd).st_mode
        except (AttributeError, OSError, ValueError):
            continue
        if stat.S_ISFIFO(kind) or stat.S_ISSOCK(kind):
            fds.append((fd, termios.FIONREAD if stat.S_ISFIFO(kind) else termios.TIOCOUTQ))
    deadline = time.monotonic() + limit_s
    while fds and time.monotonic() < deadline:
        try:
            fds = [(fd, op) for fd, op in fds if struct.unpack("i", fcntl.ioctl(fd, op, b"\0\0\0\0"))[0] > 0]
        except OSError:
            return
        time.sleep(0.005)


def _call(main, argv) -> int:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int) and exc.code is not None:
            print(exc.code, file=sys.stderr)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except BaseException:
        traceback.print_exc()
        code = 1
    return int(code or 0)


def _report(comm, code: int) -> None:
    """A failed rank's message on the real stderr (rank 0's went there already)."""
    if code in {128 + sig for sig in interrupts.SIGNALS}:  # stopped alone, between two of its own chunks
        print(
            f"kernel-lab: rank {comm.rank} of {comm.size} stopped by a signal (exit {code}); stopping every rank",
            file=_state.real_stderr,
            flush=True,
        )
        return
    if comm.is_root:
        print(
            f"kernel-lab: rank 0 of {comm.size} failed (exit {code}); stopping every rank",
            file=_state.real_stderr,
            flush=True,
        )
        return
    text = (_state.tail.text if _state.tail else "").rstrip() or "(no message)"
    print(
        f"kernel-lab: rank {comm.rank} of {comm.size} failed (exit {code}):\n{text}",
        file=_state.real_stderr,
        flush=True,
    )


def _share_cores(comm) -> None:
    """Ranks on one host share its cores: each rank's numba threads get an equal part."""
    from sim.cmdline.resources import cpu_threads

    try:
        import numba
    except ImportError:
        return
    share = max(1, cpu_threads() // max(1, comm.local_size))
    numba.set_num_threads(min(share, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]  # set at import
