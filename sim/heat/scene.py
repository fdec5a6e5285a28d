"""The heat scene: the DLI's temperature field as a colour-mapped image, stepped on the CPU twin
(``HeatCpu``) or on the GPU (``HeatGpu``: any variant, block shape and k), painted with the mouse.

A frame is ``steps_per_frame`` steps in one timed stage ("step"): one numba call on the CPU, queued
launches on the GPU (the temporal kernel takes k steps a launch). The view is a ``FieldView`` in
cell units (cell (i, j) covers [i, i+1) x [j, j+1), row 0 at the bottom): on the CPU ``host()`` hands
over the twin's current buffer itself; on the GPU ``write`` copies the field device to device into the
viewer's mapped GL buffer (the paint tool, the view and the temperature summary: ``HeatView``, view.py).
Under verification each frame's GPU steps are redone on the CPU from a host copy of the field taken before
them; differing cells are NaN in what the view shows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sim.cmdline.cli import Refused
from sim.contract import BLOCK_COLORS
from sim.framework.scene import Scene, present
from sim.gpu.cuda import GpuCompileError
from sim.heat import SPEC
from sim.heat.cells import HeatInspector
from sim.heat.presets import grid_shape, initial_field, preset_table
from sim.heat.stats import HeatReadout
from sim.heat.stencil_cpu import HeatCpu
from sim.heat.view import TEMPERATURE, TEMPERATURE_RANGE, HeatView

if TYPE_CHECKING:
    from sim.heat.gpu import HeatGpu

FMA_TOLERANCE = 1e-4  # fma on: GPU and CPU round differently; a wrong kernel is off by far more


@dataclass
class HeatSettings:
    """The sliders (``SPEC.params``)."""

    factor: float
    steps_per_frame: float


class HeatScene(HeatView, Scene):
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

    # --- what the viewer reads (the paint tool, the view, the summary: HeatView, view.py) ---------------
    @property
    def color_modes(self) -> dict[str, str]:
        return {TEMPERATURE: "Temperature", **super().color_modes}

    def stats(self) -> dict:
        return self.readout.stats()
