"""NVRTC: every CUDA build of the product is compiled here, to a cubin for one architecture.

    out = compile(text, "sim/heat/stencil.cu", options, "sm_90")   # Output(binary=cubin or None, log=...)
    out.ok, out.binary, out.log
    arch_for("90") == "sm_90"; version() == "13.5"

The GPU builds (``sim.gpu.cubins``, loaded by ``sim.gpu.cuda.load_module``) and the CPU-side compile check
(``sim.userkernel.source``) both come through here, with the caller's options alone. CuPy's own NVRTC
path is not used: it appends ``-ftz=true`` after the caller's options, and NVRTC honours the last, so
every float32 subnormal would be flushed to zero on the GPU while the CPU twins (numpy, numba) keep it.
NVRTC's defaults (no FTZ, IEEE division and square root) are the CPU's float mode.

A compile runs in a child process (``python -P``, importing nothing of the product): NVRTC cannot be
interrupted or bounded inside the process that calls it. The child has ``limit_s`` seconds (wall) and
``MEMORY_CAP`` bytes of address space; the caller kills it past the limit, on Ctrl-C, SIGTERM or
SIGHUP (they reach the caller's Python code while it waits) and when ``stop`` (a threading.Event) is
set: ``CompileStopped`` says which. The child dies with its caller too (Linux), and its CPU time is
capped as well.
"""

from __future__ import annotations

import os
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

COMPILE_LIMIT_S = 60.0  # one compile; the biggest built-in takes under 10 s
MEMORY_CAP = 4 << 30  # the compiling process's address space; the biggest built-in peaks near 1 GiB
POLL_S = 0.05  # how often the waiting caller looks at its stop event


class Output(NamedTuple):
    """One NVRTC run: the cubin (or PTX, when asked) when it compiled, and NVRTC's log (warnings too)."""

    binary: bytes | None
    log: str

    @property
    def ok(self) -> bool:
        return self.binary is not None


class CompileStopped(RuntimeError):
    """The compile did not finish: over its time limit or memory cap, stopped by the caller, or the
    compiler crashed; the message is one line naming the source."""


def arch_for(compute_capability: str) -> str:
    """``sm_XY`` for a device's compute capability (CuPy's ``Device.compute_capability``, e.g. "90")."""
    return f"sm_{compute_capability}"


def version() -> str:
    """NVRTC's version, "major.minor" (a cubin cache keys on it)."""
    from cuda.bindings import nvrtc

    _, major, minor = nvrtc.nvrtcVersion()
    return f"{major}.{minor}"


def _checked(result):
    from cuda.bindings import nvrtc

    err, *rest = result
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"NVRTC: {nvrtc.nvrtcGetErrorString(err)[1].decode()}")
    return rest[0] if len(rest) == 1 else rest


def arguments(options, arch: str, ptx: bool = False) -> list[bytes]:
    """NVRTC's arguments: the architecture (``compute_XY`` for PTX), then the caller's options as given."""
    target = arch.replace("sm_", "compute_") if ptx else arch
    return [f"--gpu-architecture={target}".encode(), *(o.encode() for o in options)]


def run_here(text: str, name: str, options, arch: str, ptx: bool = False) -> Output:
    """NVRTC in this process (the child's work; tests compile in threads with it: NVRTC releases the GIL)."""
    from cuda.bindings import nvrtc

    program = _checked(nvrtc.nvrtcCreateProgram(text.encode(), name.encode(), 0, [], []))
    try:
        opts = arguments(options, arch, ptx)
        (err,) = nvrtc.nvrtcCompileProgram(program, len(opts), opts)
        log = bytearray(_checked(nvrtc.nvrtcGetProgramLogSize(program)))
        _checked(nvrtc.nvrtcGetProgramLog(program, log))
        log_text = log.rstrip(b"\0").decode(errors="replace")
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return Output(None, log_text or nvrtc.nvrtcGetErrorString(err)[1].decode())
        size, get = (
            (nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX) if ptx else (nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN)
        )
        binary = bytearray(_checked(size(program)))  # NVRTC writes in place
        _checked(get(program, binary))
        return Output(bytes(binary.rstrip(b"\0")) if ptx else bytes(binary), log_text)
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def compile(
    text: str,
    name: str,
    options,
    arch: str,
    *,
    ptx: bool = False,  # noqa: A001  NVRTC's verb
    limit_s: float | None = None,
    stop=None,
) -> Output:
    """``run_here`` in a child process, bounded (see the module's doc: ``limit_s`` defaults to
    COMPILE_LIMIT_S); CompileStopped when it does not finish."""
    limit_s = COMPILE_LIMIT_S if limit_s is None else limit_s
    with tempfile.TemporaryFile() as request:  # a file, not a pipe: the child reads it whole at its pace
        pickle.dump((text, name, tuple(options), arch, ptx, float(limit_s)), request)
        request.seek(0)
        child = subprocess.Popen(
            [sys.executable, "-P", "-c", _CHILD, __file__],
            stdin=request,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    deadline = time.monotonic() + limit_s
    try:
        while True:
            try:
                out, err = child.communicate(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                pass  # communicate keeps what it has read
            if stop is not None and stop.is_set():
                raise CompileStopped(f"the compile of {name} was stopped")
            if time.monotonic() > deadline:
                raise CompileStopped(
                    f"the compile of {name} did not finish within {limit_s:g} s: stopped "
                    "(a macro or template that expands without end, or an #include that "
                    "never ends?)"
                )
    finally:
        if child.returncode is None:  # stopped, or the caller's Ctrl-C / SIGTERM: the child goes too
            child.kill()
            child.wait()
    return _answer(child.returncode, out, err, name)


def _answer(code: int, out: bytes, err: bytes, name: str) -> Output:
    if code == 0:
        try:
            return Output(*pickle.loads(out))
        except Exception:  # noqa: BLE001  a child that wrote something else: said below
            pass
    if code in (-signal.SIGKILL, -signal.SIGXCPU):
        raise CompileStopped(f"the compile of {name} went over its time limit: stopped")
    said = (err.decode(errors="replace").strip().splitlines() or [""])[-1]
    if code in (-signal.SIGABRT, -signal.SIGSEGV) or "MemoryError" in said or "bad_alloc" in said:
        raise CompileStopped(
            f"the compile of {name} ran out of memory (capped at {MEMORY_CAP >> 30} GiB) or crashed (exit {code})"
        )
    raise CompileStopped(f"the compiler process for {name} failed (exit {code}): {said or 'no message'}")


# --- the child ------------------------------------------------------------------------------------------
_CHILD = "import runpy, sys; runpy.run_path(sys.argv[1])['serve']()"


def _die_with_parent() -> None:
    """Linux: SIGKILL when the process that started this one dies (a caller killed outright)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:
        os._exit(1)


def serve() -> None:
    """The child: one request on stdin, its Output on stdout. Ctrl-C at a terminal reaches the whole
    process group: the caller decides, and kills this process."""
    import resource

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    text, name, options, arch, ptx, limit_s = pickle.loads(sys.stdin.buffer.read())
    seconds = int(limit_s) + 5  # the caller stops it first; this holds if the caller cannot
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 5))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    out = run_here(text, name, options, arch, ptx)
    sys.stdout.buffer.write(pickle.dumps(tuple(out)))  # plain data: Output is not importable here
    sys.stdout.flush()


# --- names and ptxas's messages ---------------------------------------------------------------------------
def line_name(name: str) -> str:
    """The file name a ``#line`` directive can carry: NVRTC copies it unescaped into the PTX's ``.file``
    (with ``-lineinfo``), where a ``"``, a backslash or a control character breaks ptxas; those become ``_``.
    Messages name the real file: the caller maps this name back. (The program's own name, which NVRTC
    resolves ``#include "..."`` against, can be anything.)"""
    return "".join(c if c.isprintable() and c not in '"\\' else "_" for c in name)


_PTXAS = re.compile(
    r"^ptxas(?: application ptx input, line (?P<line>\d+);)? *(?P<severity>error|warning|fatal) *: "
    r"(?P<message>.*)$"
)
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"(.*?)"')
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")


class PtxasMessage(NamedTuple):
    file: str  # the source file as the PTX's .file names it ("" when the PTX says nothing)
    line: int  # its line (0 when unknown)
    severity: str  # "error" | "warning"
    message: str


def ptxas_messages(log: str, ptx: str = "") -> list[PtxasMessage]:
    """ptxas's errors and warnings in an NVRTC log, each at the source line of the PTX line it names (the
    nearest ``.loc`` before it, from ``-lineinfo``), or of the entry function it names; the closing
    "assembly aborted" line is left out when an error says more."""
    lines = ptx.splitlines()
    files = {m[1]: m[2] for m in map(_FILE.match, lines) if m}
    found = []
    for raw in log.splitlines():
        match = _PTXAS.match(raw.strip())
        if not match:
            continue
        at = int(match["line"]) if match["line"] else _entry_line(lines, match["message"])
        file, line = _loc_before(lines, at, files) if at else ("", 0)
        severity = "warning" if match["severity"] == "warning" else "error"
        found.append(PtxasMessage(file, line, severity, match["message"].strip()))
    if any(m.severity == "error" and not m.message.startswith("Ptx assembly aborted") for m in found):
        found = [m for m in found if not m.message.startswith("Ptx assembly aborted")]
    return found


def _entry_line(lines: list[str], message: str) -> int:
    """The PTX line just after ``.entry NAME`` for a message about ``'NAME'`` (0 when there is none)."""
    named = re.search(r"'([A-Za-z_]\w*)'", message)
    if named:
        for i, text in enumerate(lines):
            if re.match(rf"\s*(\.visible\s+)?\.entry\s+{named[1]}\b", text):
                later = next((j for j in range(i, len(lines)) if _LOC.match(lines[j])), None)
                return later + 1 if later is not None else 0
    return 0


def _loc_before(lines: list[str], at: int, files: dict[str, str]) -> tuple[str, int]:
    for text in reversed(lines[:at]):
        loc = _LOC.match(text)
        if loc and loc[1] in files:
            return files[loc[1]], int(loc[2])
    return "", 0
