"""The durbin scene: the Levinson-Durbin recursion animated step by step, and batched LPC of a sound.

Recursion presets (ar, polybench, large): one system T y = -r of N entries on the active backend
(``durbin_cpu.DurbinCpu`` or ``gpu.DurbinGpu``), advanced ``speed`` steps per displayed frame (below 1:
a step every few frames; ``s`` steps once). Each frame the state (y, alphas, betas: k entries) is read
back for the plots: y, the alphas over the band |kappa| < 1, beta on a log axis and, for AR inputs,
the model spectrum from y beside the periodogram of a realisation of the process. In the ar preset
the process's reflection coefficients are drag points: a drag rebuilds r and replays the recursion
to the same k, so every plot follows at once. The lpc preset (``lpc_mode``) solves every frame of a
built-in sound in one batched call per displayed frame.

Verification (GPU): each frame's GPU steps are redone by the CPU twin from the same state, and y is
compared with scipy.linalg.solve_toeplitz of the leading k x k system (beyond k = 4096 the relative
residual |T y + r| / |r|, O(k log k), is reported instead); entries beyond the preset's tolerance
are drawn red. Items are the entries i of y (lpc: the frames). The steps, their checks and the user stage
are ``DurbinSteps``'s (steps.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

import assets
from sim.contract import Param, PlotsView, PointerEvent
from sim.durbin import AR_ORDER, FRAME, LPC_ORDER, PLAY, SPEC, SPEED, VARIANTS, durbin_cpu, inputs, plots
from sim.durbin.durbin_cpu import DurbinCpu
from sim.durbin.items import DurbinInspector
from sim.durbin.lpc_mode import LpcMode
from sim.durbin.readout import DurbinReadout
from sim.durbin.steps import DurbinSteps
from sim.framework.scene import Scene
from sim.gpu.timing import StageTimer

KAPPA_LIMIT = 0.99  # a dragged reflection coefficient stays inside (-0.99, 0.99)
DRAG_LIMIT = 8192  # the kappas can be dragged up to this N (each drag replays the recursion to k)

if TYPE_CHECKING:
    from sim.durbin.gpu import DurbinGpu


@dataclass
class DurbinSettings:
    speed: float = 1.0
    p: float = 4.0
    order: float = 16.0
    frame: float = 0.0
    play: float = 0.25


class DurbinScene(DurbinSteps, Scene):
    spec = SPEC
    inspector_type = DurbinInspector
    default_seed = 1

    def __init__(
        self,
        preset: str | None = None,
        backend: str = "cpu",
        n: int | None = None,
        seed: int | None = None,
        variant: str | None = None,
        block: Any = None,
        device: int = 0,
    ) -> None:
        self.settings = DurbinSettings()
        self.solver: DurbinCpu | DurbinGpu | None = None  # the recursion's (None in the lpc preset)
        self.lpc: LpcMode | None = None  # the lpc preset's frames (None in the other presets)
        self.host: dict[str, np.ndarray] = {}  # y, alphas, betas after k steps, on the host
        self.r = np.zeros(0)
        self.kappas: np.ndarray | None = None  # the AR process's reflection coefficients (AR inputs)
        self.noise_psd: tuple[np.ndarray, np.ndarray] | None = None  # (w / pi, power) of a realisation of the AR
        self.tolerance = 1e-12
        self.checked: dict[str, np.ndarray | None] = {}  # the last check's values, for describe_check
        self.max_error: float | None = None
        self.readout = DurbinReadout(self)  # the plots and statistics
        self._checked_version = -1  # the readout's version the last check saw
        self._stream: Any = None  # the lpc preset's CUDA stream (CuPy)
        super().__init__(preset, backend, n, seed, variant, block, device)
        self.checks.on_clear.append(self._forget_check)

    # --- presets ---------------------------------------------------------------------------------------
    def load_state(self, preset: str, n: int | None) -> None:
        table = assets.presets("durbin")[preset]
        fresh = preset != self.preset  # a reset (the same preset) keeps the sliders
        if "sound" in table:
            mode = LpcMode(str(assets.path(table["sound"])), float(table["frame_ms"]))
            mode.set_order(int(table["order"]) if fresh else int(self.settings.order))
            mode.solve(self.backend, StageTimer(), self.device, self._gpu_stream(self.backend))
            self.lpc, self.solver, self.r, self.kappas, self.noise_psd, self.host = (
                mode,
                None,
                np.zeros(0),
                None,
                None,
                {},
            )
            self.settings.order = float(mode.order)
            if fresh:
                self.settings.frame = float(mode.nearest_frame(0.2))
                self.settings.play = float(table.get("play", 0.25))
        else:
            size = int(n or table["count"])
            if size < 2:
                raise ValueError("the recursion needs N >= 2")
            kappas = np.asarray(table["kappas"], np.float64)[: size - 1] if table["input"] == "ar" else None
            r = inputs.ar_autocorr(size, kappas) if kappas is not None else inputs.polybench(size, "4")
            solver = self._new_solver(r, self.backend, 1)
            self.lpc, self.solver, self.r, self.kappas = None, solver, r, kappas
            self.tolerance = float(table["tolerance"])
            self.settings.speed = float(table["speed"]) if fresh else self.settings.speed
            self.settings.p = float(kappas.size) if kappas is not None else self.settings.p
            self._new_noise()
            self._read_back()
        self.readout.restart()
        self.readout.changed()

    @property
    def editable(self) -> bool:
        """Whether the user may change the kappas (AR inputs of N up to DRAG_LIMIT)."""
        return self.kappas is not None and self.r.size <= DRAG_LIMIT

    @property
    def draggable(self) -> bool:
        """Whether the kappas are drag points now (editable, the drag tool on)."""
        return self.editable and self.controls.tool_on

    def _new_solver(self, r: np.ndarray, backend: str, k: int):
        """A solver of T y = -r on ``backend`` advanced to k entries (a replay: the new state is its own)."""
        if backend == "gpu":
            from sim.durbin import gpu

            kernel, path = VARIANTS[self.knobs.variant]
            solver: DurbinCpu | DurbinGpu = gpu.DurbinGpu(
                r, kernel, block=self.knobs.threads, device=self.device, path=path
            )
        else:
            solver = durbin_cpu.DurbinCpu(r)
        solver.step(k - 1)
        return solver

    def _new_noise(self) -> None:
        self.noise_psd = (
            plots.periodogram(plots.realisation(self.kappas, self.seed)) if self.kappas is not None else None
        )

    def _gpu_stream(self, backend: str):
        if backend != "gpu":
            return None
        if self._stream is None:
            import cupy

            with cupy.cuda.Device(self.device):
                self._stream = cupy.cuda.Stream(non_blocking=True)
        return self._stream

    # --- where it runs -----------------------------------------------------------------------------------
    def move_state(self, backend: str) -> None:
        """Recursion: to the CPU the GPU's state itself; to the GPU a replay to the same k. lpc: solved again."""
        if backend == "cpu":
            self.checks.on = False
        if self.lpc is not None:
            self._stream = None
            self.lpc.device_r = None
            self.lpc.solve(backend, StageTimer(), self.device, self._gpu_stream(backend))
        elif backend == "cpu":
            solver = durbin_cpu.DurbinCpu(self.r)
            k = self.host["y"].shape[0]
            for name in ("y", "alphas", "betas"):
                getattr(solver, name)[:k] = self.host[name]
            solver.k = k
            self.solver = solver
        else:
            self.solver = self._new_solver(self.r, "gpu", self.recursion.k)
            self._read_back()
        self.readout.changed()

    def apply_gpu_knobs(self) -> None:
        if self.solver is not None and self.solver.backend == "gpu":
            self.solver = self._new_solver(self.r, "gpu", self.solver.k)
            self._read_back()
            self.readout.changed()

    @property
    def n(self) -> int:
        return self.lpc.frames * self.lpc.order if self.lpc is not None else int(self.r.size)

    @property
    def recursion(self) -> DurbinCpu | DurbinGpu:
        """``solver`` where the recursion runs (every preset but lpc)."""
        if self.solver is None:
            raise ValueError("the lpc preset solves its frames in batches, not one recursion: load another preset")
        return self.solver

    # --- sliders -----------------------------------------------------------------------------------------
    @property
    def params(self) -> tuple[Param, ...]:
        if self.lpc is not None:
            frame = Param(FRAME.name, FRAME.label, 0, self.lpc.frames - 1, FRAME.fmt, help=FRAME.help)
            return LPC_ORDER, frame, PLAY
        return (SPEED, AR_ORDER) if self.editable else (SPEED,)

    def param_changed(self, name: str, value: float) -> float:
        if name in ("p", "order", "frame"):
            value = float(round(value))
            setattr(self.settings, name, value)
        if name == "p" and self.kappas is not None:
            p = min(int(value), self.r.size - 1)
            self._set_kappas(np.concatenate([self.kappas, np.zeros(max(0, p - self.kappas.size))])[:p])
        elif name == "order" and self.lpc is not None and int(value) != self.lpc.order:
            self.lpc.set_order(int(value))
            self.lpc.solve(self.backend, StageTimer(), self.device, self._gpu_stream(self.backend))
            self.checks.clear()
        self.readout.changed()
        return value

    # --- the drag points -----------------------------------------------------------------------------------
    def pointer(self, event: PointerEvent) -> None:
        """A moved drag point: a reflection coefficient (its height, kept inside +-0.99) or the lpc frame."""
        if event.kind != "point" or not self.controls.tool_on:
            return
        if event.target.startswith("kappa") and self.editable and self.kappas is not None:  # editable: kappas
            i = int(event.target[len("kappa") :])
            if 0 <= i < self.kappas.size:
                kappas = self.kappas.copy()
                kappas[i] = float(np.clip(event.y, -KAPPA_LIMIT, KAPPA_LIMIT))
                self._set_kappas(kappas)
        elif event.target == "frame" and self.lpc is not None:
            self.settings.frame = float(self.lpc.nearest_frame(event.x))
            self.readout.changed()

    def _set_kappas(self, kappas: np.ndarray) -> None:
        """New reflection coefficients: r, the recursion replayed to the same k, a new realisation."""
        r = inputs.ar_autocorr(self.r.size, kappas)
        solver = self.recursion
        self.solver = self._new_solver(r, solver.backend, solver.k)
        self.r, self.kappas = r, kappas
        self.settings.p = float(kappas.size)
        self._new_noise()
        self._read_back()
        self.checks.clear()
        self.readout.changed()

    # --- what the viewer reads: the plots and statistics (readout), the CUDA block behind each entry ------------
    @property
    def color_modes(self) -> dict[str, str]:
        return {"plain": "Plain", **super().color_modes}

    def view(self, color_mode: str) -> PlotsView:
        return self.readout.view(color_mode)

    def stats(self) -> dict:
        return self.readout.stats()

    @property
    def frame(self) -> int:
        """The lpc preset's selected frame (0 in the recursion presets)."""
        return int(np.clip(round(self.settings.frame), 0, self.lpc.frames - 1)) if self.lpc is not None else 0

    def owners(self) -> np.ndarray | None:
        """The CUDA block behind each entry (the last step's update) or frame (lpc); None on the CPU."""
        if not self.knobs.block_colors_available():
            return None
        if self.lpc is None:
            k = self.host["y"].shape[0]
            return self.recursion.owners(k - 1)[:k]
        return self.lpc.owners(self.device)
