"""The one way kernel-lab opens a file it reads: a WAV, the settings, a preset, a checker's input.

    open_input(path, what)               a binary file object; UsageError (exit 2) before reading anything
    read_input(path, what, limit)        its whole content, refused when larger than ``limit`` bytes
    read_json(path, what, limit)         its content parsed as JSON; read_toml: as TOML (UsageError when it is
                                         not, or nests deeper than MAX_DEPTH)
    describe_mode(st_mode)               "a FIFO", "a directory", ...: what a path is when not a regular file

Only a regular file is read (links followed). A directory, FIFO, socket or device node is refused
unread: a FIFO would block the open or the read forever, /dev/zero never ends. The path is looked at
before it is opened (opening a device can have effects of its own), opened without blocking and
looked at again through the open descriptor, so a file swapped in between is caught too.

A parsed file nests at most MAX_DEPTH lists and tables: the parsers recurse (100,000 ``[`` would end in a
RecursionError) and so does the code that uses what they return (json.dumps, tomli_w, copies), while TOML's
dotted keys (``[a.a.a....]``) build deep tables without recursing at all. Both are refused here, in one line.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from collections.abc import Callable
from typing import BinaryIO

from sim.cmdline.cli import UsageError

MAX_DEPTH = 64  # nested lists and tables: the project's files use a handful


def describe_mode(mode: int) -> str:
    kinds = (
        (stat.S_ISLNK, "a symbolic link (not followed)"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((words for test, words in kinds if test(mode)), "not a regular file")


def _refuse_unless_regular(path: str, what: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise UsageError(f"{what} {path!r} is not a regular file ({describe_mode(mode)}): not read")


def open_input(path, what: str = "input", buffering: int = -1) -> BinaryIO:
    """``path`` opened for reading if it is a regular file; UsageError naming ``what`` otherwise."""
    path = os.fspath(path)
    try:
        _refuse_unless_regular(path, what, os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise UsageError(f"{what} {path!r} does not exist") from None
    except OSError as exc:
        raise UsageError(f"{what} {path!r}: cannot read ({exc.strerror or exc})") from None
    try:
        _refuse_unless_regular(path, what, os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return open(fd, "rb", buffering=buffering)


def size_text(nbytes: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} bytes"


def read_input(path, what: str, limit: int) -> bytes:
    """The content of a regular file of at most ``limit`` bytes (read no further: it may be growing)."""
    with open_input(path, what) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise UsageError(f"{what} {os.fspath(path)!r} is larger than {size_text(limit)} (the most it can be): not read")
    return data


def read_json(path, what: str, limit: int):
    """The JSON value in a regular file of at most ``limit`` bytes; UsageError naming the file otherwise."""
    return _parsed(path, what, limit, "JSON", json.loads)


def read_toml(path, what: str, limit: int) -> dict:
    """The TOML table in a regular UTF-8 file of at most ``limit`` bytes; UsageError naming the file otherwise."""
    return _parsed(path, what, limit, "valid TOML", lambda data: tomllib.loads(data.decode("utf-8")))


def _parsed(path, what: str, limit: int, kind: str, parse: Callable[[bytes], object]):
    data = read_input(path, what, limit)
    path, value, deep = os.fspath(path), None, False
    try:
        value = parse(data)
    except UnicodeDecodeError:
        raise UsageError(f"{what} {path!r} is not UTF-8 text") from None
    except RecursionError:
        deep = True  # too deep for the parser: said below
    except ValueError as exc:  # json.JSONDecodeError, tomllib.TOMLDecodeError
        raise UsageError(f"{what} {path!r} is not {kind} ({exc})") from None
    if deep or too_deep(value):
        raise UsageError(f"{what} {path!r} nests lists or tables more than {MAX_DEPTH} deep: not read")
    return value


def too_deep(value, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` holds lists or dicts nested more than ``limit`` deep (walked without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
