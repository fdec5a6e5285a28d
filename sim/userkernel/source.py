"""The user's kernel file: read as text (never executed on the host), compiled with NVRTC like the
reference build (the same options and ``-lineinfo``), its messages turned into ``Diagnostic``s that
name ``file:line`` and show the offending line.

    source = load("my_step.cu", spec)            # UsageError with one line: missing, a folder, binary, huge
    compile_check(source)                        # [] when it compiles and defines the stage's entry kernel

The text handed to NVRTC starts with a ``#line`` directive naming the file as the user gave it, so
every message (here and in the sandbox's CuPy build) says ``my_step.cu(12): error: ...``. Compiling
needs no GPU: a machine without one still reports compile errors, as CI does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sim.cli import UsageError
from sim.contract import SceneSpec, UserStage
from sim.contract import load as load_object
from sim.cuda import headers_digest
from sim.reader import read_input
from sim.userkernel import signature

MAX_BYTES = 1 << 20  # a kernel file is a page or two; anything near this is not one
ARCH = "sm_90"  # what the check compiles for when not told: the product's GPUs
# NVRTC's message head: `my_step.cu(12): error: ...`, `... warning #177-D: ...`, `... catastrophic error: ...`
_HEAD = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<severity>catastrophic error|error|warning)"
                   r"(?: #[\w-]+)?: (?P<message>.*)$")


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
        """The file as the user gave it: what ``#line`` and every message name."""
        return str(self.path)

    def compiled_text(self) -> str:
        """The text NVRTC compiles: the file's own lines, numbered as in the file, the check of the entry's
        parameters against the stage's signature (``sim.userkernel.signature``), and a last line naming the
        shared headers' digest (a user's kernel may include them: CuPy's on-disk cache keys on this text,
        and a header edited since must not bring back the kernel compiled from the old one)."""
        quoted = self.name.replace("\\", "\\\\").replace('"', '\\"')
        return f'#line 1 "{quoted}"\n{self.text}\n{signature.check_text(self.stage)}\n// headers {headers_digest()}\n'


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
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"kernel file {str(path)!r} is not UTF-8 text (byte {exc.start}): not read") from None
    return UserSource(Path(path), text, spec.name, chosen)


def adapter(source: UserSource):
    """The stage's adapter (``sim.userkernel.adapter.StageAdapter``)."""
    return load_object(source.stage.adapter)()


def options(source: UserSource) -> tuple[str, ...]:
    """The reference build's NVRTC options and ``-lineinfo`` (compute-sanitizer and profilers name lines)."""
    return (*adapter(source).reference.all_options(), "-lineinfo")


def diagnostics(log: str, source: UserSource) -> list[Diagnostic]:
    """The messages of an NVRTC log (NVRTC's or CuPy's), each with the offending line of the user's file."""
    lines = source.text.splitlines()
    found, about_signature = [], []
    for raw in log.splitlines():
        match = _HEAD.match(raw.strip())
        if not match:
            continue
        number = int(match["line"])
        if match["file"] == signature.FILE:  # the appended check of the entry's parameters: about the user's kernel
            about_signature.append(match["message"])
            continue
        own = match["file"] == source.name and 1 <= number <= len(lines)
        severity = "warning" if match["severity"] == "warning" else "error"
        found.append(Diagnostic(match["file"], number, severity, match["message"].strip(),
                                lines[number - 1].strip() if own else ""))
    if about_signature:
        number = signature.entry_line(source.text, source.stage.entry)
        text = lines[number - 1].strip() if number <= len(lines) else ""
        found += [Diagnostic(source.name, number, "error", m, text)
                  for m in signature.messages(about_signature, source.stage)]
    return found


class CompileFailed(Exception):
    """The user's file does not compile (or lacks the entry kernel); ``diagnostics`` says where."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.severity == "error"] or diagnostics
        super().__init__(str(errors[0]).splitlines()[0] if errors else "the kernel did not compile")


def compiled(source: UserSource, arch: str = ARCH) -> list[Diagnostic]:
    """``compile_check``'s warnings when the file compiles and defines the entry; CompileFailed (with every
    diagnostic, warnings too) when it does not."""
    found = compile_check(source, arch)
    if any(d.severity == "error" for d in found):
        raise CompileFailed(found)
    return found


def _checked(result):
    from cuda.bindings import nvrtc

    err, *rest = result
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"NVRTC: {nvrtc.nvrtcGetErrorString(err)[1].decode()}")
    return rest[0] if len(rest) == 1 else rest


def compile_check(source: UserSource, arch: str = ARCH) -> list[Diagnostic]:
    """Compile the file with NVRTC (no GPU needed) for ``arch``: its errors and warnings, and an error
    when it compiles but does not define the stage's entry kernel (``extern "C"``, so its name is kept)."""
    from cuda.bindings import nvrtc

    program = _checked(nvrtc.nvrtcCreateProgram(source.compiled_text().encode(), source.name.encode(), 0, [], []))
    try:
        opts = [f"--gpu-architecture={arch}".encode(), *(o.encode() for o in options(source))]
        err, = nvrtc.nvrtcCompileProgram(program, len(opts), opts)
        log = bytearray(_checked(nvrtc.nvrtcGetProgramLogSize(program)))
        _checked(nvrtc.nvrtcGetProgramLog(program, log))
        found = diagnostics(log.decode(errors="replace"), source)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            if not any(d.severity == "error" for d in found):  # a log we could not read: say it whole
                found.append(Diagnostic(source.name, 1, "error", log.decode(errors="replace").strip(), ""))
            return found
        cubin = bytearray(_checked(nvrtc.nvrtcGetCUBINSize(program)))
        _checked(nvrtc.nvrtcGetCUBIN(program, cubin))
    finally:
        nvrtc.nvrtcDestroyProgram(program)
    entry = source.stage.entry
    if b"\0" + entry.encode() + b"\0" not in cubin:
        found.append(Diagnostic(source.name, 1, "error", signature.missing_entry(source.stage), ""))
    return found
