"""Standard output that cannot be written (closed: ``>&-``; full: ``> /dev/full``; a reader gone: ``| head``)
ends a command at main's edge with one line on stderr and exit 1, not a traceback or Python's "Exception
ignored" at shutdown.

    with stdout.guarded():      # main.py, around the command
        ...print(...)...        # an OSError writing stdout raises Unwritable (an OutputError)

Inside the block sys.stdout is a thin proxy: a failed write or flush raises ``Unwritable`` naming the
reason, and standard output is pointed at /dev/null so that the interpreter's last flush has nothing
left to fail on. The block ends with a flush, where a buffered write to a full device fails.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from sim.cmdline.writer import OutputError


class Unwritable(OutputError):
    """Standard output could not be written: exit 1."""


class _Guarded:
    def __init__(self, stream):
        self._stream = stream

    def _failed(self, reason: str) -> Unwritable:
        _silence(self._stream)
        self._stream = None
        return Unwritable(f"cannot write the output to standard output: {reason}")

    def write(self, text: str) -> int:
        if self._stream is None:
            raise self._failed("it is closed")
        try:
            return self._stream.write(text)
        except (OSError, ValueError) as exc:  # ValueError: a closed file object
            raise self._failed(getattr(exc, "strerror", None) or str(exc)) from None

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except (OSError, ValueError) as exc:
            raise self._failed(getattr(exc, "strerror", None) or str(exc)) from None

    def __getattr__(self, name):  # isatty, fileno, encoding...: the stream's own
        return getattr(self._stream, name)


def _silence(stream) -> None:
    """Point the stream's descriptor at /dev/null and drop what its buffer holds: the shutdown flush passes."""
    try:
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except (AttributeError, OSError, ValueError):
        pass


@contextmanager
def guarded() -> Iterator[None]:
    """sys.stdout raises Unwritable when it cannot be written, within the block and at its end."""
    previous = sys.stdout
    guard = sys.stdout = _Guarded(previous)
    try:
        yield
        guard.flush()
    finally:
        if sys.stdout is guard:
            sys.stdout = previous
