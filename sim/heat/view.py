"""What the heat scene's field shows and what touches it: the paint tool, the ``FieldView`` (the host
field, or the device field written into the viewer's GL buffer, with a check's differing cells as NaN)
and the temperature summary the statistics show (``summary``). ``HeatView``, which ``HeatScene``
(scene.py) inherits; its methods work on the state that class holds (declared below).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from sim.contract import BLOCK_COLORS, FieldView, Legend, PointerEvent
from sim.heat.stats import SummaryRead

if TYPE_CHECKING:
    from sim.framework.checks import Checks
    from sim.framework.controls import Controls
    from sim.framework.scales import ColorScales
    from sim.heat.gpu import HeatGpu
    from sim.heat.stencil_cpu import HeatCpu

TEMPERATURE = "temperature"
TEMPERATURE_RANGE = (0.0, 100.0)  # the DLI's temperatures: what the colours span until the panel says otherwise


class HeatView:
    """The paint tool, the field's view and its temperature summary, as methods of ``HeatScene``."""

    # the state HeatScene holds (scene.py) that these read and write
    gpu: HeatGpu | None
    ni: int
    nj: int
    device: int
    controls: Controls
    checks: Checks
    color_scales: ColorScales
    _stroke: tuple[float, float] | None
    _marked_device: Any
    _changed: Callable[..., None]

    if TYPE_CHECKING:  # its properties, read-only

        @property
        def sim(self) -> Any: ...
        @property
        def cpu_heat(self) -> HeatCpu: ...
        @property
        def gpu_heat(self) -> HeatGpu: ...
        @property
        def n(self) -> int: ...

    # --- the paint tool --------------------------------------------------------------------------
    def tool_reach(self) -> float:
        return self.controls.tool_values["radius"]  # cells, one scene unit each

    def pointer(self, event: PointerEvent) -> None:
        """Left drag paints the tool's temperature, right drag 0, along the whole path of the drag."""
        if event.kind not in ("press", "drag") or event.button not in ("left", "right"):
            self._stroke = None
            return
        here = (event.x - 0.5, event.y - 0.5)  # the scene's x, y to cell indices (cell i's centre is i + 0.5)
        start = self._stroke if event.kind == "drag" and self._stroke is not None else here
        value = self.controls.tool_values["temperature"] if event.button == "left" else 0.0
        self.paint_stroke(start, here, self.controls.tool_values["radius"], value)
        self._stroke = here

    def paint_stroke(self, start: tuple[float, float], end: tuple[float, float], radius: float, value: float) -> None:
        """Discs of ``radius`` (cells) from ``start`` to ``end`` (cell indices), at most radius / 2 apart: a
        fast stroke leaves no gaps. The same cells on both backends."""
        (x0, y0), (x1, y1) = start, end
        stamps = math.ceil(math.hypot(x1 - x0, y1 - y0) / (radius / 2))
        if stamps == 0:  # a press: one disc (a drag's first point was painted by its press)
            self.sim.paint(x1, y1, radius, value)
        for s in range(1, stamps + 1):
            self.sim.paint(x0 + s / stamps * (x1 - x0), y0 + s / stamps * (y1 - y0), radius, value)
        self._changed()

    # --- what the viewer draws -------------------------------------------------------------------
    def host_field(self) -> np.ndarray:
        """The field (nj, ni) float32 on the host: the CPU twin's buffer itself, or a copy (from the device)
        with the cells the last check marked set to NaN."""
        marked = self.checks.marked(self.n)
        if self.gpu is None and marked is None:
            return self.cpu_heat.field
        values = self.gpu.get() if self.gpu is not None else self.cpu_heat.field.copy()
        if marked is not None:
            values.reshape(-1)[marked] = np.nan
        return values

    def _write(self, out) -> None:
        """GPU: the field into ``out`` (CuPy (nj, ni) float32, a mapped GL buffer), device to device."""
        self.gpu_heat.write_into(out)
        if self._marked_device is not None and self.checks.marked(self.n) is not None:
            import cupy

            with cupy.cuda.Device(self.device):
                out.reshape(-1)[self._marked_device] = cupy.nan

    def view(self, color_mode: str) -> FieldView:
        tiles = self.gpu.tiles().for_view() if color_mode == BLOCK_COLORS and self.gpu is not None else None
        span = self.color_scales.ranges.get(color_mode)  # 0..100 until the panel says otherwise
        return FieldView(
            shape=(self.nj, self.ni),
            extent=(0.0, 0.0, float(self.ni), float(self.nj)),
            value_range=span,
            legend=Legend(TEMPERATURE, *(span or TEMPERATURE_RANGE)),
            host=self.host_field,
            write=self._write if self.gpu is not None else None,
            colormap="inferno",
            tiles=tiles,
        )

    # --- the temperature summary the statistics show ----------------------------------------------
    def temperature_summary(self) -> tuple[float, float, float]:
        """(lowest, mean, highest) finite cell now (``field_summary``)."""
        return self.field_summary()[:3]

    def field_summary(self) -> tuple[float, float, float, int, int]:
        """(lowest, mean, highest) finite cell now and the NaN and inf cells (a user's kernel's), waiting for
        the reduction (``start_temperature_summary``)."""
        return self.start_temperature_summary().values()

    def start_temperature_summary(self) -> SummaryRead:
        """The summary's reduction started where the field is: on the host done at once; on the GPU queued
        (row by row first: a whole-array CuPy reduction of the pitched rows' strided view runs in one CUDA
        block, about 0.1 s for 10000^2 cells) into three numbers copied to pinned host memory, read once they
        have arrived; a NaN or inf among them (a user's kernel's cells) has the five exact numbers taken then
        (``summary``)."""
        if self.gpu is None:
            return SummaryRead(summary(self.cpu_heat.field, np))
        import cupy
        import cupyx

        f = self.gpu.field
        with cupy.cuda.Device(self.device):
            lows, sums, highs = f.min(axis=1), f.sum(axis=1, dtype=cupy.float64), f.max(axis=1)
            three = cupy.stack([lows.min().astype(cupy.float64), sums.sum() / self.n, highs.max().astype(cupy.float64)])
            host = cupyx.empty_pinned((3,), np.float64)
            stream = cupy.cuda.get_current_stream()
            runtime = cupy.cuda.runtime
            runtime.memcpyAsync(host.ctypes.data, three.data.ptr, host.nbytes, runtime.memcpyDeviceToHost, stream.ptr)
            return SummaryRead(host, stream.record(), keep=three, exact=lambda: summary(f, cupy))


def summary(f, xp) -> tuple[float, float, float, int, int]:
    """``HeatScene.temperature_summary`` of the field ``f`` with numpy or CuPy (``xp``)."""
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf in the mean: answered below
        both = xp.stack([f.min().astype(xp.float64), f.mean(dtype=xp.float64), f.max().astype(xp.float64)])
    lo, mean, hi = (float(v) for v in (both.get() if xp is not np else both))
    if math.isfinite(lo + mean + hi):
        return lo, mean, hi, 0, 0
    finite = xp.isfinite(f)
    count = finite.sum(dtype=xp.float64)
    five = xp.stack(
        [
            xp.where(finite, f, xp.inf).min().astype(xp.float64),
            xp.where(finite, f, 0).sum(dtype=xp.float64) / xp.maximum(count, 1),
            xp.where(finite, f, -xp.inf).max().astype(xp.float64),
            xp.isnan(f).sum(dtype=xp.float64),
            xp.isinf(f).sum(dtype=xp.float64),
        ]
    )
    lo, mean, hi, nan, inf = (float(v) for v in (five.get() if xp is not np else five))
    if not count:
        lo = mean = hi = math.nan
    return lo, mean, hi, int(nan), int(inf)
