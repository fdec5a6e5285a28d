"""compute-sanitizer's text report, read (``parse``) and placed in the user's file (``placed``).

Each report is a block of lines behind the tool's prefix (``=========``): a headline, then indented
lines that say where. The shapes read here (the Compute Sanitizer manual's, older releases' too):

    Invalid __global__ write of size 4 bytes                      memcheck: a memory access error
        at step+0x2d0 in my_step.cu:73                            (older: at 0x2d0 in /path/my_step.cu:73:step)
        by thread (1,4,0) in block (0,8,0)
        Address 0x7f3c5e006f64 is out of bounds
        and is 5 bytes after the nearest allocation at 0x7f3c5e000200 of size 28,000 bytes
        Device Frame:step+0x90 in my_step.cu:30                   a caller, with --show-backtrace device
    Error: Race reported between Write access at step+0x1f0 in my_step.cu:18
        and Read access at step+0x3a0 in my_step.cu:32 [1,344 hazards]        racecheck (analysis mode)
    Barrier error detected. Divergent thread(s) in block          synccheck
    Uninitialized __global__ memory read of size 4 bytes          initcheck
    Program hit CUDA_ERROR_LAUNCH_FAILED (error 719) ...          a CUDA API call that failed (a consequence)
    ERROR SUMMARY: 3 errors / RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 warning)

A location names the file as the ``#line`` directive did (``sim.gpu.nvrtc.line_name``), or only its base name
(the tool strips paths by default): both are the user's file when they match it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from sim.gpu.nvrtc import line_name
from sim.userkernel.source import Diagnostic, shown

_PREFIX = re.compile(r"^=+ ?")
_NUMBER = r"\d[\d,]*"
_SITE = re.compile(
    rf"(?:^|\s)in (?P<file>\S(?:.*?\S)?):(?P<line>\d+)(?::(?P<function>.+?))?"
    rf"(?:\s+\[(?P<hazards>{_NUMBER}) hazards?\])?\s*$"
)
_HAZARDS = re.compile(rf"\[(?P<hazards>{_NUMBER}) hazards?\]\s*$")
_ACCESS = re.compile(r"(?P<access>Read|Write) access at (?P<at>.*?)(?=\s+and (?:Read|Write) access at |$)")
_RACE = re.compile(r"^(?P<severity>error|warning|info): race reported between (?P<rest>.*)$", re.IGNORECASE)
_THREAD = re.compile(r"^by thread (?P<thread>\([\d, ]+\)) in block (?P<block>\([\d, ]+\))")
# "Access to 0x... is out of bounds" (CUDA 13's compute-sanitizer), "Address 0x... is ..." (older releases)
_ADDRESS = re.compile(r"^(?:Address|Access (?:to|at)) (?P<address>0x[0-9a-fA-F]+)(?: (?P<problem>.*))?$")
_NEAREST = re.compile(
    rf"^and is (?P<distance>{_NUMBER}) bytes? (?P<side>after|before) the nearest allocation at "
    rf"(?P<start>0x[0-9a-fA-F]+) of size (?P<size>{_NUMBER}) bytes?"
)
_SUMMARY = re.compile(
    rf"^(?:ERROR SUMMARY: (?P<errors>{_NUMBER}) errors?|RACECHECK SUMMARY: (?P<hazards>{_NUMBER}) "
    rf"hazards? displayed)"
)
_CONTINUED = re.compile(
    r"^(?:and |at |by thread |Address |Access (?:to|at) |Device Frame|Host Frame|"
    r"Saved host backtrace|Current Value|(?:Read|Write) Thread|Default timeout)"
)
_CATEGORIES = (
    (re.compile(r"^(?:Potential )?invalid __\w+__ ", re.IGNORECASE), "memory"),
    (re.compile(r"^Malloc/Free error", re.IGNORECASE), "memory"),
    (re.compile(r"^Uninitialized __\w+__ memory", re.IGNORECASE), "init"),
    (re.compile(r"^(?:Barrier error detected|Warpgroup MMA sequence error)", re.IGNORECASE), "sync"),
    (re.compile(r"^(?:error|warning): Potential \w+ hazard detected", re.IGNORECASE), "race"),
    (re.compile(r"^Program hit ", re.IGNORECASE), "api"),
)
TOOL_OF = {
    "memory": "memcheck",
    "init": "initcheck",
    "sync": "synccheck",
    "race": "racecheck",
    "api": "CUDA API",
    "device": "memcheck",
}


def _int(text: str) -> int:
    return int(text.replace(",", ""))


@dataclass(frozen=True)
class Site:
    """A place in the device code: the file as reported ("" when the build had no line information)."""

    file: str
    line: int
    access: str = ""  # "read" or "write": one side of a race
    hazards: int | None = None  # a race's hazards at this side


@dataclass(frozen=True)
class Nearest:
    """memcheck's "and is 5 bytes after the nearest allocation at 0x... of size 28,000 bytes"."""

    distance: int
    side: str  # "after" | "before"
    start: int
    size: int


@dataclass
class Finding:
    """One reported problem: ``category`` is "memory", "race", "sync", "init", "device" (a hardware exception)
    or "api" (a CUDA call that failed, most often because of one of the others)."""

    category: str
    severity: str  # "error" | "warning"
    headline: str  # the first line as reported
    sites: list[Site] = field(default_factory=list)  # where: the access, or a race's sides
    frames: list[Site] = field(default_factory=list)  # the device callers, innermost first
    thread: str = ""  # "(1,4,0)"
    block: str = ""
    address: int | None = None
    problem: str = ""  # "is out of bounds", "is misaligned", ...
    nearest: Nearest | None = None

    @property
    def in_kernel(self) -> bool:
        """A problem of the kernel's code, not a CUDA call failing after one."""
        return self.category != "api"


@dataclass
class Report:
    findings: list[Finding]
    summary: int | None  # the count the tool's summary line gives (None: no summary, the run did not finish)
    problems: list[str]  # the tool's own errors ("No attachable process found..."), one line each

    @property
    def hazards(self) -> list[Finding]:
        return [f for f in self.findings if f.in_kernel]


def _blocks(text: str) -> list[list[str]]:
    """The report's lines behind the prefix, grouped: a headline and the lines that continue it."""
    blocks: list[list[str]] = []
    for raw in text.splitlines():
        if not _PREFIX.match(raw):
            continue  # the application's own output, where it shares the stream
        line = _PREFIX.sub("", raw, count=1)
        body = line.strip()
        if not body:
            if blocks and blocks[-1]:
                blocks.append([])
            continue
        indented = line[:1].isspace()
        if blocks and blocks[-1] and (indented or _CONTINUED.match(body)):
            blocks[-1].append(body)
        else:
            blocks.append([body])
    return [b for b in blocks if b]


def _site(text: str, access: str = "") -> Site | None:
    match = _SITE.search(text)
    hazards = _HAZARDS.search(text)
    count = _int(hazards["hazards"]) if hazards else None
    if match is None:
        return Site("", 0, access, count) if access else None
    return Site(match["file"], int(match["line"]), access, count)


def _race(severity: str, lines: list[str]) -> Finding:
    finding = Finding("race", "warning" if severity.lower() != "error" else "error", lines[0])
    for line in lines:
        for access in _ACCESS.finditer(line):
            site = _site(access["at"], access["access"].lower())
            if site is not None:
                finding.sites.append(site)
    return finding


def _finding(lines: list[str]) -> Finding | None:
    head = lines[0]
    race = _RACE.match(head)
    if race:
        return _race(race["severity"], [race["rest"], *lines[1:]])
    category = next((name for pattern, name in _CATEGORIES if pattern.match(head)), None)
    located = any(line.startswith(("at ", "by thread")) for line in lines[1:])
    if category is None and not located:
        return None
    finding = Finding(category or "device", "error", head)
    for line in lines[1:]:
        if line.startswith("at "):
            site = _site(line)
            if site is not None:
                finding.sites.append(site)
        elif line.startswith("Device Frame"):
            site = _site(line)
            if site is not None:
                finding.frames.append(site)
        elif thread := _THREAD.match(line):
            finding.thread, finding.block = thread["thread"].replace(" ", ""), thread["block"].replace(" ", "")
        elif address := _ADDRESS.match(line):
            finding.address, finding.problem = int(address["address"], 16), (address["problem"] or "").strip()
        elif nearest := _NEAREST.match(line):
            finding.nearest = Nearest(
                _int(nearest["distance"]), nearest["side"], int(nearest["start"], 16), _int(nearest["size"])
            )
    return finding


def parse(text: str) -> Report:
    """Every finding of a compute-sanitizer text report, its summary count and the tool's own errors."""
    findings, problems, summary = [], [], None
    for lines in _blocks(text):
        head = lines[0]
        if head.startswith("COMPUTE-SANITIZER"):
            continue
        counted = _SUMMARY.match(head)
        if counted:
            summary = _int(counted["errors"] or counted["hazards"])
            continue
        finding = _finding(lines)
        if finding is not None:
            findings.append(finding)
        elif head.lower().startswith(("error", "internal")):
            problems.append(" ".join(lines))
    return Report(findings, summary, problems)


# --- placed in the user's file ------------------------------------------------------------------------
def is_users(file: str, source) -> bool:
    """``file`` (as the tool names it) is the user's: the ``#line`` name, that name made absolute, or (paths
    stripped) its base name."""
    if not file:
        return False
    alias = line_name(source.name)
    return (
        file == alias
        or os.path.normpath(file) == os.path.abspath(alias)
        or ("/" not in file and file == os.path.basename(alias))
    )


def _number(value: int) -> str:
    return f"{value:,}"


def buffer_text(finding: Finding, buffers: dict[str, tuple[int, int]]) -> str:
    """Where the address lies against the kernel's buffers (``name -> (device pointer, bytes)``): "5 bytes
    past the end of `tout` (28,000 bytes)", "element 5 of `tout`"; the tool's own words when none is known."""
    near = finding.nearest
    if near is not None:
        for name, (start, size) in buffers.items():
            if start == near.start:
                where = "past the end of" if near.side == "after" else "before the start of"
                return f"{_number(near.distance)} bytes {where} `{name}` ({_number(size)} bytes)"
        return (
            f"{_number(near.distance)} bytes {near.side} an allocation of {_number(near.size)} bytes at "
            f"{near.start:#x} (not one of the kernel's buffers)"
        )
    if finding.address is None or not buffers:
        return ""
    address = finding.address
    for name, (start, size) in buffers.items():
        if start <= address < start + size:
            return f"byte {_number(address - start)} of `{name}`"
    if finding.category != "memory":
        return ""
    # memcheck names no allocation near it: the nearest of the kernel's buffers (counted as memcheck does)
    distance, name, side, size = min(
        (address - (start + size) + 1, name, "past the end of", size)
        if address >= start + size
        else (start - address, name, "before the start of", size)
        for name, (start, size) in buffers.items()
    )
    return f"{_number(distance)} bytes {side} `{name}` ({_number(size)} bytes)"


def _message(finding: Finding, tool: str, buffers) -> str:
    head = finding.headline[0].lower() + finding.headline[1:]
    if finding.category in ("memory", "init") and finding.address is not None:
        who = f" by thread {finding.thread} in block {finding.block}" if finding.thread else ""
        problem = f" {finding.problem}" if finding.problem else ""
        where = buffer_text(finding, buffers) if "__global__" in finding.headline else ""
        return f"{tool}: {head}{who}: address {finding.address:#x}{problem}" + (f", {where}" if where else "")
    who = f"; thread {finding.thread} in block {finding.block}" if finding.thread else ""
    return f"{tool}: {head}{who}"


def _race_diagnostics(finding: Finding, source, lines: list[str]) -> list[Diagnostic]:
    sides = finding.sites
    if not sides:
        return []
    first, others = sides[0], sides[1:]
    hazards = sum(s.hazards or 0 for s in sides)
    count = f" ({_number(hazards)} hazard{'s' if hazards != 1 else ''})" if hazards else ""
    named = ", ".join(f"the {s.access} at line {s.line}" for s in others) or "another access"
    found = [
        _diagnostic(
            first,
            source,
            lines,
            finding.severity,
            f"racecheck: this {first.access or 'access'} races with {named}{count}: nothing orders "
            "them (a __syncthreads() between them, or __syncwarp() within a warp)",
        )
    ]
    for side in others:
        found.append(
            _diagnostic(
                side,
                source,
                lines,
                "note",
                f"racecheck: the {side.access or 'access'} racing with the {first.access} at line {first.line}",
            )
        )
    return found


def _diagnostic(site: Site, source, lines: list[str], severity: str, message: str) -> Diagnostic:
    own = is_users(site.file, source)
    text = lines[site.line - 1] if own and 1 <= site.line <= len(lines) else ""
    name = source.shown_name if own else (shown(site.file) or "(no line information)")
    return Diagnostic(name, site.line, severity, message, shown(text.strip()))


def placed(finding: Finding, source, buffers: dict[str, tuple[int, int]] | None = None) -> list[Diagnostic]:
    """The finding at its lines of ``source`` (a ``UserSource``), each with the line's text: a race at each
    side, an access at its line and its callers'; [] for one without a place (a failed CUDA call)."""
    lines = source.text.splitlines()
    buffers = buffers or {}
    if finding.category == "race":
        return _race_diagnostics(finding, source, lines)
    if not finding.sites:
        return []
    tool = TOOL_OF[finding.category]
    found = [_diagnostic(finding.sites[0], source, lines, finding.severity, _message(finding, tool, buffers))]
    found += [_diagnostic(frame, source, lines, "note", f"{tool}: called from here") for frame in finding.frames]
    return found


def described(finding: Finding, source, buffers=None) -> str:
    """The finding in text: its placed lines, or its headline where it has no place."""
    found = placed(finding, source, buffers)
    return "\n".join(map(str, found)) if found else f"{TOOL_OF[finding.category]}: {finding.headline}"
