"""What the grader's findings suggest: the classic mistakes a wrong kernel's pattern points to, in a line each.

``hints(cases, item, fma_off)`` reads the graded cases (``sim.userkernel.grader.Case``) and names, in order:
writes past the end (a missing bound check), items never written (the grid or an early return), mismatches
that change between two runs of the same inputs (a race), every difference within one unit in the last place
(a fused multiply-add where the stage builds without), and a kernel right at some sizes and wrong at others
(an index with the wrong extent or stride). A hint is a place to look, never a verdict: the table and the
worst items above it are the facts.
"""

from __future__ import annotations

import math

import numpy as np

BOUNDS = "writes past the end of a buffer: a bound check is missing (leave when the index is past the count)"
NEVER_WRITTEN = (
    "some {item}s were never written (they still hold the poison their buffer started with): "
    "does the grid cover every {item}? an early return?"
)
RACE = (
    "the mismatches change from run to run on the same inputs: a race (a shared-memory read before "
    "__syncthreads(), or a non-atomic update of a value other threads update too)"
)
FMA = (
    "every difference is within one unit in the last place: a fused multiply-add? this stage builds without "
    "FMA (--fmad=false), as its CPU twin rounds each product; fmaf or __fmaf_rn round once"
)
SIZES = (
    "right at {right} {item}s, wrong at {wrong}: an index uses the wrong extent or stride (columns for rows, "
    "a row's length for the stride), or the last partial block is mishandled"
)


def _eps(case) -> float:
    """The coarsest float epsilon among the case's outputs (float32's for a float32 field)."""
    floats = [np.finfo(a.dtype).eps for a in case.result.outputs.values() if np.issubdtype(a.dtype, np.floating)]
    return float(max(floats)) if floats else 0.0


def _never_written(case) -> bool:
    return any(math.isnan(w.got) and math.isfinite(w.expected) for w in case.comparison.worst)


def _within_one_ulp(case) -> bool:
    c = case.comparison
    return (
        bool(c.worst)
        and all(math.isfinite(w.got) and math.isfinite(w.expected) for w in c.worst)
        and c.max_rel <= _eps(case)
    )


def hints(cases: list, item: str, fma_off: bool = True) -> list[str]:
    """The hints the graded cases support, most telling first; [] when every case is correct."""
    ran = [c for c in cases if not c.error and c.result is not None]
    mismatched = [c for c in ran if c.comparison is not None and c.comparison.mismatches]
    found = []
    if any(c.result.overflow for c in ran):
        found.append(BOUNDS)
    if any(_never_written(c) for c in mismatched):
        found.append(NEVER_WRITTEN.format(item=item))
    if any(c.unstable for c in mismatched):
        found.append(RACE)
    if fma_off and mismatched and all(_within_one_ulp(c) for c in mismatched):
        found.append(FMA)
    wrong = sorted({c.size for c in mismatched})
    right = sorted({c.size for c in ran if c.size not in wrong and c.correct})
    if wrong and right and not any(_never_written(c) or _within_one_ulp(c) for c in mismatched):
        found.append(
            SIZES.format(right=", ".join(f"{s:,}" for s in right), wrong=", ".join(f"{s:,}" for s in wrong), item=item)
        )
    return found
