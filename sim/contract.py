"""The scene contract: what a scene declares (``SceneSpec``) and what it draws (its view).

A scene package (``sim/<name>/``) declares one ``SceneSpec`` in its ``__init__.py``: plain data
(words, presets, parameters, stages, statistics, optional capabilities) and dotted paths to the
code (the scene class, its CUDA builds, its course commands, its own benchmark), imported only
when used. ``sim.registry`` lists the specs; the viewer, the CLI, the benchmarks and the contract
test read nothing else. The scene class implements ``sim.scene.Scene``.

Optional capabilities are typed fields, ``None`` when a scene lacks them: GPU knobs (variants and
block shapes), a verifier (GPU checked against the CPU), block colouring, a pointer tool, a source
of points for the live distance histogram. A scene that declares one implements its hooks
(tests/test_contract.py checks it).

A view is what the viewer draws for one frame: ``PointsView`` (spheres in 3D or discs in 2D, with
their surroundings), ``FieldView`` (a 2D scalar grid, colour-mapped) or ``PlotsView`` (ImPlot
charts, no 3D view). Views hand over arrays on the host or write straight into device arrays
that alias the viewer's GL buffers (CUDA–GL interop: no host copy).

Items: what the user can point at and ask about (``Scene.describe``). A points view's item is its
index in the view's arrays; a field's is its cell, ``row * columns + column`` (row 0 at the bottom);
a plot's points name theirs in ``Series.items``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

ViewKind = Literal["points", "field", "plots"]
BLOCK_COLORS = "block"  # the colour mode that shows which CUDA block handled what


# --- declarations --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Words:
    """How the tool talks about a scene."""

    unit: str  # what the scene is made of, plural: "balls", "cells"
    one: str  # singular: "ball"
    variant: str = "kernel variant"  # what q cycles


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
    default_preset: str  # what the viewer opens
    scene: str  # "sim.balls.scene:BallsScene"
    stages: tuple[str, ...]  # the stages it times, the same names on every backend
    stats: tuple[Stat, ...]
    run_preset: str = ""  # what run and bench start from (default_preset when empty)
    params: tuple[Param, ...] = ()
    steps_per_frame: int = 1
    dt: float = 0.0  # simulated seconds per step (0: steps are not time)
    count_limits: tuple[int, int] = (1, 1)  # most items on the CPU, on the GPU
    bytes_per_item: tuple[int, int] = (0, 0)  # host, device: the memory estimate before a scene is built
    bench_toggles: tuple[tuple[str, bool], ...] = ()  # toggles set for benchmarks (bench times the physics)
    options: tuple[Option, ...] = ()
    toggles: tuple[Toggle, ...] = ()
    gpu: GpuKnobs | None = None
    verifier: Verifier | None = None
    block_colors: BlockColoring | None = None
    tool: Tool | None = None
    histogram: HistogramSource | None = None
    kernels: str = ""  # "sim.balls.kernels:builds": every CUDA build its launchers make
    commands: str = ""  # "sim.particles.cli:COMMANDS": course-compatible subcommands
    bench: str = ""  # "sim.sdh.bench:COMMAND": a benchmark of its own instead of timed frames

    def preset(self, name: str) -> Preset:
        for preset in self.presets:
            if preset.name == name:
                return preset
        raise ValueError(f"unknown preset {name!r} for {self.name} (choose from {self.preset_names})")

    @property
    def preset_names(self) -> str:
        return ", ".join(p.name for p in self.presets)

    @property
    def start_preset(self) -> str:
        return self.run_preset or self.default_preset

    def create(self, **kwargs):
        """A new scene (``sim.scene.Scene``) of this kind."""
        return load(self.scene)(**kwargs)


# --- what a scene draws -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Trough:
    """The balls' half-cylinder along z, lower half at y <= 0."""

    radius: float
    z_min: float
    z_max: float


@dataclass(frozen=True)
class Box:
    """A 2D scene's square [0, side]^2 at z = 0."""

    side: float


@dataclass
class Legend:
    """What a colour means: a colour bar from ``lo`` to ``hi`` in ``unit``.

    ``lo`` and ``hi`` are the range the colours were made with: the data's own (automatic) or the
    range fixed from the panel (``Scene.set_color_range``). ``colormap``: the map ("" = the view's:
    viridis for points, the field's own). ``categorical``: the colours name categories (CUDA
    blocks, bins), ``lo``..``hi`` counts them and no range can be fixed.
    """

    label: str
    lo: float
    hi: float
    unit: str = ""
    colormap: str = ""
    categorical: bool = False


@dataclass
class PointsView:
    """Balls (dims 3) or discs (dims 2): (n, 4) float32 positions (x, y, z, radius) and RGBA colours.

    ``host()`` returns both on the host; ``write(pos_out, col_out)``, when set, fills CuPy (n, 4)
    arrays that alias the GL buffers (the scene's state is on the device).
    """

    count: int
    dims: int
    surroundings: Trough | Box
    spacing: float  # typical distance between items: how far the camera may zoom in
    host: Callable[[], tuple[np.ndarray, np.ndarray]]
    write: Callable[[Any, Any], None] | None = None
    legend: Legend | None = None

    kind = "points"

    @property
    def on_device(self) -> bool:
        return self.write is not None


@dataclass(frozen=True)
class Tiles:
    """How a launch covers a field: tiles of ``size`` cells (columns, rows) starting at ``origin``,
    each computing its tile from a halo of ``halo`` cells around it."""

    size: tuple[int, int]
    origin: tuple[int, int] = (0, 0)
    halo: int = 0


@dataclass
class FieldView:
    """A 2D scalar field, ``shape`` = (rows, columns), row 0 at the bottom of ``extent``.

    ``host()`` returns the values as float32 (rows, columns); ``write(out)``, when set, fills a
    CuPy float32 (rows, columns) array that aliases a GL pixel buffer. A value of NaN is drawn in
    the highlight colour (verification marks differing cells that way).
    """

    shape: tuple[int, int]
    extent: tuple[float, float, float, float]  # x0, y0, x1, y1 in scene units
    value_range: tuple[float, float] | None  # what the colour map spans; None: the values' own range
    legend: Legend
    host: Callable[[], np.ndarray]
    write: Callable[[Any], None] | None = None
    colormap: str = "inferno"
    tiles: Tiles | None = None  # drawn over the field in block-colour mode

    kind = "field"

    @property
    def on_device(self) -> bool:
        return self.write is not None


@dataclass
class Series:
    label: str
    x: np.ndarray
    y: np.ndarray
    style: Literal["line", "bars", "stairs", "scatter", "shaded"] = "line"
    color: tuple[float, float, float, float] | None = None
    width: float = 0.67  # bar width in x units
    y2: np.ndarray | None = None  # for "shaded": the lower edge
    items: np.ndarray | None = None  # the scene's item of each point (hover and pin: ``Scene.describe``)


@dataclass
class DragPoint:
    """A point the user may drag; its new position reaches ``Scene.pointer`` as a "point" event."""

    id: str
    x: float
    y: float
    color: tuple[float, float, float, float] = (1.0, 0.8, 0.3, 1.0)


@dataclass
class Plot:
    title: str
    series: list[Series]
    x_label: str = ""
    y_label: str = ""
    x_log: bool = False
    y_log: bool = False
    equal_aspect: bool = False
    x_limits: tuple[float, float] | None = None
    y_limits: tuple[float, float] | None = None
    hlines: tuple[float, ...] = ()
    drag_points: list[DragPoint] = field(default_factory=list)
    heatmap: np.ndarray | None = None  # (rows, cols) values drawn over x_limits x y_limits
    height: float = 0.0  # share of the column's height (0: equal shares)


@dataclass
class PlotsView:
    plots: list[Plot]
    columns: int = 2

    kind = "plots"
    on_device = False


View = PointsView | FieldView | PlotsView


@dataclass(frozen=True)
class PointerEvent:
    """A pointer gesture in scene coordinates.

    kind: "press", "drag", "release", or "point" (a plot's drag point moved to x, y; ``target``
    names it). 2D scenes get x, y on their plane; 3D scenes also the ray (origin, direction).
    """

    kind: Literal["press", "drag", "release", "point"]
    x: float
    y: float
    button: Literal["left", "right", "middle", ""] = "left"
    shift: bool = False
    ctrl: bool = False
    origin: tuple[float, float, float] | None = None
    direction: tuple[float, float, float] | None = None
    target: str = ""
