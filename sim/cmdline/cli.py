"""What every command line of kernel-lab shares: the usage error, the one parser for counts,
numbers, lists and sizes (and how messages print a count), the look-ahead parser that finds a
command's scene, and the shape of a command a scene package contributes.

Each command's arguments are parsed once, at the edge (``main.py``, ``sim.cmdline.arguments``, a scene's
``cli.py``), into a frozen request dataclass (``parsed``); what runs the command takes that request.

Exit codes: 0 done; 1 the run happened and failed, or a sound request this machine cannot serve
(no GPU); 2 bad input, refused before any work; 3 (``check``, ``bench --kernel-file``) the user's
kernel compiled but there is no GPU here to run it; 130 interrupted.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from decimal import Decimal

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NO_GPU = 3
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad input found after argparse (paths, presets, combinations): exit 2 with the message."""


class Refused(UsageError, ValueError):
    """A value a scene does not take (a preset too large for the backend, a count out of range), said in one
    line: on the command line a usage error (exit 2), in the viewer the message line with no traceback. Still
    a ValueError for the callers that catch those."""


@dataclass(frozen=True)
class Command:
    """A subcommand a scene package adds to ``main.py`` (the course-compatible ones): ``add_arguments`` adds
    the arguments whose destinations are the fields of the frozen dataclass ``request``; ``run`` takes that
    request (``parsed``) and returns the exit code."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[..., int]
    description: str = ""
    request: type = field(kw_only=True)


def parsed(request: type, namespace, **computed):
    """The frozen ``request`` dataclass of a parsed command line: each field the argument of its name, or
    the value in ``computed`` (one worked out from the arguments while building the request)."""
    return request(
        **{f.name: computed[f.name] if f.name in computed else getattr(namespace, f.name) for f in fields(request)}
    )


_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}
_COUNT = re.compile(r"^\s*(\d+(?:_\d+)*(?:\.\d*)?(?:e\d+)?)\s*([kmg]?)\s*$", re.IGNORECASE)


def count(text: str, lo: int = 1, what: str = "count") -> int:
    """A whole number: ``1000``, ``1_000``, ``1e6``, ``10k``, ``2M``; at least ``lo``."""
    match = _COUNT.match(str(text))
    if not match:
        if re.match(r"^\s*-\s*\d", str(text)):
            raise argparse.ArgumentTypeError(f"{what} must be {_at_least(lo)}, got {str(text).strip()}")
        raise argparse.ArgumentTypeError(f"{what}: expected a whole number such as 1000, 1e6 or 10k, got {text!r}")
    value = float(match.group(1).replace("_", "")) * _SUFFIX[match.group(2).lower()]
    if not math.isfinite(value) or value != int(value):
        raise argparse.ArgumentTypeError(f"{what}: expected a whole number, got {text!r}")
    value = int(value)
    if value < lo:
        raise argparse.ArgumentTypeError(f"{what} must be {_at_least(lo)}, got {value}")
    return value


def _at_least(lo: int) -> str:
    return {0: "0 or more", 1: "positive"}.get(lo, f"at least {lo}")


def count_text(value: int) -> str:
    """A count as messages print it: ``12,345``, or past 15 digits compactly (``1e+300``), never 300 digits."""
    if abs(value) < 10**15:
        return f"{value:,}"
    try:
        return f"{float(value):.3g}"
    except OverflowError:  # a product of huge counts, past float's range
        mantissa, exponent = f"{Decimal(value):.2e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{exponent}"


def positive_int(text: str) -> int:
    return count(text, 1, "value")


def non_negative_int(text: str) -> int:
    return count(text, 0, "value")


def number(text: str, what: str = "value") -> float:
    """A finite real number (``0.5``, ``8.4e-5``): nan and inf are refused."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}: expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{what}: expected a finite number, got {text!r}")
    return value


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
    """A comma-separated list: ``"a, b"`` -> ``["a", "b"]``; an empty entry (``a,,b``, ``a,``) is refused."""
    values = [v.strip() for v in str(text).split(",")]
    if not any(values):
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
    if not all(values):
        raise argparse.ArgumentTypeError(f"empty entry in the comma-separated list {text!r}")
    return values


def counts(text: str, lo: int = 1, what: str = "count") -> list[int]:
    """A comma-separated list of counts: ``1000,1e5,10M``."""
    return [count(v, lo, what) for v in items(text)]


_SHAPE = re.compile(r"^\s*([^xX×]+?)\s*[xX×]\s*([^xX×]+?)\s*$")


def size(text: str, lo: int = 1, hi: int = 1 << 30, what: str = "size") -> tuple[int, int]:
    """``WxH``: two whole numbers in [lo, hi], each read like a count (``100kx32``)."""
    match = _SHAPE.match(str(text))
    if not match:
        raise argparse.ArgumentTypeError(f"{what} must look like WxH (e.g. 1280x800), got {text!r}")
    w, h = (count(side, 0, what) for side in match.groups())
    if not (lo <= w <= hi and lo <= h <= hi):
        raise argparse.ArgumentTypeError(f"{what} {count_text(w)}x{count_text(h)} out of range {lo}..{hi:,}")
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


class ProbeParser(argparse.ArgumentParser):
    """A parser for a look ahead: it reads where each value goes, not the values (a bad one is the real
    parse's to report), and neither prints nor exits (Mismatch instead)."""

    class Mismatch(Exception):
        pass

    def _get_value(self, action, arg_string):
        return arg_string

    def _check_value(self, action, value):
        pass

    def error(self, message):
        raise self.Mismatch(message)

    def exit(self, status=0, message=None):
        raise self.Mismatch(message)

    def print_help(self, file=None):
        pass
