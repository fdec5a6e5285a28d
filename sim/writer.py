"""The one way kernel-lab writes an output file: atomically, never over what it must not replace.

``atomic_output(path)`` checks the target before any work (``check_target``), writes into a
temporary file created exclusively in the target's folder (O_EXCL | O_NOFOLLOW, a unique name),
and renames it over the target only when the block completes; on any error or interrupt the
temporary file is removed and the previous file is kept.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from sim.cli import UsageError


class OutputError(RuntimeError):
    """Writing an output failed after the work was done (disk full, ...): exit 1, previous file kept."""


def check_target(path: str, what: str = "output") -> None:
    """Refuse (UsageError) a path that cannot be written as a regular file, before any work."""
    if not isinstance(path, str) or not path:
        raise UsageError(f"{what} path is empty")
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"{what} {path!r} is a directory")
    if os.path.lexists(path) and not os.path.isfile(path):
        raise UsageError(f"{what} {path!r} exists and is not a regular file: not replaced")
    if not os.path.isdir(folder):
        raise UsageError(f"{what} {path!r}: folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError(f"{what} {path!r} is not writable")


@contextmanager
def atomic_output(path: str, binary: bool = False, what: str = "output") -> Iterator:
    """A file object for ``path``'s new content; renamed into place when the block succeeds."""
    check_target(path, what)
    folder = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}.partial")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    try:
        with os.fdopen(fd, "wb" if binary else "w") as stream:
            yield stream
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def write_bytes(path: str, data: bytes, what: str = "output") -> None:
    with atomic_output(path, binary=True, what=what) as f:
        f.write(data)


def write_text(path: str, text: str, what: str = "output") -> None:
    with atomic_output(path, what=what) as f:
        f.write(text)
