"""What every command line of kernel-lab shares: the usage error, the one parser for counts,
lists and sizes, and the shape of a command a scene package contributes.

Exit codes: 0 done; 1 the run happened and failed, or a sound request this machine cannot serve
(no GPU); 2 bad input, refused before any work; 130 interrupted.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad input found after argparse (paths, presets, combinations): exit 2 with the message."""


@dataclass(frozen=True)
class Command:
    """A subcommand a scene package adds to ``main.py`` (the course-compatible ones)."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    description: str = ""


_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}
_COUNT = re.compile(r"^\s*(\d+(?:\.\d*)?(?:e\d+)?)\s*([kmg]?)\s*$", re.IGNORECASE)


def count(text: str, lo: int = 1, what: str = "count") -> int:
    """A whole number: ``1000``, ``1e6``, ``10k``, ``2M``; at least ``lo``."""
    match = _COUNT.match(str(text))
    if not match:
        if re.match(r"^\s*-\d", str(text)):
            raise argparse.ArgumentTypeError(f"{what} must be positive, got {text.strip()}")
        raise argparse.ArgumentTypeError(f"{what}: expected a whole number such as 1000, 1e6 or 10k, got {text!r}")
    value = float(match.group(1)) * _SUFFIX[match.group(2).lower()]
    if not math.isfinite(value) or value != int(value):
        raise argparse.ArgumentTypeError(f"{what}: expected a whole number, got {text!r}")
    value = int(value)
    if value < lo:
        raise argparse.ArgumentTypeError(f"{what} must be {'positive' if lo == 1 else f'at least {lo}'}, got {value}")
    return value


def positive_int(text: str) -> int:
    return count(text, 1, "value")


def non_negative_int(text: str) -> int:
    return count(text, 0, "value")


SEED_LIMIT = 1 << 32  # the courses' generators (mt19937, srand48, srand) take a 32-bit seed


def seed(text: str) -> int:
    """A random seed: 0 .. 2^32 - 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed: expected a whole number, got {text!r}") from None
    if not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"seed must be 0..{SEED_LIMIT - 1} (a 32-bit seed), got {value}")
    return value


def items(text: str) -> list[str]:
    """A comma-separated list, blanks dropped: ``"a, b"`` -> ``["a", "b"]``."""
    values = [v.strip() for v in str(text).split(",") if v.strip()]
    if not values:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
    return values


def counts(text: str) -> list[int]:
    """A comma-separated list of counts: ``1000,1e5,10M``."""
    return [count(v) for v in items(text)]


def size(text: str, lo: int = 1, hi: int = 1 << 30, what: str = "size") -> tuple[int, int]:
    """``WxH`` as two whole numbers in [lo, hi]."""
    match = re.match(r"^\s*(\d+)\s*[xX×]\s*(\d+)\s*$", str(text))
    if not match:
        raise argparse.ArgumentTypeError(f"{what} must look like 1280x800, got {text!r}")
    w, h = int(match.group(1)), int(match.group(2))
    if not (lo <= w <= hi and lo <= h <= hi):
        raise argparse.ArgumentTypeError(f"{what} {w}x{h} out of range {lo}..{hi}")
    return w, h


def window_size(text: str) -> tuple[int, int]:
    """A window or picture size."""
    return size(text, 16, 16384, "--size")


def block(text: str) -> int | tuple[int, int]:
    """A CUDA block: threads (``256``) or a 2D shape (``32x8``)."""
    if re.search(r"[xX×]", str(text)):
        return size(text, 1, 1024, "block shape")
    return count(text, 1, "block size")


def blocks(text: str) -> list[int | tuple[int, int]]:
    return [block(v) for v in items(text)]


def block_text(value) -> str:
    """A CUDA block as messages and the panel show it: ``256`` or ``32x8`` (a tuple, or a list read
    back from the settings file)."""
    return "x".join(map(str, value)) if isinstance(value, (tuple, list)) else str(value)


def choice(value: str, known, what: str) -> str:
    """``value`` if it is one of ``known``, else a UsageError naming the choices."""
    if value not in known:
        raise UsageError(f"unknown {what} {value!r} (choose from {', '.join(map(str, known))})")
    return value


def choices(values: list[str], known, what: str) -> list[str]:
    """Each value checked; ``all`` expands to every known one."""
    if values == ["all"]:
        return list(known)
    return [choice(v, known, what) for v in values]


def load_command(path: str) -> Command:
    """A Command by dotted path ("sim.sdh.bench:BENCH")."""
    from sim.contract import load

    return load(path)
