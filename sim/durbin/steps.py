"""The durbin scene's steps: the recursion's (timed, read back to the host, verified against the CPU twin
and scipy) and the lpc preset's, every frame solved in one batch by the scene or by a user's kernel.
``DurbinSteps``, which ``DurbinScene`` (scene.py) inherits; its methods work on the state that class holds
(declared below).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from sim.durbin import verify

if TYPE_CHECKING:
    from sim.durbin.durbin_cpu import DurbinCpu
    from sim.durbin.gpu import DurbinGpu
    from sim.durbin.lpc_mode import LpcMode
    from sim.durbin.readout import DurbinReadout
    from sim.durbin.scene import DurbinSettings
    from sim.framework.checks import Checks
    from sim.gpu.timing import StageTimer


class DurbinSteps:
    """The recursion's and the lpc preset's steps and their checks, as methods of ``DurbinScene``."""

    # the state DurbinScene holds (scene.py) that these read and write
    settings: DurbinSettings
    lpc: LpcMode | None
    host: dict[str, np.ndarray]
    r: np.ndarray
    tolerance: float
    checked: dict[str, np.ndarray | None]
    max_error: float | None
    readout: DurbinReadout
    _checked_version: int
    backend: str
    device: int
    timer: StageTimer
    checks: Checks
    _gpu_stream: Callable[[str], Any]

    if TYPE_CHECKING:  # its property, read-only

        @property
        def recursion(self) -> DurbinCpu | DurbinGpu: ...

    # --- stepping ---------------------------------------------------------------------------------------------
    @property
    def frame_steps(self) -> float:
        """Recursion: ``speed`` steps a displayed frame; lpc: the selected frame moves ``play`` frames."""
        return self.settings.play if self.lpc is not None else self.settings.speed

    def advance(self, steps: int) -> int:
        """Recursion: ``steps`` steps k -> k + 1, fewer at k = N. lpc: every frame solved in one batch (each
        displayed frame, its timed work) and the selected frame ``steps`` frames on."""
        if self.lpc is not None:
            self._lpc_step(steps)
            return steps
        return self._recursion_step(steps)

    def _recursion_step(self, steps: int) -> int:
        solver = self.recursion
        steps = min(steps, solver.n - solver.k)
        before = self.host
        if steps > 0:
            if solver.backend == "gpu":
                import cupy

                with cupy.cuda.Device(self.device):
                    start, end = cupy.cuda.Event(), cupy.cuda.Event()
                    start.record(solver.stream)
                    solver.step(steps)
                    end.record(solver.stream)
                    solver.synchronize()
                    ms = cupy.cuda.get_elapsed_time(start, end)
            else:
                started = time.perf_counter()
                solver.step(steps)
                ms = (time.perf_counter() - started) * 1e3
            self.timer.add("recursion", ms)
            self.readout.solved(steps, ms)
            copied = time.perf_counter()
            self._read_back()
            self.timer.add("read back", (time.perf_counter() - copied) * 1e3)
            self.readout.changed()
        stale = self._checked_version != self.readout.version or self.checks.verification is None
        if self.checks.on and (steps > 0 or stale):
            self._verify(before if steps > 0 else None)
        self.readout.timed_plots()
        return steps

    def _read_back(self) -> None:
        solver = self.recursion
        if solver.backend == "gpu":
            self.host = solver.snapshot()
        else:
            self.host = {name: getattr(solver, name)[: solver.k].copy() for name in ("y", "alphas", "betas")}

    # --- the lpc preset: every frame solved in one batch ----------------------------------------------------
    @property
    def lpc_mode(self) -> LpcMode:
        """``lpc`` where the lpc preset is loaded (its steps, plots and user stage)."""
        if self.lpc is None:
            raise ValueError("the batched stage solves the lpc preset's frames: load the lpc preset")
        return self.lpc

    def _lpc_step(self, move: int) -> None:
        mode = self.lpc_mode
        ms = mode.solve(self.backend, self.timer, self.device, self._gpu_stream(self.backend))
        self.readout.solved(mode.frames, ms, steps=False)
        self._lpc_moved(move)
        if self.checks.on:
            started = time.perf_counter()
            beyond, details, twin, reference = mode.check()
            self.checked = {"twin": twin, "scipy": reference, "gpu": mode.y.copy()}
            self.max_error = details["largest difference to scipy"]
            self.checks.record(
                "the CPU twin's batched solve and scipy.linalg.solve_toeplitz", beyond, started, details, unit="frames"
            )
        self.readout.timed_plots()

    def _lpc_moved(self, move: int) -> None:
        """A new solution: the selected frame ``move`` frames on, the plots to redo."""
        self.settings.frame = float((int(self.settings.frame) + move) % self.lpc_mode.frames)
        self.readout.changed()

    # --- a batched solve computed outside the scene (a user's kernel: sim.durbin.user_stage) ------------------
    def user_stage_inputs(self, stage: str) -> dict:
        """The lpc preset's frames, one system a frame (a user's kernel: ``sim.durbin.user_stage``)."""
        from sim.durbin.user_stage import arrays

        return arrays(self.lpc_mode.r)

    def apply_user_stage(self, stage: str, inputs: dict, outputs: dict, comparison) -> None:
        """The lpc preset's step with the user's batched solve: every frame's y and alphas; ``comparison``
        against the CPU twin's solve marks the frames it got wrong."""
        self.lpc_mode.take(np.asarray(outputs["y"]), np.asarray(outputs["alphas"]))
        self._lpc_moved(1)
        self.checked = {}  # the scene's own check's values say nothing about this solution
        if comparison is not None:
            self.checks.record_user(
                "the CPU twin's batched solve",
                comparison,
                {"max error": comparison.max_abs, "compared": comparison.rule},
                unit="frames",
            )
        self.readout.timed_plots()

    # --- verification ---------------------------------------------------------------------------------------
    def _verify(self, before: dict | None) -> None:
        """The GPU's state against the CPU twin stepped from ``before`` (the state the frame started from;
        None: no step this frame) and against scipy; entries beyond the tolerance are marked."""
        started = time.perf_counter()
        beyond, details, self.checked, self.max_error = verify.recursion(self.r, self.host, before, self.tolerance)
        self._checked_version = self.readout.version
        self.checks.record(
            "the CPU twin from the same state and scipy.linalg.solve_toeplitz", beyond, started, details, unit="entries"
        )
        self.readout.forget()

    def _forget_check(self) -> None:
        self.checked = {}
        self.max_error = None
        self.readout.forget()
