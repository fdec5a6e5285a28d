"""What the compiler made of a user's kernel, for ``check``'s "compiled:" block, its JSON and the panel:
registers, shared and local memory (``sim.userkernel.footprint``), the dynamic shared memory of the
stage's launch, and the theoretical occupancy at the chosen block on the target; the PTX (``check
--ptx FILE``) and the SASS (``check --sass FILE``, through ``cuobjdump`` or ``nvdisasm``, which come
with the CUDA toolkit) written through ``sim.cmdline.writer``.

The target is the GPU's architecture and its own SM limits when one is here, else ``sm_90`` and the
table's (``footprint.LIMITS``): a machine without a GPU still says what the kernel costs an SM.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import NamedTuple

from sim.userkernel import footprint

SASS_TOOLS = (("cuobjdump", ("-sass",)), ("nvdisasm", ()))  # the first on PATH disassembles
SASS_MISSING = "no SASS: neither cuobjdump nor nvdisasm is on PATH (they come with the CUDA toolkit)"
SASS_LIMIT_S = 60.0


@dataclass(frozen=True)
class Target:
    arch: str  # "sm_90"
    limits: footprint.SmLimits | None
    where: str  # "this GPU (NVIDIA H200)" or "sm_90's limits (no GPU here)"


def target() -> Target:
    """The GPU's architecture and SM limits when a GPU is here, else sm_90 and the table's."""
    from sim.gpu.backend import gpu_status
    from sim.userkernel.source import ARCH

    status = gpu_status()
    if status.available:
        from sim.gpu.cuda import device_properties
        from sim.gpu.nvrtc import arch_for

        props = device_properties(0)
        arch = arch_for(f"{props['major']}{props['minor']}")
        return Target(arch, footprint.limits_of(arch, props), f"this GPU ({status.device_name})")
    return Target(ARCH, footprint.limits_of(ARCH), f"{ARCH}'s limits (no GPU here)")


def dynamic_shared(adapter, inputs, block) -> int:
    """The dynamic shared memory a block of the stage's launch gets (``StageAdapter.launch``)."""
    return int(adapter.launch(inputs, block)[2])


def occupancy(fp: footprint.Footprint | None, block, shared: int, tgt: Target) -> footprint.Occupancy | None:
    if fp is None or tgt.limits is None:
        return None
    return footprint.occupancy(fp, footprint.threads_of(block), shared, tgt.limits)


def lines(fp: footprint.Footprint | None, block, shared: int, tgt: Target) -> list[str]:
    """The "compiled:" block (nothing when ptxas said nothing of the entry)."""
    if fp is None:
        return []
    occ = occupancy(fp, block, shared, tgt)
    body = footprint.lines(fp, occ, shared, tgt.arch)
    if occ is not None:
        body[-1] += f", from {tgt.where}"
    return [f"compiled for {tgt.arch}:", *(f"  {line}" for line in body)]


def as_json(fp: footprint.Footprint | None, block, shared: int, tgt: Target) -> dict | None:
    if fp is None:
        return None
    occ = occupancy(fp, block, shared, tgt)
    return {
        "arch": tgt.arch,
        "registers": fp.registers,
        "static_shared": fp.static_shared,
        "dynamic_shared": shared,
        "stack_frame": fp.stack_frame,
        "spill_stores": fp.spill_stores,
        "spill_loads": fp.spill_loads,
        "barriers": fp.barriers,
        "occupancy": None
        if occ is None
        else {
            "fraction": occ.fraction,
            "blocks": occ.blocks,
            "warps": occ.warps,
            "limiter": occ.limiter,
            "limits": tgt.where,
        },
    }


class Report(NamedTuple):
    """What the compiler made, as ``check`` prints it and as its JSON holds it."""

    lines: list[str]
    json: dict | None


def report(src, checked, adapter, inputs, block, tgt: Target) -> Report:
    """The "compiled:" block of a build (``source.Checked``) for the stage's launch of ``inputs``."""
    shared = dynamic_shared(adapter, inputs, block)
    return Report(lines(checked.footprint, block, shared, tgt), as_json(checked.footprint, block, shared, tgt))


# --- PTX and SASS -------------------------------------------------------------------------------------------
def sass_tool() -> list[str] | None:
    """The disassembler's command line, less the cubin: the first of SASS_TOOLS on PATH, or None."""
    for name, options in SASS_TOOLS:
        found = shutil.which(name)
        if found:
            return [found, *options]
    return None


def sass(cubin: bytes, tool: list[str]) -> str:
    """The SASS of a cubin; RuntimeError with the tool's message when it fails."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        try:
            done = subprocess.run([*tool, f.name], capture_output=True, text=True, timeout=SASS_LIMIT_S)
        except (OSError, subprocess.SubprocessError) as exc:
            raise RuntimeError(f"{tool[0]}: {exc}") from None
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"{tool[0]} failed (exit {done.returncode}): {said}")
    return done.stdout


def write_listings(src, ptx_path: str | None, sass_path: str | None, arch: str) -> list[str]:
    """Write the PTX and the SASS where asked; a line each for what was written or why not (stderr)."""
    from sim.cmdline.writer import write_text
    from sim.userkernel import source

    said = []
    if ptx_path:
        write_text(ptx_path, source.ptx(src, arch), "PTX file")
        said.append(f"wrote the PTX for {arch} to {ptx_path}")
    if sass_path:
        tool = sass_tool()
        if tool is None:
            said.append(f"{SASS_MISSING}: {sass_path} not written")
        else:
            try:
                text = sass(source.cubin(src, arch), tool)
            except RuntimeError as exc:
                said.append(f"no SASS ({exc}): {sass_path} not written")
            else:
                write_text(sass_path, text, "SASS file")
                said.append(f"wrote the SASS for {arch} to {sass_path}")
    return said
