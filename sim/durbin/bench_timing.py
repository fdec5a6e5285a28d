"""How the durbin bench times a run and writes its seconds into a record (the single systems' and the batch's)."""

from __future__ import annotations

from typing import Any

from sim.cmdline import interrupts
from sim.gpu import measure


def timed(fn, clock, **options) -> tuple[measure.Timing, Any]:
    """(``sim.gpu.measure``'s timing of ``fn`` in seconds, what its last call returned), stopping on Ctrl-C."""
    timing, last = measure.measure_returning(fn, clock, between=interrupts.check, **options)
    return timing.scaled(1e-3), last


def seconds(timing: measure.Timing, steps: int | None = None) -> dict:
    """A record's seconds (s, s_err, repeats) and, for ``steps`` steps, its us_per_step (and error)."""
    fields = timing.fields("s")
    if steps:
        fields.update(timing.scaled(1e6 / steps).fields("us_per_step", repeats=None))
    return fields
