"""What a scene hands the viewer each frame (its view) and what the viewer hands back (pointer events).

A view is what the viewer draws for one frame: ``PointsView`` (spheres in 3D or discs in 2D, with
their surroundings), ``FieldView`` (a 2D scalar grid, colour-mapped) or ``PlotsView`` (ImPlot
charts, no 3D view). Views hand over arrays on the host or write straight into device arrays
that alias the viewer's GL buffers (CUDA–GL interop: no host copy).

Items: what the user can point at and ask about (``Inspector.describe``). A points view's item is its
index in the view's arrays; a field's is its cell, ``row * columns + column`` (row 0 at the bottom);
a plot's points name theirs in ``Series.items``.

Part of the scene contract: import these names from ``sim.contract``, which re-exports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np


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

    ``lo`` and ``hi`` are the range the colours are made with: the range fixed from the panel
    (``Scene.color_scales``), else the data's own, which the viewer takes every frame and puts in
    the legend it shows. ``colormap``: the map ("" = the view's). ``categorical``: the colours name
    categories (CUDA blocks, bins), ``lo``..``hi`` counts them and no range can be fixed.
    """

    label: str
    lo: float
    hi: float
    unit: str = ""
    colormap: str = ""
    categorical: bool = False


@dataclass
class PointsView:
    """Balls (dims 3) or discs (dims 2) and one quantity per item, which the viewer colours.

    ``host()`` returns (positions, quantity): (n, 4) float32 x, y, z, radius and (n,) float32 values,
    or int32 category ids when ``palette`` is set. ``write(positions, quantity)``, when set, fills
    CuPy arrays of those shapes that alias the viewer's GL buffers (the scene's state is on the
    device: no host copy).

    Values are coloured through ``colormap`` over ``value_range`` (None: the values' own range, taken
    by the viewer every frame, as for a field); category c in ``palette[c % len(palette)]`` ((k, 3)
    RGB). ``mask`` (n,) bool marks items drawn in the mismatch colour whatever their quantity
    (verification: they differ from the CPU twin).
    """

    count: int
    dims: int
    surroundings: Trough | Box
    spacing: float  # typical distance between items: how far the camera may zoom in
    host: Callable[[], tuple[np.ndarray, np.ndarray]]
    write: Callable[[Any, Any], None] | None = None
    legend: Legend | None = None
    colormap: str = "viridis"
    palette: np.ndarray | None = None
    value_range: tuple[float, float] | None = None
    mask: np.ndarray | None = None

    kind = "points"

    @property
    def on_device(self) -> bool:
        return self.write is not None

    @property
    def categorical(self) -> bool:
        return self.palette is not None


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
    items: np.ndarray | None = None  # the scene's item of each point (hover and pin: ``Inspector.describe``)


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
    # Where the legend sits: a corner of the plot area the data leaves free ("nw", "ne", "sw", "se"), or
    # "above" the plot area, outside it, for data that reaches every corner.
    legend: Literal["nw", "ne", "sw", "se", "above"] = "nw"


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
