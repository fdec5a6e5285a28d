"""Before a command starts: will its arguments fit this machine, and how long will they take?

Every command (scenes and course commands alike) estimates its run from its arguments, then calls
``check``, which refuses what cannot fit and announces what will take long:

    from sim.cmdline import resources

    estimate = resources.Estimate(
        what="sdh: 3,000,000 atoms on the CPU",
        memory=48 * n,                                  # peak host bytes
        seconds=pairs / (3e8 * resources.cpu_threads()),  # expected wall time here
        gpu_memory=0,                                   # peak bytes on the CUDA device (``device``)
        disk=0, disk_path=None)                         # bytes an output file will take, and where
    resources.check(estimate)    # UsageError (exit 2) quoting the estimate if memory, GPU memory or
                                 # disk space is short or it runs past TIME_LIMIT_SECONDS; a notice on
                                 # stderr if it runs past NOTICE_SECONDS
    with resources.Progress("CPU histogram", total=pairs, unit="pairs", show=estimate.long) as progress:
        for chunk in chunks:     # each well under a second, so that Ctrl-C stops the run promptly
            ...
            progress.advance(len(chunk))

Limits: host memory is what the kernel reports available (MemAvailable, within a cgroup limit if
one is set), of which ``MEMORY_SHARE`` may be used; GPU memory is the device's free memory; disk
is the free space of the output's file system. Time: a run estimated past ``TIME_LIMIT_SECONDS`` (a
week) is refused, as one that could not finish; one past ``NOTICE_SECONDS`` prints how long it will
take, shows progress and stops on Ctrl-C. The paces behind the estimates are optimistic (measured on
a 2-core machine, or the fastest GPU kernel), so a refused run would take longer still.

A scene's run (``run``, ``bench``) is estimated from its spec (``scene_estimate``): its memory per
item, and its pace in units of work a second, a step costing the work its ``step_work`` says plus
at least ``STEP_SECONDS``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
from dataclasses import dataclass

from sim.cmdline import progress
from sim.cmdline.cli import UsageError, count_text

NOTICE_SECONDS = 10.0  # runs estimated longer than this say so and show progress
TIME_LIMIT_SECONDS = 7 * 86400.0  # runs estimated longer than a week are refused
STEP_SECONDS = 2e-6  # the least a step costs: Python, or a parallel loop's start, between two steps
MEMORY_SHARE = 0.9  # of the available memory a run may plan to use


@dataclass(frozen=True)
class Estimate:
    """What a run will need. ``what`` names the run in messages ("sdh: 10,000 atoms on the CPU")."""

    what: str
    memory: int = 0  # peak host memory, bytes
    seconds: float = 0.0  # expected wall time on this machine
    gpu_memory: int = 0  # peak memory on CUDA device ``device``, bytes
    disk: int = 0  # bytes the output file(s) will take
    disk_path: str | None = None  # the output file (its folder's file system is checked)
    device: int = 0

    @property
    def long(self) -> bool:
        """Long enough to announce and to show progress for."""
        return self.seconds >= NOTICE_SECONDS


def human_bytes(n: float) -> str:
    try:
        n = float(n)
    except OverflowError:  # past float's range: absurd counts multiplied (1e300 x 1e300)
        return f"{count_text(int(n) // 10**15)} PB"
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.3g} {unit}"
        n /= 1000
    return f"{n:.3g} PB"


def human_seconds(s: float) -> str:
    if not math.isfinite(s):
        return "forever"
    for limit, unit in ((60, "s"), (3600, "min"), (86400 * 2, "h"), (86400 * 365 * 2, "days")):
        if s < limit:
            scale = {"s": 1, "min": 60, "h": 3600, "days": 86400}[unit]
            return f"{s / scale:.2g} {unit}" if s / scale < 10 else f"{s / scale:.0f} {unit}"
    return f"{s / (86400 * 365):.3g} years"


def cpu_threads() -> int:
    """CPU cores this process may run on (what numba's parallel loops can use at once)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _cgroup_room() -> int | None:
    """Bytes left under a cgroup v2 memory limit, None without one."""
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit == "max":
            return None
        with open("/sys/fs/cgroup/memory.current") as f:
            return max(0, int(limit) - int(f.read().strip()))
    except (OSError, ValueError):
        return None


def available_memory() -> int:
    """Host memory a new allocation can get now without swapping: MemAvailable, within a cgroup limit."""
    available = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if available is None:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            available = 1 << 62  # unknown: do not refuse
    room = _cgroup_room()
    return available if room is None else min(available, room)


def gpu_free_memory(device: int = 0) -> int | None:
    """Free bytes on CUDA device ``device``; None when no GPU can be asked."""
    try:
        import cupy

        with cupy.cuda.Device(device):
            free, _ = cupy.cuda.runtime.memGetInfo()
        return int(free)
    except Exception:  # no CuPy, no device, no driver: the backend check reports that
        return None


def free_disk(path: str) -> int | None:
    """Free bytes on the file system that would hold ``path``."""
    try:
        st = os.statvfs(os.path.dirname(os.path.abspath(path)))
    except (OSError, ValueError):
        return None
    return st.f_bavail * st.f_frsize


def check(estimate: Estimate, stream=None) -> None:
    """Refuse (UsageError, exit 2) a run that cannot fit, quoting the estimate; announce a long one."""
    stream = sys.stderr if stream is None else stream
    room = int(available_memory() * MEMORY_SHARE)
    if estimate.memory > room:
        raise UsageError(
            f"{estimate.what} needs about {human_bytes(estimate.memory)} of memory; this machine has "
            f"{human_bytes(room)} to spare: use a smaller size"
        )
    if estimate.gpu_memory > 0:
        free = gpu_free_memory(estimate.device)
        if free is not None and estimate.gpu_memory > free:
            raise UsageError(
                f"{estimate.what} needs about {human_bytes(estimate.gpu_memory)} of GPU memory; device "
                f"{estimate.device} has {human_bytes(free)} free: use a smaller size"
            )
    if estimate.disk > 0 and estimate.disk_path:
        free = free_disk(estimate.disk_path)
        if free is not None and estimate.disk > free:
            raise UsageError(
                f"{estimate.what} writes about {human_bytes(estimate.disk)} to {estimate.disk_path!r}; "
                f"its file system has {human_bytes(free)} free"
            )
    if not estimate.seconds <= TIME_LIMIT_SECONDS:  # NaN too
        raise UsageError(
            f"{estimate.what} would take about {human_seconds(estimate.seconds)} on this machine, "
            f"past the {human_seconds(TIME_LIMIT_SECONDS)} a run may take: use a smaller size or "
            "fewer steps"
        )
    if estimate.long:
        shown = "progress below, " if progress.shown(stream) else ""
        print(
            f"{estimate.what}: about {human_seconds(estimate.seconds)} on this machine; {shown}Ctrl-C stops it",
            file=stream,
            flush=True,
        )


def check_in_turn(estimates: list[Estimate], what: str, stream=None) -> None:
    """``check`` for runs one after another (a benchmark's configurations): each must fit (a refusal
    names it), and all of them, ``what``, must finish within TIME_LIMIT_SECONDS."""
    for estimate in estimates:
        alone = estimate.seconds if estimate.seconds > TIME_LIMIT_SECONDS else 0.0  # the total is announced
        check(dataclasses.replace(estimate, seconds=alone), stream)
    if len(estimates) > 1:
        check(Estimate(what, seconds=sum(e.seconds for e in estimates)), stream)
    elif estimates:
        check(dataclasses.replace(estimates[0], memory=0, gpu_memory=0, disk=0), stream)


def step_work(kind: str, n: float, steps: int) -> float:
    """Units of work of ``steps`` steps of a scene of ``n`` items: each step touches every item
    ("items"), every pair ("pairs"), or a recursion's first n steps touch every item and later
    ones nothing ("recursion")."""
    if kind == "pairs":
        return float(steps) * (n * (n - 1) / 2)
    if kind == "recursion":
        return float(min(steps, n)) * n
    return float(steps) * n


def scene_estimate(spec, count: int | None, gpu: bool, steps: int = 0, preset: str = "") -> Estimate:
    """Memory and time of ``steps`` steps of scene ``spec`` with ``count`` items (None: ``preset``, of
    a fixed size) on the GPU or the CPU."""
    host, device = spec.bytes_per_item
    cpu_pace, gpu_pace = spec.pace
    pace = gpu_pace if gpu else cpu_pace * (1 if spec.cpu_serial else cpu_threads())
    seconds = steps * STEP_SECONDS + (step_work(spec.step_work, count, steps) / pace if count and pace else 0.0)
    size = f"{count_text(count)} {spec.words.unit}" if count else f"preset {preset or spec.start_preset}"
    what = f"{spec.name}: {size}" + (f" x {count_text(steps)} steps" if steps else "")
    return Estimate(
        f"{what} on the {'GPU' if gpu else 'CPU'}",
        memory=host * (count or 0),
        gpu_memory=device * (count or 0) if gpu else 0,
        seconds=seconds,
    )


# The progress bar of long runs: tqdm on a terminal, nothing otherwise or with --quiet.
Progress = progress.Progress
