"""Stand-ins for the tests of a user's own kernel in the live scene (tests/test_user_live.py and
tests/test_user_viewer*.py): a heat scene that believes a GPU is there (the state stays on the host) and
hands a "step" stage its field, a "step" stage whose adapter steps the CPU twin, and a sandbox that runs
Python instead of the CUDA text it is given, each behaviour picked by a marker comment in that text.

The kernel texts are real CUDA: NVRTC compiles them where ``sim.userkernel.source`` checks them.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from sim.contract import UserStage
from sim.framework.user_stages import Values
from sim.heat import SPEC as HEAT
from sim.heat.kernels import simple
from sim.heat.scene import HeatScene
from sim.heat.stencil_cpu import HeatCpu
from sim.userkernel import sandbox
from sim.userkernel.adapter import Comparison, Output, Worst

GOOD = """// one heat step, cell by cell
extern "C" __global__ void step(const float* in, float* out, int ni, int nj, float tfac)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= ni || j >= nj) return;
    out[j * ni + i] = in[j * ni + i];
}
"""
WRONG = GOOD.replace("cell by cell", "cell by cell, WRONG AT CELL 7")  # compiles, one cell off
FAULTS = GOOD.replace("cell by cell", "cell by cell, FAULTS")
SLOW = GOOD.replace("cell by cell", "cell by cell, SLOW")
BROKEN = GOOD.replace("    int j = blockIdx.y", "    x = 1;\n    int j = blockIdx.y")  # line 5: x undefined
BROKEN_LINE = 5

STAGE = UserStage(
    name="step",
    summary="one heat step",
    entry="step",
    signature="void step(const float* in, float* out, int ni, int nj, float tfac)",
    params=(("in", "the field"), ("out", "the next field"), ("ni", "columns"), ("nj", "rows"), ("tfac", "factor")),
    launch="one thread a cell",
    compare="exact",
    template="sim/heat/stencil.cu",
    adapter="user_fakes:StepStage",
)
SPEC = dataclasses.replace(HEAT, user_stages=(STAGE,))


class PretendGpuHeat(HeatScene):
    """A small heat scene whose GPU kernels "run": the state stays on the host (no GPU needed)."""

    spec = SPEC

    def __init__(self, n: int = 64 * 48):
        super().__init__(preset="plate", n=n)

    @property
    def gpu_reason(self) -> str:
        return ""

    def gpu_kernels_run(self) -> bool:
        return True

    def user_stage_inputs(self, stage):
        return {"in": self.cpu.field.copy(), "tfac": np.float32(self.cpu.tfac)}

    def apply_user_stage(self, stage, inputs, outputs, comparison):
        self.cpu.field[...] = outputs["out"]
        self._changed()
        if comparison is not None:
            self.checks.record_user("CPU twin from the same input", comparison)


class StepStage:
    """heat step on the CPU twin, compared bit for bit (what the heat stage's adapter does, minus CUDA)."""

    item = "cell"
    reference = simple(False)
    builtin = ()

    def default_block(self):
        return (32, 8)

    def launch(self, inputs, block):
        nj, ni = inputs["in"].shape
        return (-(-ni // block[0]), -(-nj // block[1])), (*block, 1), 0

    def outputs(self, inputs):
        return {"out": Output(inputs["in"].shape, np.float32)}

    def expected(self, inputs):
        twin = HeatCpu(inputs["in"], float(inputs["tfac"]))
        twin.advance(1)
        return {"out": twin.field}

    def compare(self, inputs, expected, got):
        want, have = expected["out"].reshape(-1), got["out"].reshape(-1)
        mismatch = want.view(np.uint32) != have.view(np.uint32)
        diff = np.abs(have.astype(np.float64) - want)
        worst = [
            Worst(int(i), f"cell {i}", float(want[i]), float(have[i])) for i in np.argsort(-diff)[:3] if mismatch[i]
        ]
        rel = diff / np.maximum(np.abs(want), 1e-30)
        values = [Values(want, have, mismatch, np.arange(want.size), lambda i: f"cell {i}", "out")]
        return Comparison(mismatch, float(diff.max(initial=0.0)), float(rel.max(initial=0.0)), worst, values=values)


class FakeSandbox:
    """Runs the CPU twin for the text it is given: WRONG AT CELL 7 adds 1 there, FAULTS raises the
    sandbox's error, SLOW takes ``slow_s``. ``runs`` counts the launches it was asked for."""

    def __init__(self, slow_s: float = 0.0):
        self.slow_s = slow_s
        self.runs: list[str] = []
        self.timed_repeats: list[int] = []  # the timed launches asked for after the checked one, run by run
        self.closed = False

    def run(self, build, inputs, block, repeats=0, builtin=()):
        self.runs.append(build.text)
        self.timed_repeats.append(repeats)
        if "FAULTS" in build.text:
            raise sandbox.SandboxError("fault", "the kernel faulted: an illegal memory access")
        if "SLOW" in build.text:
            time.sleep(self.slow_s)
        out = StepStage().expected(inputs)["out"].copy()
        if "WRONG AT CELL 7" in build.text:
            out.reshape(-1)[7] += 1.0
        return sandbox.RunResult(outputs={"out": out}, ms=[0.25] * repeats, overflow=[], builtin_ms={}, checked_ms=0.25)

    def close(self):
        self.closed = True


def write(path: Path, text: str) -> Path:
    """Save ``text`` as an editor would, with a modification time the watcher cannot miss."""
    stamp = path.stat().st_mtime_ns + 10**9 if path.exists() else None
    path.write_text(text)
    if stamp is not None:
        import os

        os.utime(path, ns=(stamp, stamp))
    return path


def wait_for(predicate, seconds: float = 20.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()
