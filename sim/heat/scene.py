"""The heat scene: the DLI's temperature field as a colour-mapped image, stepped on the CPU twin
(``HeatCpu``) or on the GPU (``HeatGpu``: any variant, block shape and k), painted with the mouse.

A frame is ``steps_per_frame`` steps in one timed stage ("step"): one numba call on the CPU, queued
launches on the GPU (the temporal kernel takes k steps a launch). The view is a ``FieldView`` in
cell units (cell (i, j) covers [i, i+1) x [j, j+1), row 0 at the bottom): on the CPU ``host()`` hands
over the twin's current buffer itself; on the GPU ``write`` copies the field device to device into the
viewer's mapped GL buffer. Under verification each frame's GPU steps are redone on the CPU from a
host copy of the field taken before them; differing cells are NaN in what the view shows.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sim.cmdline.cli import Refused
from sim.contract import BLOCK_COLORS, FieldView, Legend, PointerEvent
from sim.framework.scene import Scene, present
from sim.gpu.cuda import GpuCompileError
from sim.heat import SPEC
from sim.heat.cells import HeatInspector
from sim.heat.presets import grid_shape, initial_field, preset_table
from sim.heat.stats import HeatReadout, SummaryRead
from sim.heat.stencil_cpu import HeatCpu

if TYPE_CHECKING:
    from sim.heat.gpu import HeatGpu

TEMPERATURE = "temperature"
TEMPERATURE_RANGE = (0.0, 100.0)  # the DLI's temperatures: what the colours span until the panel says otherwise
FMA_TOLERANCE = 1e-4  # fma on: GPU and CPU round differently; a wrong kernel is off by far more


@dataclass
class HeatSettings:
    """The sliders (``SPEC.params``)."""

    factor: float
    steps_per_frame: float


class HeatScene(Scene):
    spec = SPEC
    inspector_type = HeatInspector
    default_seed = 1  # glibc srand(1): the DLI's field (it never calls srand)
    # 4M cells step on one core (a 10-step frame at 1000x1000: ~1.5 ms), the other left to the renderer
    serial_items = 1 << 22

    def __init__(
        self,
        preset: str | None = None,
        backend: str = "cpu",
        n: int | None = None,
        seed: int | None = None,
        variant: str | None = None,
        block: Any = None,
        device: int = 0,
        **options: str,
    ) -> None:
        self.cpu: HeatCpu | None = None
        self.gpu: HeatGpu | None = None  # when the field is on the device
        self.ni = self.nj = 0
        self.settings = HeatSettings(0.0, float(SPEC.steps_per_frame))
        self._stroke: tuple[float, float] | None = None  # the last painted point of a drag
        self.checked: tuple[np.ndarray, np.ndarray] | None = None  # the last check's (GPU, CPU) fields
        self._marked_device: Any = None  # CuPy: flat indices of the differing cells, on the device
        self.readout = HeatReadout(self)  # the statistics
        start = preset or SPEC.default_preset
        if seed is not None and preset_table(start)["init"] != "rand":
            raise ValueError(f"preset {start} draws nothing at random: a seed does not apply")
        if options.get("k") is not None and (variant or SPEC.gpu_knobs.default_variant) != "temporal":
            raise ValueError("k (steps per launch) applies to the temporal kernel only (add --variant temporal)")
        super().__init__(preset, backend, n, seed, variant, block, device, **options)
        self.checks.on_clear.append(self._forget_check)
        self.color_scales.ranges.update({TEMPERATURE: TEMPERATURE_RANGE, BLOCK_COLORS: TEMPERATURE_RANGE})

    # --- state -----------------------------------------------------------------------------------
    @property
    def k(self) -> int:
        return int(self.knobs.options["k"])

    @property
    def fma(self) -> bool:
        return self.knobs.options["fma"] == "on"

    @property
    def sim(self):
        """The stepper holding the field: HeatGpu or HeatCpu."""
        return self.gpu if self.gpu is not None else self.cpu

    @property
    def cpu_heat(self) -> HeatCpu:
        """The stepper on the CPU backend (``cpu``), there whenever the field is not on the GPU."""
        return present(self.cpu, "the field is on the GPU")

    @property
    def gpu_heat(self) -> HeatGpu:
        """The stepper on the GPU backend (``gpu``), there whenever the field is on the device."""
        return present(self.gpu, "the field is on the CPU")

    @property
    def n(self) -> int:
        return self.ni * self.nj

    @property
    def frame_steps(self) -> int:
        return max(1, int(round(self.settings.steps_per_frame)))

    def load_state(self, preset: str, n: int | None) -> None:
        table = preset_table(preset)
        ni, nj = grid_shape(table, n)
        _, most = self.count_range
        if ni * nj > most:
            # The GPU takes more cells: worth saying only where there is one to switch to.
            cells, gpu_most = ni * nj, self.spec.count_limits[1]
            gpu_takes = self.backend == "cpu" and "gpu" in self.supported_backends and cells <= gpu_most
            advice = ("use the GPU backend (a, --backend gpu) or " if gpu_takes else "use ") + "fewer cells (-n)"
            raise Refused(
                f"preset {preset}: {ni:,} x {nj:,} = {cells:,} cells is more than the "
                f"{self.backend.upper()} backend takes ({most:,}); {advice}"
            )
        new = preset != self.preset  # another preset brings its own sliders; a reload (r, -n) keeps them
        factor = float(table["factor"]) if new else self.settings.factor
        field = initial_field(table, ni, nj, self.seed)
        if self.backend == "gpu":
            self.cpu, self.gpu = None, self._new_gpu(field, factor, compile_now=False)
        else:
            self.cpu, self.gpu = HeatCpu(field, factor), None
        self.ni, self.nj = ni, nj
        if new:
            self.settings = HeatSettings(factor, float(SPEC.steps_per_frame))
            self.controls.tool_values.update(radius=max(1.5, round(min(ni, nj) / 40, 1)), temperature=100.0)
        self._changed(fresh=True)

    def _new_gpu(self, field: np.ndarray, tfac: float, compile_now: bool = True) -> HeatGpu:
        """A HeatGpu on the field; ``compile_now``: its variant compiled now (a switch from the CPU: a compile
        error then keeps the state on the CPU), else at its first step (a new scene: the viewer shows that
        under its warm-up screen)."""
        from sim.heat.gpu import HeatGpu

        sim = HeatGpu(
            field,
            device=self.device,
            kernel=self.knobs.variant,
            block=self.knobs.block,
            k=self.k,
            fma=self.fma,
            tfac=tfac,
        )
        if compile_now:
            sim.launch_info()
        return sim

    def move_state(self, backend: str) -> None:
        if backend == "gpu":
            cpu = self.cpu_heat
            self.gpu = self._new_gpu(cpu.field, float(cpu.tfac))
            self.cpu = None
        else:
            most = self.spec.count_limits[0]
            if self.n > most:
                raise ValueError(
                    f"{self.n:,} cells is more than the CPU backend takes ({most:,}): stay on the GPU "
                    "or load fewer cells"
                )
            gpu = self.gpu_heat
            self.cpu = HeatCpu(gpu.get(), float(gpu.tfac))
            self.gpu = None
            self.checks.on = False
        self._changed(fresh=True)

    def apply_gpu_knobs(self) -> None:
        if self.gpu is not None:
            self.gpu.configure(kernel=self.knobs.variant, block=self.knobs.block, k=self.k, fma=self.fma)
            self.gpu.launch_info()

    def param_changed(self, name: str, value: float) -> float:
        if name == "factor":
            self.sim.tfac = np.float32(value)
        return value

    def _changed(self, fresh: bool = False) -> None:
        self.readout.changed(fresh)

    def _forget_check(self) -> None:
        self.checked = self._marked_device = None

    # --- stepping --------------------------------------------------------------------------------
    def advance(self, steps: int) -> int:
        self.readout.take_frame_times()
        before = self.gpu.get() if self.gpu is not None and self.checks.on else None
        if self.gpu is not None:
            try:
                with self.timer.stage("step"):
                    self.gpu.step(steps)
            except GpuCompileError as exc:  # the first step compiles: the GPU goes off, the CPU carries on
                self.gpu_failed(exc)
                before = None
        if self.cpu is not None:
            with self.timer.stage("step"):  # on the threads run_frame sets
                self.cpu.advance(steps)
        self._changed()
        if before is not None:
            self._verify(before, steps)
        return steps

    def _verify(self, before: np.ndarray, steps: int) -> None:
        """The same steps on the CPU twin from the field the GPU started from; compared bit for bit
        (with fma on: within 1e-4, or one rounding of the largest value a step when that is more)."""
        started = time.perf_counter()
        twin = HeatCpu(before, float(self.gpu_heat.tfac))
        twin.advance(steps)
        gpu, cpu = self.gpu_heat.get(), twin.field
        if self.fma:
            top = float(np.max(np.abs(before), initial=0.0))
            tolerance = max(FMA_TOLERANCE, steps * float(np.spacing(np.float32(top))))
            differ = ~(np.abs(gpu - cpu) <= tolerance)
            compared = f"within {tolerance:.3g} (fma on)"
        else:
            differ = gpu.view(np.uint32) != cpu.view(np.uint32)
            compared = "bit for bit"
        error = float(np.max(np.abs(gpu - cpu), initial=np.float32(0)))
        mismatch = differ.reshape(-1)
        self._mark(mismatch, (gpu, cpu))
        self.checks.record(
            "the CPU steps from the same field",
            mismatch,
            started,
            {"max error": error, "steps checked": steps, "compared": compared},
        )

    def _mark(self, mismatch: np.ndarray, checked=None) -> None:
        """Keep a check's differing cells (flat) for the view: NaN on the host, a device index list on the GPU."""
        self.checked = checked
        if mismatch.any() and self.gpu is not None:
            import cupy

            with cupy.cuda.Device(self.device):
                self._marked_device = cupy.asarray(np.flatnonzero(mismatch))
        else:
            self._marked_device = None

    # --- a step computed outside the scene (a user's kernel: sim.heat.user_stage) ------------------------------
    def user_stage_inputs(self, stage: str) -> dict:
        field = self.gpu.get() if self.gpu is not None else self.cpu_heat.field.copy()
        return {"tin": field, "tfac": np.float32(self.sim.tfac)}

    def apply_user_stage(self, stage: str, inputs: dict, outputs: dict, comparison) -> None:
        """The user's field as the new one, on either backend; ``comparison`` against the CPU twin's step from the
        same field marks the cells it got wrong, as verification marks them."""
        self.sim.load(outputs["tout"])
        if comparison is not None:
            self._mark(comparison.mismatch)
            self.checks.record_user(
                "the CPU step from the same field",
                comparison,
                {"max error": comparison.max_abs, "steps checked": 1, "compared": comparison.rule},
            )
        self._changed()

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
    @property
    def color_modes(self) -> dict[str, str]:
        return {TEMPERATURE: "Temperature", **super().color_modes}

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

    # --- the statistics (readout) and the temperature summary they show ---------------------------
    def stats(self) -> dict:
        return self.readout.stats()

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
