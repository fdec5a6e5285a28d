"""The ``#include``s of a user's kernel file, looked at before NVRTC opens them: NVRTC opens each one
itself, and a FIFO (or a device such as /dev/zero) would block or never end the compile. Each quoted or
angled name is looked for where NVRTC looks (beside the file, the shared headers' folder, the working
folder); a path there that exists and is not a regular file (links followed) is refused, naming the
include. Regular files found are read (up to the kernel file's size limit) and their own includes
looked at too. Names made by macros are not followed here: the compile's time limit covers those.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from sim.cmdline.cli import UsageError
from sim.cmdline.reader import describe_mode, read_input

_INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"\n]+)"|<([^>\n]+)>)', re.MULTILINE)
MAX_FILES = 256  # headers looked at for one kernel file


def _folders(source) -> list[Path]:
    from sim.gpu.cuda import INCLUDE_DIR

    return [Path(source.name).parent, INCLUDE_DIR, Path.cwd()]


def refused(source) -> list[tuple[int, str]]:
    """``(line, message)`` of each include of the user's file (``source.UserSource``) that names, directly
    or through a header it includes, something that is not a regular file."""
    from sim.userkernel.source import MAX_BYTES

    seen: set[Path] = set()
    folders, found = _folders(source), []
    todo = [(source.text, Path(source.name).parent, None)]  # (text, its folder, the user's line it came from)
    while todo and len(seen) < MAX_FILES:
        text, here, origin = todo.pop()
        for match in _INCLUDE.finditer(text):
            name = match[1] or match[2]
            line = origin or text.count("\n", 0, match.start()) + 1
            for folder in dict.fromkeys([here, *folders]):
                path = folder / name
                try:
                    mode = os.stat(path).st_mode
                except OSError:
                    continue
                if not stat.S_ISREG(mode):
                    found.append(
                        (line, f'#include "{name}" is {describe_mode(mode)} ({path}), not a header file: not compiled')
                    )
                elif path.resolve() not in seen:
                    seen.add(path.resolve())
                    try:  # checked again as it is opened: a file swapped for a FIFO in between is not read
                        todo.append((read_input(path, "header", MAX_BYTES).decode(errors="replace"), path.parent, line))
                    except UsageError:
                        pass  # too big, gone, swapped: NVRTC says what it makes of it
                break  # the first folder that has it is the one NVRTC takes
    return found
