"""The scene contract: what a scene declares (``SceneSpec``) and what it draws (its view).

A scene package (``sim/<name>/``) declares one ``SceneSpec`` in its ``__init__.py``: plain data
(words, presets, parameters, stages, statistics, optional capabilities) and dotted paths to the
code (the scene class, its CUDA builds and their stage models (``sim.gpu.roofline``), its course commands,
its benchmark (``Bench``: the timed frames unless it declares its own), its benchmark cases: the regression
gate's headline runs and the Nsight Compute model cases), imported only when used. ``sim.registry`` lists the
specs; the viewer, the CLI, the benchmarks and the contract test read nothing else. The scene class implements
``sim.framework.scene.Scene``.

Optional capabilities are typed fields, ``None`` when a scene lacks them: GPU knobs (variants and
block shapes), a verifier (GPU checked against the CPU), block colouring, a pointer tool, a source
of points for the live distance histogram. A scene that declares one implements its hooks
(tests/test_contract.py checks it).

The views (``PointsView``, ``FieldView``, ``PlotsView`` and what they hold) and ``PointerEvent`` are
defined in ``sim.framework.views``, the benchmark declarations (``Bench``, the gate's and Nsight Compute's
cases) in ``sim.framework.benchmarks``; both are re-exported here: the whole contract imports from this one
module.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Literal

from sim.framework.benchmarks import TIMED_FRAMES, Bench, GateFigure, GatePeer, GateRun, NcuCase
from sim.framework.views import (
    Box,
    DragPoint,
    FieldView,
    Legend,
    Plot,
    PlotsView,
    PointerEvent,
    PointsView,
    Series,
    Tiles,
    Trough,
    View,
)

__all__ = [
    # declarations
    "BLOCK_COLORS",
    "TIMED_FRAMES",
    "Bench",
    "BlockColoring",
    "GateFigure",
    "GatePeer",
    "GateRun",
    "GpuKnobs",
    "HistogramSource",
    "NcuCase",
    "Option",
    "Param",
    "Preset",
    "SceneSpec",
    "Stat",
    "Toggle",
    "Tool",
    "UserStage",
    "Verifier",
    "ViewKind",
    "Words",
    "load",
    # views and pointer events (sim.framework.views)
    "Box",
    "DragPoint",
    "FieldView",
    "Legend",
    "Plot",
    "PlotsView",
    "PointerEvent",
    "PointsView",
    "Series",
    "Tiles",
    "Trough",
    "View",
]

ViewKind = Literal["points", "field", "plots"]
BLOCK_COLORS = "block"  # the colour mode that shows which CUDA block handled what


# --- declarations --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Words:
    """How the tool talks about a scene."""

    unit: str  # what the scene is made of, plural: "balls", "cells"
    one: str  # singular: "ball"
    variant: str = "kernel variant"  # what q cycles
    step: str = "physics step"  # what one step is: run --steps, the window, bench and s alike count these


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


@dataclass(frozen=True)
class Stat:
    """A statistic the panel and ``run --headless`` print alike: ``label`` then the value in ``fmt``."""

    key: str
    label: str
    fmt: str = "{:,}"
    help: str = ""

    def text(self, stats: dict) -> str:
        value = stats.get(self.key)
        if value is None:
            return f"{self.label} -"
        return f"{self.label} {self.fmt.format(value)}"


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    count: int | None = None  # default item count when the preset takes one (-n); None: fixed
    key: str | None = None  # a viewer key that loads it (e.g. "t")


@dataclass(frozen=True)
class Option:
    """A scene-specific construction option (``--name`` on run and bench, a combo in the panel)."""

    name: str
    help: str
    choices: tuple[str, ...]
    default: str
    gpu_only: bool = True  # refused on the CPU backend


@dataclass(frozen=True)
class Toggle:
    """A scene switch with an optional key (e.g. the balls' CUDA proximity on F4)."""

    name: str
    label: str
    help: str
    key: str | None = None  # pyglet key name, e.g. "F4"
    default: bool = True
    gpu_only: bool = True  # switches the GPU kernels: the viewer shows it with the GPU controls


@dataclass(frozen=True)
class GpuKnobs:
    """Kernel variants and CUDA block shapes the user chooses between (``q`` / ``Q``)."""

    variants: tuple[str, ...]
    default_variant: str
    blocks: tuple[Any, ...]  # threads (int) or 2D shapes ((w, h))
    default_block: Any
    fastest: str = ""  # the variant for large counts (frame bench); default_variant when empty
    cpu_variants: bool = False  # the CPU runs each variant's CPU twin (else variants are GPU-only)
    kernels_run_hint: str = "switch the physics to the GPU (a)"  # how to make the GPU kernels run


@dataclass(frozen=True)
class Verifier:
    """The scene re-does GPU work on the CPU from the same state and marks what differs."""

    checks: str  # "each GPU step is checked against a CPU step from the same state"
    mismatch: str  # "particles whose step differs from the CPU's are drawn red"


@dataclass(frozen=True)
class BlockColoring:
    """The scene can show which CUDA block handled each item (``c``)."""

    how: str = "colour by the CUDA block that handled it"


@dataclass(frozen=True)
class Tool:
    """A pointer tool: drags not taken by the camera or the panel reach ``Scene.pointer``."""

    name: str  # "paint"
    help: str  # what the buttons do
    params: tuple[Param, ...] = ()  # the tool's own sliders (brush radius, temperature)
    default_on: bool = True  # off: only Ctrl + drag reaches it


@dataclass(frozen=True)
class UserStage:
    """A stage a user's own kernel can replace (``--kernel-file``; ``sim.userkernel``)."""

    name: str  # "step": `template heat step`, `check heat --stage step`
    summary: str  # one line: what the kernel computes
    entry: str  # the kernel the user's file defines (extern "C" __global__ void <entry>(...))
    signature: str  # its C signature
    params: tuple[tuple[str, str], ...]  # (parameter, what it means), in signature order
    launch: str  # the launch rule in words: how grid and block follow from the item count
    compare: str  # how the result is compared with the CPU twin, in words ("exact", "rtol 1e-5")
    template: str  # package path of a working, commented starting point: "sim/heat/templates/step.cu"
    adapter: str  # "sim.heat.user_stage:StepStage" (sim.userkernel.adapter.StageAdapter)


@dataclass(frozen=True)
class HistogramSource:
    """The scene's points feed the live distance histogram and g(r)."""

    dims: int  # 3 for volumes, 2 for the plane


def load(path: str) -> Any:
    """An object by dotted path ``"package.module:name"``."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class SceneSpec:
    name: str
    title: str  # one line for help texts
    words: Words
    view: ViewKind
    presets: tuple[Preset, ...]
    default_preset: str  # what view and run open
    scene: str  # "sim.balls.scene:BallsScene"
    stages: tuple[str, ...]  # the stages it times, the same names on every backend
    stats: tuple[Stat, ...]
    bench_preset: str = ""  # what bench times (default_preset when empty): the course's benchmark, say
    params: tuple[Param, ...] = ()
    steps_per_frame: int = 1
    dt: float = 0.0  # simulated seconds per step (0: steps are not time)
    count_limits: tuple[int, int] = (1, 1)  # most items on the CPU, on the GPU
    min_count: int = 1  # fewest items a preset that takes a count can run with
    bytes_per_item: tuple[int, int] = (0, 0)  # host, device: the memory estimate before a scene is built
    # the time estimate of run and bench (sim.cmdline.resources.scene_estimate): units of work a second on one CPU
    # thread and on the GPU (0: a step costs only resources.STEP_SECONDS), and what a step's work grows with
    pace: tuple[float, float] = (0.0, 0.0)
    step_work: Literal["items", "pairs", "recursion"] = "items"
    cpu_serial: bool = False  # the CPU step runs on one thread: its pace does not grow with the CPU threads
    run_steps: int = 600  # run's default --steps
    bench_toggles: tuple[tuple[str, bool], ...] = ()  # toggles set for benchmarks (bench times the physics)
    options: tuple[Option, ...] = ()
    toggles: tuple[Toggle, ...] = ()
    gpu: GpuKnobs | None = None
    verifier: Verifier | None = None
    block_colors: BlockColoring | None = None
    tool: Tool | None = None
    histogram: HistogramSource | None = None
    kernels: str = ""  # "sim.balls.kernels:builds": every CUDA build its launchers make
    # "sim.balls.kernels:models": each stage's bytes and arithmetic, f(sim.gpu.roofline.Setup) -> {stage: StageModel}
    models: str = ""
    commands: str = ""  # "sim.particles.cli:COMMANDS": course-compatible subcommands
    bench: str = TIMED_FRAMES  # "sim.sdh.bench:BENCH": its benchmark (``Bench``), in one process and over MPI ranks
    user_stages: tuple[UserStage, ...] = ()  # stages a user's own kernel can replace
    gate: str = ""  # "sim.balls.bench_cases:GATE": the regression gate's runs (GateRun) of the scene's headlines
    ncu: str = ""  # "sim.balls.bench_cases:NCU": each GPU stage's Nsight Compute case (NcuCase)

    def user_stage(self, name: str | None = None) -> UserStage:
        """The replaceable stage called ``name`` (the first when None); ValueError naming the choices."""
        for stage in self.user_stages:
            if name is None or stage.name == name:
                return stage
        choices = ", ".join(s.name for s in self.user_stages) or "none"
        raise ValueError(f"the {self.name} scene has no replaceable stage {name!r} (choose from {choices})")

    def preset(self, name: str) -> Preset:
        for preset in self.presets:
            if preset.name == name:
                return preset
        raise ValueError(f"unknown preset {name!r} for {self.name} (choose from {self.preset_names})")

    @property
    def gpu_knobs(self) -> GpuKnobs:
        """``gpu``, for a scene that has GPU kernels."""
        if self.gpu is None:
            raise ValueError(f"the {self.name} scene has no GPU kernels")
        return self.gpu

    @property
    def preset_names(self) -> str:
        return ", ".join(p.name for p in self.presets)

    @property
    def start_preset(self) -> str:
        """The preset bench starts from."""
        return self.bench_preset or self.default_preset

    def benchmark(self) -> Bench:
        """What ``bench`` runs for this scene."""
        return load(self.bench)

    def create(self, **kwargs):
        """A new scene (``sim.framework.scene.Scene``) of this kind."""
        return load(self.scene)(**kwargs)
