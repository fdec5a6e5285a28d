"""The headless grader: a user's kernel on fresh random inputs, each compared with the CPU twin and timed.

``grade`` runs every size x seed through the sandbox (one checked launch on guarded outputs, then
timed repeats after a warm-up, the built-in variants on the same inputs), ``table`` and ``details``
print what it found, ``record`` is the JSON. ``check`` exits 0 when every case is correct, 1 when any
is wrong (a mismatch, a write out of bounds, a fault, a time-out), 2 for bad input or a compile
error, 3 when the kernel compiled but there is no GPU to run it on (``sim.cmdline.cli``'s exit codes).
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from sim.cmdline import interrupts
from sim.userkernel.adapter import Comparison
from sim.userkernel.sandbox import RunResult, SandboxError


@dataclass
class Case:
    """One size and seed: what the kernel computed against the CPU twin, or why it could not finish."""

    size: int
    seed: int
    comparison: Comparison | None = None
    result: RunResult | None = None
    error: str = ""  # a fault or a time-out, in one line
    unstable: bool = False  # wrong, and a second run of the same inputs was wrong at other items
    speed: dict = field(default_factory=dict)  # variant -> its sim.gpu.roofline.StagePerf (sim.userkernel.speed)

    @property
    def correct(self) -> bool:
        comparison, result = self.comparison, self.result  # both there when the case finished (no error)
        return (
            not self.error
            and comparison is not None
            and comparison.correct
            and result is not None
            and not result.overflow
        )

    @property
    def ms(self) -> float | None:
        """The median of the timed launches."""
        return float(np.median(self.result.ms)) if self.result and self.result.ms else None

    def builtin_ms(self, variant: str) -> float | None:
        times = self.result.builtin_ms.get(variant) if self.result else None
        return float(np.median(times)) if times else None


def grade(
    source, adapter, sizes, seeds, block, box, repeats: int, progress=None, first_inputs=None, speed=None
) -> list[Case]:
    """Every size x seed; SandboxError for what ends the whole check ("no-gpu", "compile"), a case with its
    error for a fault or a time-out (the next case gets a new worker). ``first_inputs``: inputs already made
    for the first seed, by size; ``speed(inputs, expected, case)``: the case's figures by variant."""
    cases: list[Case] = []
    for size in sizes:
        for seed in seeds:
            inputs = (first_inputs or {}).get(size) if seed == seeds[0] else None
            inputs = inputs if inputs is not None else adapter.inputs(size, seed)
            case = Case(size, seed)
            try:
                case.result = box.run(source, inputs, block, repeats, adapter.builtin)
            except SandboxError as exc:
                if exc.kind not in ("fault", "timeout"):
                    raise
                case.error = str(exc)
            else:  # the CPU twin after the GPU: a machine without one stops before this work
                expected = adapter.expected(inputs)
                case.comparison = adapter.compare(inputs, expected, case.result.outputs)
                if case.comparison.mismatches and sum(c.unstable for c in cases) < RERUNS:
                    case.unstable = _differs_again(box, source, inputs, block, adapter, expected, case.comparison)
                if speed is not None:
                    case.speed = speed(inputs, expected, case)
            cases.append(case)
            interrupts.check()  # a signal noted inside the CPU twin's numba code stops here
            if progress:
                progress(len(cases))
    return cases


RERUNS = 2  # wrong cases run a second time to tell a race from a steady mistake


def _differs_again(box, source, inputs, block, adapter, expected, first: Comparison) -> bool:
    """Whether the same inputs, run once more, go wrong at other items (a race); False when that run fails."""
    try:
        again = box.run(source, inputs, block, 0, ())
    except SandboxError as exc:
        if exc.kind not in ("fault", "timeout"):
            raise
        return False
    return not np.array_equal(adapter.compare(inputs, expected, again.outputs).mismatch, first.mismatch)


def builds_without_fma(adapter) -> bool:
    """Whether the stage's builds keep every product rounded (``--fmad=false``), as its CPU twin does."""
    return "--fmad=false" in adapter.reference.all_options()


def _number(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def verdict(case: Case) -> str:
    if case.error:
        return "fault" if "faulted" in case.error or "died" in case.error else "timeout"
    return "yes" if case.correct else "no"


def table(cases: list[Case], variant: str, builtin: tuple[str, ...]) -> str:
    """One line a case: size, seed, correct, mismatches, max error, the kernel's and the built-ins' ms; the
    kernel's GB/s and % of the stage's speed-of-light limit where figured (``sim.userkernel.speed``)."""
    from sim.userkernel import speed

    times = [variant, *builtin]
    figured = any(case.speed for case in cases)
    only = speed.rates_only({k: v for case in cases for k, v in case.speed.items()})
    rates = ("GB/s",) if only else ("GB/s", "% limit")
    head = (
        f"{'size':>12} {'seed':>5} {'correct':>8} {'mismatches':>11} {'max error':>12}"
        + "".join(f" {name + ' ms':>{max(12, len(name) + 4)}}" for name in times)
        + ("".join(f" {name:>9}" for name in rates) if figured else "")
    )
    lines = [head]
    for case in cases:
        c = case.comparison
        row = (
            f"{case.size:>12,} {case.seed:>5} {verdict(case):>8} {_number(c.mismatches if c else None, ','):>11} "
            f"{format(c.max_abs, '.3g') if c else '-':>12}"
        )
        values = [case.ms, *(case.builtin_ms(name) for name in builtin)]
        row += "".join(
            f" {_number(ms, '.4f'):>{max(12, len(name) + 4)}}" for name, ms in zip(times, values, strict=True)
        )
        if figured:
            row += "".join(f" {cell:>9}" for cell in speed.columns(case.speed.get(variant), only))
        lines.append(row)
    return "\n".join(lines)


def details(cases: list[Case], item: str) -> list[str]:
    """Under the table, for each wrong case: the worst items, the writes out of bounds, the fault."""
    lines = []
    for case in cases:
        if case.correct:
            continue
        lines.append(f"size {case.size:,} seed {case.seed}:")
        if case.error:
            lines.append(f"  {case.error}")
            continue
        c, result = case.comparison, case.result
        if c is None or result is None:  # not so: a case without an error finished
            continue
        lines += [f"  {message}" for message in result.overflow]
        if c.mismatches:
            lines.append(
                f"  {c.mismatches:,} {item}{'s' if c.mismatches != 1 else ''} differ, compared {c.rule}; the worst:"
            )
            lines.append(f"    {item:<24}{'expected':>16}{'got':>16}{'difference':>14}")
            for w in c.worst:
                lines.append(f"    {w.label:<24}{w.expected:>16.9g}{w.got:>16.9g}{w.difference:>14.3g}")
            if any(math.isnan(w.got) for w in c.worst):
                lines.append(
                    f"    (nan: the {item} still holds the poison its buffer started with, never written, "
                    "or the kernel computed NaN)"
                )
    return lines


def _finite(value: float | None):
    return value if value is None or math.isfinite(value) else None


def record(cases: list[Case], source, block, device: str, commit: str, hints: Sequence[str] = ()) -> dict:
    """The JSON of ``check --json``: device, commit, stage, file, cases[...] (non-finite errors as null), hints."""
    from sim.userkernel import speed

    def one(case: Case) -> dict:
        c = case.comparison
        return {
            "size": case.size,
            "seed": case.seed,
            "correct": case.correct,
            "error": case.error or None,
            "mismatches": c.mismatches if c else None,
            "max_abs": _finite(c.max_abs) if c else None,
            "max_rel": _finite(c.max_rel) if c else None,
            "compare": c.rule if c else None,
            "ms": case.ms,
            "ms_all": case.result.ms if case.result else [],
            "builtin_ms": {name: case.builtin_ms(name) for name in (case.result.builtin_ms if case.result else {})},
            "overflow": case.result.overflow if case.result else [],
            "unstable": case.unstable,
            "speed_of_light": {name: speed.as_json(p) for name, p in case.speed.items()},
            "worst": [
                {"index": w.index, "label": w.label, "expected": _finite(w.expected), "got": _finite(w.got)}
                for w in (c.worst if c else [])
            ],
        }

    return {
        "device": device,
        "commit": commit,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "scene": source.scene,
        "stage": source.stage.name,
        "file": source.name,
        "block": list(block) if isinstance(block, tuple) else block,
        "correct": all(c.correct for c in cases),
        "cases": [one(case) for case in cases],
        "hints": list(hints),
    }
