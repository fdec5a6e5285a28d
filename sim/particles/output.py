"""The course's file formats: the -o trajectory file, its reader, and the 2020+ checker."""

from __future__ import annotations

import numpy as np


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


def read_trajectory(path: str) -> tuple[int, float, np.ndarray]:
    """(n, size, frames (f, n, 2)); FormatError says what is wrong and where."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as exc:
        raise FormatError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise FormatError(f"{path}: not a text file") from None
    lines = text.split("\n")
    try:
        n_text, size_text = lines[0].split()
        n, size = int(n_text), float(size_text)
    except ValueError:
        raise FormatError(f"{path}:1: expected 'n size', got {lines[0][:60]!r}") from None
    if n <= 0:
        raise FormatError(f"{path}:1: particle count must be positive, got {n}")
    frames = []
    i = 1
    while i < len(lines) and lines[i].strip():
        block = lines[i:i + n]
        filled = next((k for k, ln in enumerate(block) if not ln.strip()), len(block))
        if filled < n:
            raise FormatError(f"{path}:{i + 1}: frame {len(frames)} ends after {filled} of {n} particles")
        try:
            frames.append(np.array([[float(v) for v in ln.split()] for ln in block], np.float64))
        except ValueError:
            raise FormatError(f"{path}: frame {len(frames)} near line {i + 1}: not numbers") from None
        if frames[-1].ndim != 2 or frames[-1].shape[1] != 2:
            raise FormatError(f"{path}: frame {len(frames)} near line {i + 1}: expected 'x y' per line")
        i += n
        if i < len(lines) and lines[i].strip():
            raise FormatError(f"{path}:{i + 1}: expected an empty line after frame {len(frames) - 1}")
        i += 1
    if not frames:
        raise FormatError(f"{path}: no frames")
    return n, size, np.stack(frames)


def check(path_a: str, path_b: str) -> tuple[float, float, bool]:
    """The 2020+ checker: mean distance per frame; pass when mean(first 50) < 3e-7 and mean(all) < 0.025."""
    n_a, _, a = read_trajectory(path_a)
    n_b, _, b = read_trajectory(path_b)
    if n_a != n_b or a.shape != b.shape:
        raise FormatError(f"the files differ in shape: {n_a} particles x {a.shape[0]} frames "
                          f"vs {n_b} x {b.shape[0]}")
    avg_dist = np.sqrt(((a - b) ** 2).sum(axis=2)).mean(axis=1)
    early, overall = float(avg_dist[:50].mean()), float(avg_dist.mean())
    return early, overall, early < 3e-7 and overall < 0.025
