"""Your own kernel in the live scene: ``LiveStage`` runs one replaceable stage of a scene through the
user's kernel, step by step in lockstep with the CPU twin, and keeps what the panel shows. No GL here.

A step: the scene hands out the stage's inputs at its state (``Scene.user_stage_inputs``); the user's
kernel on them in the sandbox, launched once: checked, and timed between CUDA events (the milliseconds join
the scene's stage timer under the stage's name, where the stage-time chart shows them as it shows the
built-in variants'); under verification the adapter runs the CPU twin on the same inputs and compares; then
the scene finishes its step with the user's outputs (``Scene.apply_user_stage``, which marks the wrong
items). The adapter only computes and compares: the scene alone changes its state.

A step may take ``STEP_TIME_LIMIT_S`` in the viewer: a kernel that never returns holds the window that
long, then the sandbox kills its worker. That error, or a fault, puts the scene back on its own kernel
(the reference) until the file changes. Saves are compiled in the background (``watch``); the frame
thread swaps a build that compiles in between frames (``refresh``), the scene's state kept.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from sim.contract import load
from sim.framework.user_stages import item_rows
from sim.userkernel.attempts import Attempts
from sim.userkernel.sandbox import Sandbox, SandboxError
from sim.userkernel.sanitizer import Background
from sim.userkernel.watch import Reload, SourceWatcher

if TYPE_CHECKING:
    from sim.userkernel.footprint import Footprint
    from sim.userkernel.source import UserSource

STEP_TIME_LIMIT_S = 2.0  # one step of the user's kernel in the viewer, compile included


class LiveStage:
    """The user's kernel (``source``, a ``sim.userkernel.source.UserSource``) for one stage of ``scene``."""

    def __init__(self, scene, source, sandbox: Sandbox | None = None):
        self.scene = scene
        self.source = source  # the file's latest text
        self.stage = source.stage
        self.adapter = load(self.stage.adapter)()
        self.sandbox = sandbox if sandbox is not None else Sandbox(time_limit_s=STEP_TIME_LIMIT_S)
        self.watcher: SourceWatcher | None = None
        self.build: UserSource | None = None  # the last text that compiled: what runs (None until one does)
        self.diagnostics: list = []  # NVRTC's messages on the latest text
        self.problem = ""  # the latest text could not be read or checked
        self.error: str | None = None  # the last sandbox error: the reference runs until the file changes
        self.comparison = None  # the last step's sim.userkernel.adapter.Comparison (verification on)
        self._described: tuple = (None, None, [])  # (comparison, item, rows): the tooltip asks every frame
        self.first_divergence: int | None = None  # the first step whose result differed, since this build
        self.overflow: list[str] = []  # the last step's writes past an output's end
        self.ms: float | None = None  # the last step's kernel time
        self.steps_run = 0  # steps this build ran
        self.attempts = Attempts()  # every text taken in this session, and what its build did
        self.faulted = False  # the last sandbox error was the GPU's fault (memcheck can name the line)
        self.sanitizer = Background()  # one step under compute-sanitizer, run off the frame thread
        self.footprint: Footprint | None = None  # what ptxas made of the build's entry
        # the last step's (block, dynamic shared bytes): the occupancy the panel shows
        self.launch: tuple[Any, int] | None = None
        self._target = None  # sim.userkernel.codegen.Target, read once

    @property
    def variant(self) -> str:
        return self.source.variant

    @property
    def runs(self) -> bool:
        """A build is there and has not failed."""
        return self.build is not None and self.error is None

    @property
    def checking(self) -> bool:
        return self.watcher is not None and self.watcher.checking

    # --- the file: compiled in the background, swapped in between frames ----------------------------
    def watch(self) -> LiveStage:
        """Check the text now and every save of the file, on a background thread."""
        self.watcher = SourceWatcher(self.source, self.scene.spec).start()
        return self

    def refresh(self) -> Reload | None:
        """Between frames: take in the watcher's newest look at the file, if any (no I/O here)."""
        reload = self.watcher.take() if self.watcher is not None else None
        if reload is not None:
            self.take(reload)
        return reload

    def take(self, reload: Reload) -> None:
        """A text that compiles replaces the build (the scene's state kept); one that does not shows its
        messages while the last good build, or the reference, keeps running."""
        self.problem = reload.problem
        if reload.source is None:
            return
        self.source, self.diagnostics = reload.source, list(reload.diagnostics)
        self.attempts.built(reload.compiles)
        if reload.compiles:
            self.build, self.error, self.faulted, self.footprint = reload.source, None, False, reload.footprint
            self.comparison = self.first_divergence = self.ms = None
            self.overflow, self.steps_run = [], 0

    # --- stepping ------------------------------------------------------------------------------------
    def advance(self, steps: int) -> int:
        """``steps`` steps of the scene through the user's kernel; after a sandbox error, the rest on the
        scene's own kernel. Returns the steps done."""
        for done in range(steps):
            try:
                self.step(self.scene.steps + done + 1)
            except SandboxError as exc:
                self.error = str(exc).strip() or type(exc).__name__
                self.attempts.failed(self.error)
                self.faulted = exc.device
                return done + self.scene.advance(steps - done)
        return steps

    def step(self, number: int) -> None:
        """One step of the scene, the ``number``-th since its preset loaded, with the user's kernel."""
        scene, adapter = self.scene, self.adapter
        inputs = scene.user_stage_inputs(self.stage.name)
        block = scene.knobs.block if scene.knobs.block is not None else adapter.default_block()
        self.launch = (block, adapter.launch(inputs, block)[2])
        if self.build is None:  # not so: steps run only once a build compiled (``runs``)
            raise SandboxError("compile", "no build of the file has compiled")
        got = self.sandbox.run(self.build, inputs, block)
        comparison = None
        if scene.checks.on:
            started = time.perf_counter()
            expected = adapter.expected(inputs)
            comparison = adapter.compare(inputs, expected, got.outputs)
            comparison.check_ms = (time.perf_counter() - started) * 1e3
            if not comparison.correct and self.first_divergence is None:
                self.first_divergence = number
        scene.apply_user_stage(self.stage.name, inputs, got.outputs, comparison)
        self.comparison, self.overflow = comparison, list(got.overflow)
        self.ms = float(got.checked_ms)
        scene.timer.add(self.stage.name, self.ms)
        self.attempts.ran(
            self.ms, comparison, got.overflow, self.footprint.registers if self.footprint is not None else None
        )
        self.steps_run += 1

    def sanitize(self, tool: str) -> bool:
        """One step of the scene as it is now, through the last good build under compute-sanitizer ``tool``,
        off the frame thread (``self.sanitizer``: its lines when done); False when there is no build yet or
        a run is in flight. The step's inputs are copied here: the scene steps on meanwhile."""
        if self.build is None or self.sanitizer.running:
            return False
        inputs = {
            name: value.copy() if isinstance(value, np.ndarray) else value
            for name, value in self.scene.user_stage_inputs(self.stage.name).items()
        }
        block = self.scene.knobs.block if self.scene.knobs.block is not None else self.adapter.default_block()
        return self.sanitizer.start(self.build, inputs, block, tool, size=self.scene.n)

    def occupancy(self):
        """The build's theoretical occupancy at the last step's launch (None before one, or unknown)."""
        from sim.userkernel import codegen

        if self.footprint is None or self.launch is None:
            return None
        if self._target is None:
            self._target = codegen.target()
        return codegen.occupancy(self.footprint, *self.launch, self._target)

    def compiled_lines(self) -> list[str]:
        """What the compiler made of the build (registers, local and shared memory, the occupancy at the last
        step's launch), a fact a line; none when ptxas did not say."""
        from sim.userkernel import footprint
        from sim.userkernel.source import ARCH

        if self.footprint is None:
            return []
        shared = self.launch[1] if self.launch is not None else 0
        return [
            f"compiled for {ARCH}: " + line for line in footprint.lines(self.footprint, self.occupancy(), shared, ARCH)
        ]

    # --- one item, for the viewer's pointer --------------------------------------------------------
    def describe_check(self, item: int) -> list[tuple[str, str, str, str]]:
        """For an item the last check found wrong: (output, your kernel's values, the CPU twin's, difference)
        rows (``sim.framework.user_stages.item_rows``)."""
        if self.comparison is None:
            return []
        compared, asked, rows = self._described
        if compared is not self.comparison or asked != item:
            rows = item_rows(self.comparison, item)
            self._described = (self.comparison, item, rows)
        return rows

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
        self.sandbox.close()
        self.sanitizer.cancel()
