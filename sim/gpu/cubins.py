"""The cubins of GPU builds, kept on disk so that a second process loads instead of compiling again.

    path = cubin_file(text, name, options, "sm_90")   # compiled with sim.gpu.nvrtc when not cached
    BuildFailed(log)                                  # it does not compile: NVRTC's log

An entry is ``<key>.cubin`` in the user's cache folder (``platformdirs``), the key a SHA-256 of the text,
the program name, the options, the architecture and NVRTC's version (a cubin is never loaded for a text,
an option or a compiler it was not made by). Entries are written atomically (``sim.cmdline.writer``); one that is
not a whole ELF file (a crash mid-copy, a disk error) is compiled again and replaced, as is one the driver
refuses to load (``fresh=True``). Where the cache folder cannot be written, a folder of this process's
own (removed at exit) holds the cubins. The file name is what CuPy's ``RawModule(path=...)`` keys its
loaded modules on: one name, one content.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import shutil
import struct
import tempfile
from pathlib import Path

from sim.gpu import nvrtc


class BuildFailed(Exception):
    """The text does not compile; ``log`` is NVRTC's."""

    def __init__(self, log: str):
        super().__init__(log.strip() or "the kernel did not compile")
        self.log = log


def cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("kernel-lab", appauthor=False)) / "cubins"


@functools.cache
def _own_dir() -> Path:
    """This process's folder for cubins when the cache folder cannot be written."""
    folder = Path(tempfile.mkdtemp(prefix="kernel-lab-cubins-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def key(text: str, name: str, options, arch: str) -> str:
    digest = hashlib.sha256()
    for part in (text, name, "\0".join(options), arch, nvrtc.version()):
        digest.update(part.encode() + b"\0\1")
    return digest.hexdigest()


def whole_elf(data: bytes) -> bool:
    """``data`` is a 64-bit ELF file whose section headers and sections all lie inside it (a truncated or
    overwritten cubin is not)."""
    if len(data) < 64 or data[:5] != b"\x7fELF\x02":
        return False
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    if shentsize < 64 or shoff + shnum * shentsize > len(data) or shnum == 0:
        return False
    for i in range(shnum):
        (kind,) = struct.unpack_from("<I", data, shoff + i * shentsize + 4)
        offset, size = struct.unpack_from("<QQ", data, shoff + i * shentsize + 24)
        if kind != 8 and offset + size > len(data):  # 8: SHT_NOBITS, no bytes in the file
            return False
    return True


def _cached(path: Path) -> bool:
    try:
        return whole_elf(path.read_bytes())
    except OSError:
        return False


def cubin_file(text: str, name: str, options, arch: str, *, fresh: bool = False, stop=None) -> Path:
    """A file holding the cubin of ``text`` for ``arch``: the cached one, else compiled now (in a child
    process, bounded: ``nvrtc.CompileStopped``) and cached. ``fresh``: compile even if cached. BuildFailed
    when it does not compile."""
    from sim.cmdline.cli import UsageError
    from sim.cmdline.writer import OutputError, make_folder, write_bytes

    entry = f"{key(text, name, options, arch)}.cubin"
    for folder in (cache_dir(), _own_dir()):
        if not fresh and _cached(folder / entry):
            return folder / entry
    out = nvrtc.compile(text, name, options, arch, stop=stop)
    if out.binary is None:  # not out.ok
        raise BuildFailed(out.log)
    for folder in (cache_dir(), _own_dir()):
        try:
            make_folder(folder, "kernel cache")
            write_bytes(folder / entry, out.binary, "kernel cache")
            return folder / entry
        except (OutputError, UsageError):  # read-only, full: this process's own folder
            continue
    raise nvrtc.CompileStopped(f"no folder to keep the compiled {name} in")
