"""One way to time a launch, the user's kernel's and the built-ins' alike, so their columns compare.

A column is fair when it times the same work the same way: the launch(es) that do what the stage does,
on the same inputs, prepared beforehand (kernels looked up, arguments built, buffers allocated, inputs
sorted or binned: none of it timed), after a warm-up, between CUDA events (``sim.gpu.measure.samples``).
An accumulator the stage starts from zero (a histogram, partner counts) is cleared before each launch,
untimed, for both. A stage's adapter says what its built-in variants' launches are (``Launch``); the
sandbox times them here, beside the user's kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sim.gpu import measure


@dataclass(frozen=True)
class Launch:
    """What one timed repeat queues. ``run``: the launch(es), nothing else; ``clear``: untimed before each
    repeat (None: nothing to clear); ``steps``: how many of the stage's steps one run does (a temporal
    kernel's k): the time is divided, per step."""

    run: Callable[[], object]
    clear: Callable[[], object] | None = None
    steps: int = 1


def milliseconds(launch: Launch, repeats: int) -> list[float]:
    """``repeats`` timed runs of ``launch`` after an untimed one, CUDA events, per step of the stage."""
    times = measure.samples(launch.run, measure.EventClock(), repeats, setup=launch.clear)
    return [ms / launch.steps for ms in times] if launch.steps != 1 else times


def zero(arrays) -> Callable[[], None] | None:
    """A clear for ``arrays`` (device arrays filled with 0 before each run), None when there are none."""
    arrays = tuple(arrays)
    if not arrays:
        return None

    def clear() -> None:
        for a in arrays:
            a.fill(0)

    return clear
