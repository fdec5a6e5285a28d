"""What every scene offers the viewer, the CLI and the tests.

A scene owns its state on one backend, advances it in named, timed stages, and exposes
render arrays. The viewer never reaches into the physics: it reads ``positions()`` and
``colors()``, and sends plain settings back through ``set_param`` and the methods below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.timing import StageTimer


@dataclass(frozen=True)
class Param:
    """A physics parameter the panel shows as a slider."""

    name: str
    label: str
    lo: float
    hi: float
    fmt: str = "%.3f"
    log: bool = False  # logarithmic slider
    help: str = ""


class Scene:
    """Base class: subclasses fill in the physics."""

    name = "scene"
    presets: dict[str, str] = {}  # preset name -> one-line description
    color_modes: dict[str, str] = {}  # mode -> label
    params: tuple[Param, ...] = ()
    stages: tuple[str, ...] = ()
    steps_per_frame = 6
    dt = 1.0 / 360.0

    def __init__(self) -> None:
        self.backend = "cpu"
        self.timer = StageTimer(self.stages)
        self.steps = 0

    # --- settings -------------------------------------------------------------------
    def param_value(self, name: str) -> float:
        return float(getattr(self.settings, name))

    def set_param(self, name: str, value: float) -> float:
        """Set a slider value, clamped to its range; NaN or junk keeps the old value."""
        param = next((p for p in self.params if p.name == name), None)
        if param is None:
            raise KeyError(f"{self.name} has no parameter {name!r}")
        try:
            value = float(value)
        except (TypeError, ValueError):
            return self.param_value(name)
        if not math.isfinite(value):
            return self.param_value(name)
        value = min(max(value, param.lo), param.hi)
        setattr(self.settings, name, value)
        return value

    # --- time ----------------------------------------------------------------------
    @property
    def sim_time(self) -> float:
        return self.steps * self.dt

    def advance_frame(self) -> None:
        """One displayed frame: ``steps_per_frame`` physics steps, then close the timer frame."""
        for _ in range(self.steps_per_frame):
            self.step()
        self.timer.frame_done()

    # --- to be provided by subclasses -------------------------------------------------
    def step(self) -> None:
        raise NotImplementedError

    def positions(self) -> np.ndarray:
        raise NotImplementedError

    def colors(self, mode: str) -> np.ndarray:
        raise NotImplementedError
