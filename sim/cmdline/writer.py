"""The one way kernel-lab writes an output file: atomically, never over what it must not replace.

    check_target(path, what, inputs=())       before any work: UsageError (exit 2) if it cannot be written
                                              or is one of the inputs
    with atomic_output(path, binary=False, what=...) as f: f.write(...)
    write_bytes(path, data, what) / write_text(path, text, what)
    OutputError                               writing failed (after the work): exit 1, previous file kept

Guarantees:
- Only a regular file is ever replaced. An existing directory, symbolic link (not followed), FIFO,
  socket or device node is refused, as are an empty path, a NUL byte, a name longer than the file
  system allows and a folder that does not exist or where no file can be created (a probe file is
  created and removed: this catches read-only mounts and /proc, even for root). An output that is one
  of the command's inputs (the same file under any name or link) is refused before the work.
- The content goes to a temporary file created exclusively (O_EXCL | O_NOFOLLOW, a random name,
  ``.<name>.<hex>.partial``) in the target's folder, is flushed and fsync'ed, and is renamed over
  the target only when the block completes: readers see the old file or the whole new one. On any
  error, Ctrl-C, SIGTERM or SIGHUP the temporary file is removed and the previous file is kept.
- While a command runs (``sim.cmdline.interrupts.stopping``), a stopping signal removes the temporary file
  at once, in its handler (a process killed before it unwinds leaves nothing), and the command ends
  at its next check without renaming anything into place.
- Outside a command, while a temporary file is open (main thread), SIGTERM and SIGHUP raise
  SystemExit(128 + signal), so the process exits 143 (SIGTERM) or 129 (SIGHUP) after cleaning up; a
  signal the process was told to ignore (``nohup``) or that has a handler of its own is left alone.
- A new file's permissions follow the umask (0666 & ~umask); a replaced file keeps its mode.
"""

from __future__ import annotations

import errno
import os
import secrets
import signal
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sim.cmdline import interrupts
from sim.cmdline.cli import UsageError
from sim.cmdline.reader import describe_mode as _describe

TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class OutputError(RuntimeError):
    """Writing an output failed after the work was done (disk full, ...): exit 1, previous file kept."""


def _name_max(folder: str) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def _temporary_name(path: str, folder: str) -> str:
    """``.<name>.<12 hex>.partial`` in the target's folder, the name shortened to fit the file system."""
    token = secrets.token_hex(6)
    room = _name_max(folder) - len(f"..{token}.partial")
    name = os.fsencode(os.path.basename(path))[:room].decode(errors="ignore")
    return os.path.join(folder, f".{name}.{token}.partial")


def _create_temporary(path: str, folder: str) -> tuple[int, str]:
    """An exclusively created temporary file (never an existing name, never through a link)."""
    for _ in range(16):
        temporary = _temporary_name(path, folder)
        try:
            return os.open(
                temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666
            ), temporary
        except FileExistsError:  # someone holds this name: draw another
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", folder)


def _existing(path: str, what: str) -> os.stat_result | None:
    """The target's lstat if it is a regular file, None if it does not exist; UsageError otherwise."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise UsageError(f"{what} {path!r}: a folder on the way is not a folder") from None
    except OSError as exc:
        raise UsageError(f"{what} {path!r}: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{what} {path!r} is {_describe(st.st_mode)}: not replaced")
    return st


def _input_at(path: str, inputs) -> str | None:
    """The input that ``path`` names (the same file, through links or another name), if any."""
    for source in map(os.fspath, inputs):
        try:
            if os.path.samefile(path, source):  # st_dev and st_ino: hard and symbolic links too
                return source
        except OSError:  # one of them does not exist (yet): compare where the names lead
            pass
        if os.path.realpath(path) == os.path.realpath(source):
            return source
    return None


def check_target(path, what: str = "output", inputs=()) -> None:
    """Refuse (UsageError, exit 2) a path that cannot be written as a regular file, or that is one of the
    command's ``inputs``, before any work."""
    path = os.fspath(path) if isinstance(path, os.PathLike) else path
    if not isinstance(path, str) or not path:
        raise UsageError(f"{what} path is empty")
    if "\0" in path:
        raise UsageError(f"{what} path {path!r} contains a NUL character")
    if path.endswith(os.sep) or os.path.basename(path) in (".", ".."):
        raise UsageError(f"{what} {path!r} names a folder, not a file")
    source = _input_at(path, inputs)
    if source is not None:
        raise UsageError(
            f"{what} {path!r} is the input {source!r}: writing it would replace the input; choose another file"
        )
    folder = os.path.dirname(os.path.abspath(path))
    name_bytes = len(os.fsencode(os.path.basename(path)))
    if os.path.isdir(folder) and name_bytes > _name_max(folder):
        raise UsageError(
            f"{what} {path!r}: the name is too long ({name_bytes} bytes, at most {_name_max(folder)} here)"
        )
    if len(os.fsencode(os.path.abspath(path))) >= 4096:
        raise UsageError(f"{what} {path!r}: the path is too long")
    st = _existing(path, what)
    if not os.path.isdir(folder):
        raise UsageError(f"{what} {path!r}: folder {folder!r} does not exist")
    if st is not None and not os.access(path, os.W_OK):
        raise UsageError(f"{what} {path!r} is not writable")
    try:  # the only sure test: create (and remove) a file where the temporary file will go
        fd, probe = _create_temporary(path, folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"{what} {path!r}: cannot create a file in {folder!r} ({exc.strerror})") from None


def _signal_exit(signum, frame):
    raise SystemExit(128 + signum)


@contextmanager
def _exit_cleanly_on_signals() -> Iterator[None]:
    """SIGTERM / SIGHUP raise SystemExit(128 + signal) in the main thread while the block runs, so that
    cleanup code runs; signals that are ignored or have their own handler keep it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    replaced = {}
    for sig in TERMINATING_SIGNALS:
        if signal.getsignal(sig) == signal.SIG_DFL:
            replaced[sig] = signal.signal(sig, _signal_exit)
    try:
        yield
    finally:
        for sig, previous in replaced.items():
            signal.signal(sig, previous)


def _with_reason(exc: OSError, fd: int) -> OSError:
    """``exc``, or for a short write that gave no reason (numpy's tofile: "65 requested and 3 written")
    the error one more byte at the end of the file meets: ENOSPC, EDQUOT, EFBIG or EIO in the system's words."""
    if exc.errno is not None:
        return exc
    try:
        os.pwrite(fd, b"\0", os.fstat(fd).st_size)
    except OSError as reason:
        return reason
    return exc


def _failed(path: str, what: str, exc: OSError) -> OutputError:
    return OutputError(f"cannot write {what} {path!r}: {exc.strerror or exc}; the previous file (if any) is kept")


@contextmanager
def atomic_output(path, binary: bool = False, what: str = "output") -> Iterator:
    """A file object for ``path``'s new content; renamed into place when the block succeeds.

    OutputError if the target cannot be written (call ``check_target`` before the work to get exit 2
    instead) or if writing fails; the temporary file is removed on every way out but success.
    """
    path = os.fspath(path) if isinstance(path, os.PathLike) else path
    try:
        check_target(path, what)
    except UsageError as exc:
        raise OutputError(str(exc)) from None
    folder = os.path.dirname(os.path.abspath(path))
    with _exit_cleanly_on_signals():
        try:
            fd, temporary = _create_temporary(path, folder)
        except OSError as exc:
            raise _failed(path, what, exc) from None
        try:
            try:
                previous = _existing(path, what)
                if previous is not None:
                    os.fchmod(fd, stat.S_IMODE(previous.st_mode))
                stream = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")
            except BaseException:
                os.close(fd)
                raise
            with interrupts.removed_on_signal(temporary):
                with stream:
                    try:
                        yield stream
                        stream.flush()
                        os.fsync(stream.fileno())
                    except OSError as exc:
                        raise _with_reason(exc, stream.fileno()) from None
                interrupts.check()  # a stopped command publishes nothing
                _existing(path, what)  # still a regular file or nothing: never rename over a device
                os.replace(temporary, path)
        except BaseException as exc:
            try:
                os.unlink(temporary)
            except FileNotFoundError:
                pass
            if interrupts.pending() and isinstance(exc, OSError):  # the handler removed the temporary file
                raise interrupts.exit_for(interrupts.pending()) from None
            if isinstance(exc, OSError):
                raise _failed(path, what, exc) from None
            if isinstance(exc, UsageError):
                raise OutputError(str(exc)) from None
            raise


def write_bytes(path, data: bytes, what: str = "output") -> None:
    with atomic_output(path, binary=True, what=what) as f:
        f.write(data)


def write_text(path, text: str, what: str = "output") -> None:
    with atomic_output(path, what=what) as f:
        f.write(text)


def make_folder(folder, what: str = "output") -> None:
    """Create ``folder`` (and its parents) to save ``what`` in; OutputError naming what is in the way."""
    try:
        os.makedirs(folder, exist_ok=True)
    except FileExistsError:
        raise OutputError(f"cannot save the {what} in {str(folder)!r}: it is a file, not a folder") from None
    except OSError as exc:
        raise OutputError(f"cannot create the folder {str(folder)!r} for the {what}: {exc.strerror or exc}") from None
