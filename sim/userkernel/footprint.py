"""What the compiler made of a user's kernel, and how many of its blocks fit on an SM.

NVRTC with ``--ptxas-options=-v`` (``sim.userkernel.source.REPORT_OPTIONS``, the CPU check's compile
only) logs, per entry function::

    ptxas info    : Function properties for step
    ptxas         .     1024 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 32 registers, used 1 barriers, 1024 bytes cumulative stack size, 2048 bytes smem

``parse`` reads those lines into ``Footprint`` (registers a thread, static shared memory a block, the
local memory of the stack frame and the spills); ``occupancy`` is the theoretical occupancy at a block
and dynamic shared size on a target, from the SM's limits (``LIMITS`` by architecture, or the device's
properties when a GPU is there: ``limits_of``). No GPU is needed for any of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sim.gpu.cuda import ceil_div

WARP = 32


@dataclass(frozen=True)
class Footprint:
    """One entry function as ptxas built it."""

    registers: int  # a thread's
    static_shared: int  # bytes a block (``__shared__`` arrays)
    stack_frame: int  # bytes of local memory a thread (local arrays, spills)
    spill_stores: int  # bytes a thread stores to local memory for want of registers
    spill_loads: int
    barriers: int = 0

    @property
    def uses_local(self) -> bool:
        return bool(self.stack_frame or self.spill_stores or self.spill_loads)


_PROPERTIES = re.compile(r"ptxas info\s*: Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"ptxas info\s*: Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")
_COMPILING = re.compile(r"ptxas info\s*: Compiling entry function '([^']+)'")


def parse(log: str, entry: str) -> Footprint | None:
    """``entry``'s footprint from an NVRTC log with ptxas's ``-v`` lines (None when the log has none for it).
    ptxas names the function before its lines ("Compiling entry function 'step'", "Function properties for
    step"); the "Used N registers" line that follows belongs to it."""
    current, frame, found = None, (0, 0, 0), None
    for line in log.splitlines():
        named = _COMPILING.search(line) or _PROPERTIES.search(line)
        if named:
            if named[1] != current:
                frame = (0, 0, 0)
            current = named[1]
            continue
        sizes = _FRAME.search(line)
        if sizes and current == entry:
            stack, stores, loads = (int(v) for v in sizes.groups())
            frame = (stack, stores, loads)
            continue
        used = _USED.search(line)
        if used and current == entry:
            barriers, smem = _BARRIERS.search(line), _SMEM.search(line)
            found = Footprint(int(used[1]), int(smem[1]) if smem else 0, *frame, int(barriers[1]) if barriers else 0)
    return found


# --- occupancy ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SmLimits:
    """What one SM of an architecture holds (CUDA C++ Programming Guide, "Compute Capabilities", and the
    occupancy calculator's allocation rules)."""

    arch: str
    registers: int  # 32-bit registers an SM
    threads: int  # resident threads an SM
    blocks: int  # resident blocks an SM
    shared: int  # shared memory an SM, bytes (the carve-out at its largest)
    shared_per_block: int  # the most one block may use (dynamic above 48 KB needs the opt-in)
    register_unit: int = 256  # registers are allocated to a warp in units of this many
    shared_unit: int = 128  # shared memory is allocated to a block in units of this many bytes
    shared_reserved: int = 1024  # the system's shared memory a block holds (CC 8.0 on)
    max_registers: int = 255  # a thread's

    @property
    def warps(self) -> int:
        return self.threads // WARP


KB = 1024
LIMITS = {  # by target; sm_90 is what the check compiles for
    "sm_80": SmLimits("sm_80", 65536, 2048, 32, 164 * KB, 163 * KB),
    "sm_86": SmLimits("sm_86", 65536, 1536, 16, 100 * KB, 99 * KB),
    "sm_89": SmLimits("sm_89", 65536, 1536, 24, 100 * KB, 99 * KB),
    "sm_90": SmLimits("sm_90", 65536, 2048, 32, 228 * KB, 227 * KB),
}


def limits_of(arch: str, props: dict | None = None) -> SmLimits | None:
    """The SM's limits for ``arch`` ("sm_90"): the table's, with the device's own figures where ``props``
    (CuPy's ``getDeviceProperties``) gives them; None for an architecture the table lacks and no device."""
    base = LIMITS.get(arch)
    if not props:
        return base
    base = base or LIMITS["sm_90"]  # a newer target: its device's figures, the allocation units of Hopper
    return SmLimits(
        arch,
        int(props.get("regsPerMultiprocessor") or base.registers),
        int(props.get("maxThreadsPerMultiProcessor") or base.threads),
        int(props.get("maxBlocksPerMultiProcessor") or base.blocks),
        int(props.get("sharedMemPerMultiprocessor") or base.shared),
        int(props.get("sharedMemPerBlockOptin") or base.shared_per_block),
        base.register_unit,
        base.shared_unit,
        int(props.get("reservedSharedMemPerBlock", base.shared_reserved)),
        base.max_registers,
    )


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks and warps an SM holds at one block size, and what stops more."""

    threads: int  # a block's
    blocks: int  # resident blocks an SM (0: the block cannot run at all)
    warps: int  # resident warps an SM
    fraction: float  # of the SM's warps
    limiter: str  # "registers", "shared memory", "threads", "blocks"; or why the block cannot run
    shared: int  # bytes a block holds: static + dynamic + the system's reserve, rounded to the unit

    def text(self) -> str:
        if not self.blocks:
            return f"none: {self.limiter}"
        return (
            f"{self.fraction:.0%} ({self.blocks} block{'s' if self.blocks != 1 else ''} of {self.threads} "
            f"threads, {self.warps} warps an SM; limited by {self.limiter})"
        )


def occupancy(fp: Footprint, threads: int, dynamic_shared: int, limits: SmLimits) -> Occupancy:
    """The theoretical occupancy of ``threads``-thread blocks with ``dynamic_shared`` bytes each (the CUDA
    occupancy calculator's arithmetic): the fewest blocks the registers, the shared memory, the threads and
    the block slots allow."""
    warps_per_block = ceil_div(threads, WARP)
    shared = (
        ceil_div(fp.static_shared + dynamic_shared + limits.shared_reserved, limits.shared_unit) * limits.shared_unit
    )
    if fp.static_shared + dynamic_shared > limits.shared_per_block:
        return Occupancy(
            threads,
            0,
            0,
            0.0,
            f"{fp.static_shared + dynamic_shared:,} bytes of shared memory a block, past {limits.shared_per_block:,}",
            shared,
        )
    per_warp = ceil_div(fp.registers * WARP, limits.register_unit) * limits.register_unit
    if per_warp * warps_per_block > limits.registers:
        return Occupancy(
            threads,
            0,
            0,
            0.0,
            f"{fp.registers} registers a thread x {threads} threads is past the SM's {limits.registers:,}",
            shared,
        )
    caps = {
        "registers": limits.registers // per_warp // warps_per_block if per_warp else limits.blocks,
        "shared memory": limits.shared // shared,
        "threads": limits.warps // warps_per_block,
        "blocks": limits.blocks,
    }
    limiter = min(caps, key=lambda k: caps[k])  # the first of equals: registers before threads
    blocks = caps[limiter]
    warps = blocks * warps_per_block
    return Occupancy(threads, blocks, warps, warps / limits.warps, limiter, shared)


def threads_of(block) -> int:
    """A block's threads: an int, or a 2D/3D shape."""
    if isinstance(block, (tuple, list)):
        total = 1
        for side in block:
            total *= int(side)
        return total
    return int(block)


def lines(fp: Footprint, occ: Occupancy | None, dynamic_shared: int, arch: str) -> list[str]:
    """The "compiled:" block, one fact a line."""
    local = (
        f"local memory {fp.stack_frame:,} B stack frame a thread, {fp.spill_stores:,} B spill stores, "
        f"{fp.spill_loads:,} B spill loads"
    )
    if fp.uses_local:
        local += " (local memory lives in DRAM, cached: a local array or spills)"
    found = [
        f"registers {fp.registers} a thread",
        local,
        f"shared memory {fp.static_shared:,} B static + {dynamic_shared:,} B dynamic a block",
    ]
    if occ is not None:
        found.append(f"occupancy on {arch}: {occ.text()}")
    return found
