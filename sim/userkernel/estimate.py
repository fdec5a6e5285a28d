"""What ``check`` will need, from its sizes and seeds, before it makes any input: ``sim.cmdline.resources``'s
estimate, refusal and notice, as every other command has.

Memory: the first seed's inputs of every size are made before anything runs and kept; a case adds a copy
of its inputs (sent to the sandbox), the CPU twin's outputs and the kernel's, and keeps its result (a flag
per item, the timings). The bytes of a size are measured on two small inputs of the stage (an input's
bytes grow linearly with its items: arrays of them, and a few fixed ones). Time: at least CASE_SECONDS a
case (the sandbox's launches and the built-ins'), its bytes made, moved and compared at HOST_BYTES_PER_S,
and the CPU twin's work at the scene's pace (``sim.cmdline.resources.step_work``: pairs grow as the square).
"""

from __future__ import annotations

import math

import numpy as np

from sim.cmdline import resources
from sim.cmdline.cli import count_text

CASE_SECONDS = 0.01  # the least a case costs: a sandbox round trip, the kernel's and the built-ins' launches
CASE_BYTES = 8 << 10  # a case's kept result besides its flag per item: timings, the worst items, the record
HOST_BYTES_PER_S = 1e8  # a case's bytes made, sent, compared: 0.1-0.3 GB/s on a 2-core machine


def _bytes(adapter, size: int) -> tuple[int, int]:
    """(input bytes, output bytes) of one case of ``size`` items."""
    inputs = adapter.inputs(size, 0)
    made = sum(int(getattr(value, "nbytes", 8)) for value in inputs.values())
    out = sum(np.dtype(o.dtype).itemsize * math.prod(o.shape) for o in adapter.outputs(inputs).values())
    return made, out


def _per_size(adapter):
    """size -> (input bytes, output bytes), affine in the size from two of the stage's small default sizes."""
    small = sorted(set(adapter.sizes()))
    lo, hi = small[len(small) // 2 - 1], small[len(small) // 2]
    (in_lo, out_lo), (in_hi, out_hi) = _bytes(adapter, lo), _bytes(adapter, hi)

    def at(size: int) -> tuple[float, float]:
        slope_in, slope_out = (in_hi - in_lo) / (hi - lo), (out_hi - out_lo) / (hi - lo)
        return max(in_lo + slope_in * (size - lo), 0.0), max(out_lo + slope_out * (size - lo), 0.0)

    return at


def check_estimate(spec, stage, adapter, sizes: list[int], seeds: int) -> resources.Estimate:
    """Memory and time of ``check`` on ``sizes`` x ``seeds`` seeds of ``stage``."""
    at = _per_size(adapter)
    pace = spec.pace[0] * (1 if spec.cpu_serial else resources.cpu_threads())
    held, peak, seconds = 0.0, 0.0, 0.0
    for size in sizes:
        made, out = at(size)
        held += made + seeds * (size + CASE_BYTES)  # the first inputs; each case's flags and record
        peak = max(peak, made + 2 * out)  # the case running: its inputs' copy, the twin's and the kernel's
        twin = resources.step_work(spec.step_work, float(size), 1) / pace  # float: huge counts stay finite
        case = CASE_SECONDS + (2 * made + 2 * out) / HOST_BYTES_PER_S + twin
        seconds += seeds * case
    shown = ", ".join(count_text(size) for size in sizes)
    what = (
        f"check {spec.name} {stage.name}: {len(sizes) * seeds:,} case{'s' if len(sizes) * seeds != 1 else ''} "
        f"(size{'s' if len(sizes) != 1 else ''} {shown} x {count_text(seeds)} seed{'s' if seeds != 1 else ''})"
    )
    return resources.Estimate(what, memory=int(min(held + peak, 1 << 80)), seconds=seconds)
