"""What the scenes' replaceable stages (``sim/<scene>/user_stage.py``) share: the launch rule of one
thread per item, and a user's outputs against the CPU twin's, value by value, folded onto the scene's
items (built-in launches are timed by ``sim.gpu.measure.samples``).

A stage's output may hold several values per scene item (durbin: a system's coefficients) or one
(sdh: a bucket's count); ``Values`` says which item each value belongs to and how to name it, and
``comparison`` builds the ``Comparison`` the grader's table and the viewer's red items read (host
numpy: the sandbox hands outputs back as host arrays).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sim.gpu.cuda import grid_for
from sim.userkernel.adapter import Comparison, Worst

WORST = 10  # the worst values a comparison keeps


@dataclass(frozen=True)
class Values:
    """One output's values, flat: expected, got, which are wrong (by the stage's rule), the scene item
    each belongs to, a label for value k ("system 4 coefficient 7") and the output's name."""

    expected: np.ndarray
    got: np.ndarray
    wrong: np.ndarray
    item: np.ndarray
    label: Callable[[int], str]
    name: str


def one_per_item(count, block) -> tuple[tuple[int], tuple[int], int]:
    """The launch rule of one thread per item in 1D blocks: (grid, block, no dynamic shared memory)."""
    return (*grid_for(int(count), int(block)), 0)


def differences(expected: np.ndarray, got: np.ndarray) -> np.ndarray:
    """|got - expected| as float64: 0 where they are equal or both NaN (the same result), inf where only
    one is NaN or they are infinities apart."""
    e, g = np.asarray(expected, np.float64), np.asarray(got, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(g == e, 0.0, np.abs(g - e))
    diff[np.isnan(diff)] = np.inf
    diff[np.isnan(e) & np.isnan(g)] = 0.0
    return diff


def exact_wrong(expected: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Values that are not the same number (NaN against NaN is the same: both left it so)."""
    expected, got = np.asarray(expected), np.asarray(got)
    same = got == expected
    if np.issubdtype(got.dtype, np.floating):
        same |= np.isnan(got) & np.isnan(expected)
    return ~same


def comparison(values: list[Values], items: int, rule: str) -> Comparison:
    """The ``Comparison`` of ``values`` over a scene of ``items`` items: an item is marked when any of
    its values is wrong; the worst wrong values first (largest difference, then lowest index)."""
    mismatch = np.zeros(items, bool)
    max_abs = max_rel = 0.0
    candidates = []  # (-difference, output, value, Worst)
    for part, v in enumerate(values):
        diff = differences(v.expected, v.got)
        if diff.size:
            scale = np.abs(np.nan_to_num(np.asarray(v.expected, np.float64), nan=0.0))
            with np.errstate(over="ignore"):  # against an expected 0: inf, as relative errors go
                rel = diff / np.maximum(scale, np.finfo(np.float64).tiny)
            max_abs, max_rel = max(max_abs, float(diff.max())), max(max_rel, float(rel.max()))
        wrong = np.flatnonzero(v.wrong)
        mismatch[v.item[wrong]] = True
        for k in wrong[np.lexsort((wrong, -diff[wrong]))][:WORST]:
            candidates.append(
                (
                    -float(diff[k]),
                    part,
                    int(k),
                    Worst(int(v.item[k]), v.label(int(k)), float(v.expected[k]), float(v.got[k])),
                )
            )
    candidates.sort(key=lambda c: c[:3])
    return Comparison(mismatch, max_abs, max_rel, [c[3] for c in candidates[:WORST]], rule, list(values))


def item_rows(compared: Comparison, item: int) -> list[tuple[str, str, str, str]]:
    """For a scene item the comparison marked: (output, the user's values, the CPU twin's, difference) rows,
    one an output, the item's values found through ``Values.item`` (balls: the outputs are in sorted order)."""
    if not 0 <= item < compared.mismatch.shape[0] or not compared.mismatch[item]:
        return []
    rows = []
    for v in compared.values:
        at = np.flatnonzero(v.item == item)
        if at.size:
            have, want = np.asarray(v.got)[at], np.asarray(v.expected)[at]
            difference = np.subtract(have, want, dtype=np.float64)
            rows.append((v.name, _text(have), _text(want), _text(difference, "{:+.3g}")))
    return rows


def _text(values: np.ndarray, real: str = "{:.9g}") -> str:
    """Values as "1.5, 2, ...": reals in ``real``'s format, whole numbers as they are."""
    return ", ".join(real.format(v) if isinstance(v, float) else str(v) for v in values.reshape(-1).tolist())
