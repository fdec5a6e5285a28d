"""What one replaceable stage knows: the protocol each scene's ``sim/<scene>/user_stage.py`` implements.

The shared machinery (``sim.userkernel``) never names a scene: it asks the stage's adapter (found by
the dotted path in ``UserStage.adapter``) for inputs, the CPU twin's result, the kernel's arguments
and grid, and a comparison. Inputs and outputs are host numpy arrays by name (scalars as numpy
scalars), so they cross to the sandbox process as plain data; only ``args`` sees device arrays
(CuPy), and it runs in the sandbox. An adapter computes and compares, and changes no scene: a live scene
hands out a stage's inputs and takes its outputs back itself (``Scene.user_stage_inputs`` and
``Scene.apply_user_stage``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

Arrays = dict[str, Any]  # name -> numpy array or numpy scalar


@dataclass(frozen=True)
class Output:
    """A buffer the kernel writes. ``start``: "poison" (filled with a value no correct kernel leaves: NaN
    for floats, 0x7fffffff-like for ints; reads of it before writing show as mismatches) or "zero"
    (an accumulator such as histogram bins, zeroed before every launch, as the launch rule says)."""

    shape: tuple[int, ...]
    dtype: Any
    start: str = "poison"


@dataclass(frozen=True)
class Worst:
    """One wrong item: where it is (``label``, e.g. "cell (12, 0)", "bin 31"), expected, got."""

    index: int  # the item's index in the scene's items (what the viewer marks red)
    label: str
    expected: float
    got: float

    @property
    def difference(self) -> float:
        return float(self.got) - float(self.expected)


@dataclass
class Comparison:
    """A user result against the CPU twin's, from the same input."""

    mismatch: np.ndarray  # bool per item of the scene (cells, particles, bins, coefficients, balls)
    max_abs: float  # largest |got - expected| (inf where one is NaN and the other is not)
    max_rel: float  # largest |got - expected| / max(|expected|, tiny)
    worst: list[Worst] = field(default_factory=list)  # the worst few, largest difference first
    rule: str = "exact"  # how they were compared, in words: "exact", "rtol 1e-5, atol 1e-6", "as sets"
    # the outputs compared (sim.framework.user_stages.Values): one item's rows
    values: list = field(default_factory=list)
    check_ms: float = 0.0  # the CPU twin's run and the comparison (``LiveStage.step`` times them)

    @property
    def mismatches(self) -> int:
        return int(np.count_nonzero(self.mismatch))

    @property
    def correct(self) -> bool:
        return self.mismatches == 0


class StageAdapter(Protocol):
    """One scene's replaceable stage. Instances are cheap and stateless (built with no arguments)."""

    item: str  # what one compared item is, singular: "cell", "particle", "bin", "coefficient", "ball"
    reference: Any  # sim.gpu.cuda.Build: the built-in build whose NVRTC options a user's build shares
    builtin: tuple[str, ...]  # built-in variants timed beside the user's kernel (bench, check)

    def sizes(self) -> tuple[int, ...]:
        """The grader's default item counts: 1 item, odd, not a multiple of the default block, large."""

    def default_block(self) -> Any:
        """The block the template runs with (threads, or (x, y))."""

    def inputs(self, size: int, seed: int) -> Arrays:
        """Fresh random inputs of ``size`` items (never zeros), reproducible from ``seed``."""

    def outputs(self, inputs: Arrays) -> dict[str, Output]:
        """The buffers the kernel writes, by the signature's parameter names."""

    def expected(self, inputs: Arrays) -> Arrays:
        """The CPU twin's outputs for these inputs (the numba code the built-in kernels are checked
        against)."""

    def launch(self, inputs: Arrays, block) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        """(grid, block, dynamic shared bytes) by the stage's launch rule."""

    def args(self, inputs: Arrays, device: dict[str, Any]) -> tuple:
        """The kernel's arguments in signature order; ``device`` holds every input and output array on
        the GPU (outputs already offset past their guard), scalars come from ``inputs`` (numpy typed)."""

    def compare(self, inputs: Arrays, expected: Arrays, got: Arrays) -> Comparison:
        """The user's outputs against the CPU twin's, item by item, by the stage's rule."""

    def builtin_launch(self, variant: str, inputs: Arrays, block) -> Any:
        """A built-in variant's launch(es) doing what the stage does, on the same inputs, prepared
        (``sim.userkernel.timing.Launch``; runs in the sandbox, which times it as it times the user's
        kernel). Only the stage's work: no sort, scan or clear the user's kernel is not asked to do."""
