"""The course's file formats: the -o trajectory file, a streaming reader, and the 2020+ checker.

The reader goes through a file frame by frame in chunks of CHUNK_LINES particles, so checking two
files takes constant memory whatever their size. It accepts exactly the course's format and says
where anything else starts (file:line): the header ``n size``; then frames of n lines ``x y``
(finite numbers), each followed by one empty line; nothing after the last frame's empty line.
A path that is not a regular file (a FIFO, /dev/zero) is refused without reading it.
"""

from __future__ import annotations

import math
import os

import numpy as np

from sim.cmdline import interrupts
from sim.cmdline.cli import UsageError
from sim.cmdline.reader import open_input

CHUNK_LINES = 65536  # particles parsed at a time: 1 MB of coordinates
MAX_LINE = 4096  # bytes; a course line is about 20
MIN_PARTICLE_BYTES = 4  # "x y\n": the shortest particle line


def fmt(v: float) -> str:
    """C++ ostream's default formatting of a double (6 significant digits, like %g)."""
    return f"{v:g}"


class TrajectoryWriter:
    """First line ``n size``; then one frame per save: n lines ``x y`` and an empty line."""

    def __init__(self, stream, n: int, size: float):
        self.stream = stream
        stream.write(f"{n} {fmt(size)}\n")

    def frame(self, x: np.ndarray, y: np.ndarray) -> None:
        lines = [f"{a:g} {b:g}" for a, b in zip(x.tolist(), y.tolist(), strict=True)]
        self.stream.write("\n".join(lines) + "\n\n")


class FormatError(ValueError):
    """A trajectory file that is not in the course's -o format."""


class TrajectoryReader:
    """One trajectory file, read forwards: ``next_frame()``, then ``particles(k)`` until the frame's
    n particles are read, then ``end_frame()``. Every error is a FormatError naming file:line."""

    def __init__(self, path: str):
        self.path = path
        try:  # a FIFO would block, /dev/zero never ends: refused unread
            self.file = open_input(path, "input", buffering=1 << 20)  # closed by close()
        except UsageError as exc:
            raise FormatError(str(exc)) from None
        self.declared = os.fstat(self.file.fileno()).st_size  # what the file held when opened: reading more is an error
        self.taken = 0
        self.line = 0  # the number of the last line read
        self.pushed: bytes | None = None
        self.frames = 0  # complete frames read
        self.left = 0  # particles left in the current frame
        try:
            self.n, self.size = self._header()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> TrajectoryReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.file.close()

    def _error(self, message: str, line: int | None = None) -> FormatError:
        return FormatError(f"{self.path}:{self.line if line is None else line}: {message}")

    def _readline(self) -> bytes:
        """The next line (b"" at the end of the file), its newline kept."""
        if self.pushed is not None:
            line, self.pushed = self.pushed, None
            self.line += 1
            return line
        line = self.file.readline(MAX_LINE + 1)
        if not line:
            return line
        self.line += 1
        self.taken += len(line)
        if self.taken > self.declared:
            raise self._error(f"the file grew past its size when opened ({self.declared:,} bytes)")
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            raise self._error(f"line longer than {MAX_LINE} bytes")
        return line

    def _unread(self, line: bytes) -> None:
        self.pushed = line
        self.line -= 1

    def _header(self) -> tuple[int, float]:
        line = self._readline()
        try:
            n_text, size_text = line.split()
            n, size = int(n_text), float(size_text)
        except ValueError:
            raise self._error(f"expected 'n size', got {line.strip()[:60].decode(errors='replace')!r}", 1) from None
        if n <= 0:
            raise self._error(f"particle count must be positive, got {n}", 1)
        if not (math.isfinite(size) and size > 0):
            raise self._error(f"box size must be a positive number, got {size_text.decode(errors='replace')!r}", 1)
        if n * MIN_PARTICLE_BYTES > self.declared:
            raise self._error(
                f"declares {n:,} particles, but one frame of them needs at least "
                f"{n * MIN_PARTICLE_BYTES:,} bytes and the file has {self.declared:,}",
                1,
            )
        return n, size

    def next_frame(self) -> bool:
        """True if another frame follows; False at the end of the file (after the last frame's empty line)."""
        if self.left:
            raise self._error(f"frame {self.frames} is not finished")
        line = self._readline()
        if not line:
            return False
        if line.isspace():
            raise self._error("an extra empty line" + (f" after frame {self.frames - 1}" if self.frames else ""))
        self._unread(line)
        self.left = self.n
        return True

    def particles(self, k: int) -> np.ndarray:
        """The next ``k`` particles of the current frame, (k, 2) float64."""
        k = min(k, self.left)
        first = self.line + 1
        lines: list[bytes] = []
        for _ in range(k):
            line = self._readline()
            if not line or line.isspace():
                if lines and not _parses(lines):  # junk first, then the early end
                    raise self._error(*self._first_bad(lines, first))
                done = self.n - self.left + len(lines)
                where = "the file ends" if not line else "an empty line"
                raise self._error(f"frame {self.frames} ends after {done} of {self.n} particles ({where})")
            lines.append(line)
        try:
            xy = np.loadtxt(lines, dtype=np.float64, comments=None, ndmin=2)
        except ValueError:
            xy = None
        if xy is None or xy.shape != (k, 2):
            raise self._error(*self._first_bad(lines, first))
        if not np.isfinite(xy).all():
            row = int(np.flatnonzero(~np.isfinite(xy).all(axis=1))[0])
            raise self._error(
                f"frame {self.frames}: {lines[row].strip()[:40].decode(errors='replace')!r} is not a finite position",
                first + row,
            )
        self.left -= k
        return xy

    def _first_bad(self, lines: list[bytes], first: int) -> tuple[str, int]:
        """The message for the first line of ``lines`` that is not 'x y', and its line number."""
        for start in range(0, len(lines), 256):
            if _parses(lines[start : start + 256]):
                continue
            for row in range(start, min(start + 256, len(lines))):
                if not _parses(lines[row : row + 1]):
                    text = lines[row].strip()[:40].decode(errors="replace")
                    if row == 0 and self.left == self.n and self.frames:
                        return (
                            f"junk after the last frame ({self.frames - 1}): expected the end of the file or "
                            f"another frame, got {text!r}",
                            first,
                        )
                    what = "expected 'x y'" if len(lines[row].split()) != 2 else "not numbers"
                    return f"frame {self.frames}: {what}, got {text!r}", first + row
        return f"frame {self.frames}: unreadable", first

    def end_frame(self) -> None:
        """Read the empty line that closes a frame."""
        if self.left:
            raise self._error(f"frame {self.frames} is not finished")
        line = self._readline()
        if not line:
            raise self._error(f"the file ends without the empty line after frame {self.frames}")
        if not line.isspace():
            raise self._error(
                f"expected an empty line after frame {self.frames} ({self.n} particles), got "
                f"{line.strip()[:40].decode(errors='replace')!r}"
            )
        self.frames += 1


def _parses(lines: list[bytes]) -> bool:
    try:
        return np.loadtxt(lines, dtype=np.float64, comments=None, ndmin=2).shape == (len(lines), 2)
    except ValueError:
        return False


def _count(reader: TrajectoryReader) -> int:
    """Read (and check) a whole file from its first frame; the number of frames it holds."""
    return _rest(reader) if reader.next_frame() else reader.frames


def _rest(reader: TrajectoryReader) -> int:
    """From the start of a frame, read (and check) the rest of the file; the number of frames it holds."""
    more = True
    while more:
        interrupts.check()
        while reader.left:
            reader.particles(CHUNK_LINES)
        reader.end_frame()
        more = reader.next_frame()
    return reader.frames


def check(path_a: str, path_b: str) -> tuple[float, float, bool]:
    """The 2020+ checker: mean distance per frame; pass when mean(first 50) < 3e-7 and mean(all) < 0.025.

    Both files are streamed side by side in constant memory; FormatError if either is malformed or
    they differ in particle or frame count.
    """
    with TrajectoryReader(path_a) as a, TrajectoryReader(path_b) as b:
        if a.n != b.n:  # read both through first: a malformed file is reported as such
            frames_a, frames_b = _count(a), _count(b)
            raise FormatError(f"the files differ in shape: {a.n} particles x {frames_a} frames vs {b.n} x {frames_b}")
        early = overall = 0.0
        while True:
            more_a, more_b = a.next_frame(), b.next_frame()
            if more_a != more_b:
                frames_a = _rest(a) if more_a else a.frames
                frames_b = _rest(b) if more_b else b.frames
                raise FormatError(
                    f"the files differ in shape: {a.n} particles x {frames_a} frames vs {b.n} x {frames_b}"
                )
            if not more_a:
                break
            interrupts.check()
            total = 0.0
            while a.left:
                pa, pb = a.particles(CHUNK_LINES), b.particles(CHUNK_LINES)
                with np.errstate(over="ignore", invalid="ignore"):  # far-apart files: inf, a FAIL
                    total += float(np.sqrt(((pa - pb) ** 2).sum(axis=1)).sum())
            a.end_frame()
            b.end_frame()
            mean = total / a.n
            if a.frames <= 50:
                early += mean
            overall += mean
        if a.frames == 0:
            raise FormatError(f"{path_a}: no frames")
        early, overall = early / min(a.frames, 50), overall / a.frames
    return early, overall, early < 3e-7 and overall < 0.025
