"""The user's kernel file: read as text (never executed on the host), compiled with NVRTC like the
reference build (the same options and ``-lineinfo``), its messages turned into ``Diagnostic``s that
name ``file:line`` and show the offending line.

    source = load("my_step.cu", spec)            # UsageError with one line: missing, a folder, binary, huge
    compile_check(source)                        # [] when it compiles and defines the stage's entry kernel

The text handed to NVRTC starts with a ``#line`` directive naming the file (``sim.gpu.nvrtc.line_name``: the
name as given, any character PTX cannot carry made ``_``), and every message is mapped back to the file
as the user gave it: ``my_step.cu:12: error: ...``, ptxas's too (an inline ``asm`` at its own line,
through the PTX's ``.loc``). Compiling needs no GPU: a machine without one still reports compile
errors, as CI does. It runs in a child process with a time limit and a memory cap (``sim.gpu.nvrtc``), and
an ``#include`` of something that is not a regular file (a FIFO would never end) is refused first.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from sim.cmdline.cli import UsageError
from sim.cmdline.reader import read_input
from sim.contract import SceneSpec, UserStage
from sim.contract import load as load_object
from sim.gpu import nvrtc
from sim.gpu.cuda import headers_digest
from sim.gpu.nvrtc import line_name, ptxas_messages
from sim.userkernel import includes, signature
from sim.userkernel.footprint import Footprint
from sim.userkernel.footprint import parse as parse_footprint

MAX_BYTES = 1 << 20  # a kernel file is a page or two; anything near this is not one
SHOWN_WIDTH = 160  # an offending line is shown up to this many characters
ARCH = "sm_90"  # what the check compiles for when not told: the product's GPUs
# ptxas's registers, shared and local memory a kernel uses, as lines in NVRTC's log (``sim.userkernel.footprint``):
# the CPU check's compile only. It changes no code, but the cubin records its options: the GPU's build keeps the
# reference build's options (and its cached cubins)
REPORT_OPTIONS = ("--ptxas-options=-v",)
# NVRTC's message head: `my_step.cu(12): error: ...`, `... warning #177-D: ...`, `... catastrophic error: ...`
_HEAD = re.compile(
    r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<severity>catastrophic error|error|warning)"
    r"(?: #[\w-]+)?: (?P<message>.*)$"
)


@dataclass(frozen=True)
class Diagnostic:
    """One NVRTC message about the user's file."""

    file: str
    line: int
    severity: str  # "error" | "warning"
    message: str
    text: str  # the offending source line, stripped ("" when the line is not in the file)

    def __str__(self) -> str:
        head = f"{self.file}:{self.line}: {self.severity}: {self.message}"
        return f"{head}\n    {self.text}" if self.text else head


def shown(text: str, width: int = SHOWN_WIDTH) -> str:
    """``text`` on one line of at most ``width`` characters (control characters escaped, the rest cut)."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class UserSource:
    """The user's file, read as text, and the stage it replaces."""

    path: Path
    text: str
    scene: str
    stage: UserStage

    @property
    def variant(self) -> str:
        """The variant name the viewer and bench show: the file's name."""
        return self.path.name

    @property
    def name(self) -> str:
        """The file as the user gave it: NVRTC's program name (``#include "..."`` is found beside it)."""
        return str(self.path)

    @property
    def shown_name(self) -> str:
        """The name every message shows (a newline in it shown as ``\\n``)."""
        return shown(self.name, 4096)

    def compiled_text(self) -> str:
        """The text NVRTC compiles: the file's own lines, numbered as in the file, the check of the entry's
        parameters against the stage's signature (``sim.userkernel.signature``), and a last line naming the
        shared headers' digest (a user's kernel may include them: the cubin cache keys on this text,
        and a header edited since must not bring back the kernel compiled from the old one)."""
        return (
            f'#line 1 "{line_name(self.name)}"\n{self.text}\n{signature.check_text(self.stage)}\n'
            f"// headers {headers_digest()}\n"
        )


def load(path, spec: SceneSpec, stage: str | None = None) -> UserSource:
    """The kernel file at ``path`` for ``spec``'s stage ``stage`` (its first when None); UsageError with a
    one-line message for a scene without such a stage, a missing file, a folder, a binary or a huge file."""
    if not spec.user_stages:
        raise UsageError(f"the {spec.name} scene has no stage your own kernel can replace")
    try:
        chosen = spec.user_stage(stage)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    data = read_input(path, "kernel file", MAX_BYTES)
    if b"\0" in data:
        raise UsageError(f"kernel file {str(path)!r} is not a text file (it holds NUL bytes): not read")
    try:
        text = data.decode("utf-8-sig")  # an editor's byte-order mark is not source
    except UnicodeDecodeError as exc:
        raise UsageError(f"kernel file {str(path)!r} is not UTF-8 text (byte {exc.start}): not read") from None
    return UserSource(Path(path), text, spec.name, chosen)


def adapter(source: UserSource):
    """The stage's adapter (``sim.userkernel.adapter.StageAdapter``)."""
    return load_object(source.stage.adapter)()


def options(source: UserSource) -> tuple[str, ...]:
    """The reference build's NVRTC options and ``-lineinfo`` (compute-sanitizer and profilers name lines)."""
    return (*adapter(source).reference.all_options(), "-lineinfo")


def _is_own(file: str, source: UserSource) -> bool:
    """``file`` (as NVRTC or the PTX names it: the ``#line`` name, made absolute in the PTX) is the user's."""
    alias = line_name(source.name)
    return file == alias or os.path.normpath(file) == os.path.abspath(alias)


def diagnostics(log: str, source: UserSource, ptx: str = "") -> list[Diagnostic]:
    """The messages of an NVRTC log, each with the offending line of the user's file; ptxas's at the line
    ``ptx`` (the same build's PTX, with ``-lineinfo``) places them, their file's first line without it."""
    lines = source.text.splitlines()
    found, about_signature = [], []

    def add(file: str, number: int, severity: str, message: str) -> None:
        own = _is_own(file, source) or not file
        text = lines[number - 1] if own and 1 <= number <= len(lines) else ""
        found.append(
            Diagnostic(
                source.shown_name if own else shown(file),
                max(number, 1),
                severity,
                shown(message.strip(), 4 * SHOWN_WIDTH),
                shown(text.strip()),
            )
        )

    for raw in log.splitlines():
        match = _HEAD.match(raw.strip())
        if match and match["file"] == signature.FILE:  # the appended check of the entry's parameters
            about_signature.append(match["message"])
        elif match:
            add(
                match["file"],
                int(match["line"]),
                "warning" if match["severity"] == "warning" else "error",
                match["message"],
            )
    for message in ptxas_messages(log, ptx):
        add(message.file, message.line, message.severity, f"ptxas: {message.message}")
    if about_signature:  # about the user's kernel: at the line that declares it
        number = signature.entry_line(source.text, source.stage.entry)
        for text in signature.messages(about_signature, source.stage):
            add(source.name, number, "error", text)
    return found


class CompileFailed(Exception):
    """The user's file does not compile (or lacks the entry kernel); ``diagnostics`` says where."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.severity == "error"] or diagnostics
        super().__init__(str(errors[0]).splitlines()[0] if errors else "the kernel did not compile")


@dataclass(frozen=True)
class Checked:
    """One compile check: NVRTC's messages, and what ptxas made of the entry kernel (None when it did not
    compile or the log does not say)."""

    diagnostics: list[Diagnostic]
    footprint: Footprint | None = None
    arch: str = ARCH

    @property
    def compiles(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)


def compiled(source: UserSource, arch: str = ARCH) -> list[Diagnostic]:
    """``compile_check``'s warnings when the file compiles and defines the entry; CompileFailed (with every
    diagnostic, warnings too) when it does not."""
    return compiled_build(source, arch).diagnostics


def compiled_build(source: UserSource, arch: str = ARCH) -> Checked:
    """``check_build`` when the file compiles and defines the entry; CompileFailed when it does not."""
    checked = check_build(source, arch)
    if not checked.compiles:
        raise CompileFailed(checked.diagnostics)
    return checked


def failed_build(log: str, source: UserSource, arch: str = ARCH, stop=None) -> list[Diagnostic]:
    """The diagnostics of a build that did not compile (``log``: NVRTC's), at least one error; ptxas's errors
    need the PTX for their lines, compiled again (the front end passed) only then."""
    ptx = ""
    if ptxas_messages(log):
        try:
            out = nvrtc.compile(source.compiled_text(), source.name, options(source), arch, ptx=True, stop=stop)
            ptx = out.binary.decode(errors="replace") if out.binary is not None else ""
        except nvrtc.CompileStopped:
            pass
    found = diagnostics(log, source, ptx)
    if not any(d.severity == "error" for d in found):  # a log we could not read: its first line that is no warning
        said = [
            ln.strip()
            for ln in log.splitlines()
            if ln.strip() and "warning" not in ln.lower() and not ln.startswith(("ptxas info", "ptxas  "))
        ]  # ptxas's -v report is no reason
        found.append(Diagnostic(source.shown_name, 1, "error", shown(said[0] if said else "did not compile"), ""))
    return found


def compile_check(source: UserSource, arch: str = ARCH, stop=None) -> list[Diagnostic]:
    """Compile the file with NVRTC (no GPU needed) for ``arch``: its errors and warnings, and an error
    when it compiles but does not define the stage's entry kernel (``extern "C"``, so its name is kept).
    The compile is bounded (``sim.gpu.nvrtc``: a limit it goes over is an error at line 1); ``stop``, a
    threading.Event, ends it early (``nvrtc.CompileStopped``)."""
    return check_build(source, arch, stop).diagnostics


def check_build(source: UserSource, arch: str = ARCH, stop=None) -> Checked:
    """``compile_check``'s messages and, when it compiles, the entry's registers, shared and local memory
    (ptxas's report, ``REPORT_OPTIONS``)."""
    lines = source.text.splitlines()
    refused = [
        Diagnostic(source.shown_name, number, "error", message, shown(lines[number - 1].strip()))
        for number, message in includes.refused(source)
    ]
    if refused:
        return Checked(refused, arch=arch)
    try:
        out = nvrtc.compile(source.compiled_text(), source.name, (*options(source), *REPORT_OPTIONS), arch, stop=stop)
    except nvrtc.CompileStopped as exc:
        if stop is not None and stop.is_set():
            raise
        return Checked([Diagnostic(source.shown_name, 1, "error", str(exc), "")], arch=arch)
    if out.binary is None:  # not out.ok
        return Checked(failed_build(out.log, source, arch, stop), arch=arch)
    found = diagnostics(out.log, source)
    entry = source.stage.entry
    if b"\0" + entry.encode() + b"\0" not in out.binary:
        found.append(Diagnostic(source.shown_name, 1, "error", signature.missing_entry(source.stage), ""))
        return Checked(found, arch=arch)
    return Checked(found, parse_footprint(out.log, entry), arch)


def ptx(source: UserSource, arch: str = ARCH) -> str:
    """The PTX NVRTC makes of the file for ``arch`` (the reference build's options); CompileFailed when it
    does not compile."""
    try:
        out = nvrtc.compile(source.compiled_text(), source.name, options(source), arch, ptx=True)
    except nvrtc.CompileStopped as exc:
        raise CompileFailed([Diagnostic(source.shown_name, 1, "error", str(exc), "")]) from None
    if out.binary is None:  # not out.ok
        raise CompileFailed(failed_build(out.log, source, arch))
    return out.binary.decode(errors="replace")


def cubin(source: UserSource, arch: str = ARCH) -> bytes:
    """The cubin the GPU's build makes of the file for ``arch`` (for a disassembler); CompileFailed."""
    try:
        out = nvrtc.compile(source.compiled_text(), source.name, options(source), arch)
    except nvrtc.CompileStopped as exc:
        raise CompileFailed([Diagnostic(source.shown_name, 1, "error", str(exc), "")]) from None
    if out.binary is None:  # not out.ok
        raise CompileFailed(failed_build(out.log, source, arch))
    return out.binary
