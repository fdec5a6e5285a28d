"""What the viewer reads of the durbin scene each frame: its plots, built from the host copies of the
state (``plots``; the lpc preset's from ``lpc_plots``) and cached until what they show changes, and its
statistics. The scene holds one ``DurbinReadout`` and hands the viewer's ``view`` and ``stats`` to it."""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING, Any

from sim.contract import BLOCK_COLORS, PlotsView
from sim.durbin import SPEC, plots
from sim.framework import finite

if TYPE_CHECKING:
    from sim.durbin.scene import DurbinScene

RATE_FRAMES = 60  # frames over which steps/s is measured


class DurbinReadout:
    """Reads the scene through its public state (host copies, r, kappas, the lpc mode, verification) and
    keeps what is its own: the version of what the plots show, the cached view, the colour mode the viewer
    last asked for, and the solver's timings."""

    def __init__(self, scene: DurbinScene) -> None:
        self.scene = scene
        self.version = 0  # bumped whenever what the plots show changes
        self.last_m, self.last_ms = 0, 0.0  # the last solve: recursion steps (lpc: frames) and its milliseconds
        self._rate: deque[tuple[int, float]] = deque(maxlen=RATE_FRAMES)  # (steps, ms) of the last frames
        self._cache: tuple | None = None
        self._mode = ""  # the colour mode of the last view (the plots stage builds that one)
        self._note: tuple[int, str] | None = None  # (version, the non-finite values' statistic)

    def changed(self) -> None:
        """What the plots show changed."""
        self.version += 1
        self._cache = None

    def forget(self) -> None:
        """The verification's marks changed: the next view is built afresh."""
        self._cache = None

    def restart(self) -> None:
        """A new system: no timings yet."""
        self._rate.clear()
        self.last_m, self.last_ms = 0, 0.0

    def solved(self, m: int, ms: float, steps: bool = True) -> None:
        """The solver took ``ms`` for ``m`` recursion steps (``steps`` False: the lpc preset's batch of m frames)."""
        self.last_m, self.last_ms = m, ms
        if steps:
            self._rate.append((m, ms))

    def timed_plots(self) -> None:
        """The plots stage: this frame's view built (in the colour mode the viewer last asked for), timed."""
        started = time.perf_counter()
        self.view(self._mode)
        self.scene.timer.add("plots", (time.perf_counter() - started) * 1e3)

    def view(self, color_mode: str) -> PlotsView:
        scene = self.scene
        self._mode = color_mode
        key = (self.version, color_mode, scene.controls.tool_on, scene.checks.on, id(scene.checks.verification))
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        owners = scene.owners() if color_mode == BLOCK_COLORS else None
        if scene.lpc is not None:
            marked = scene.checks.mismatch if scene.checks.on and scene.checks.mismatch is not None else None
            view = PlotsView(scene.lpc.plots(scene.frame, marked, owners, scene.controls.tool_on), columns=2)
        else:
            h, n = scene.host, scene.r.size
            k = h["y"].shape[0]
            right = (
                plots.spectrum_plot(h["y"], h["alphas"], scene.noise_psd, scene.kappas)
                if scene.kappas is not None
                else plots.input_plot(scene.r)
            )
            view = PlotsView(
                [
                    plots.y_plot(h["y"], n, k, scene.checks.marked(n), owners),
                    plots.alphas_plot(h["alphas"], n, scene.kappas, scene.draggable),
                    plots.beta_plot(h["betas"], n),
                    right,
                ],
                columns=2,
            )
        self._cache = (key, view)
        return view

    def stats(self) -> dict:
        scene = self.scene
        out: dict[str, Any] = {stat.key: None for stat in SPEC.stats}  # a figure of the other mode prints as "-"
        out.update(n=scene.n, steps=scene.steps, sim_time=0.0, max_error=scene.max_error if scene.checks.on else None)
        total_m, total_ms = sum(m for m, _ in self._rate), sum(ms for _, ms in self._rate)
        if scene.lpc is not None:
            mode, frame = scene.lpc, scene.frame
            out.update(
                frames=mode.frames,
                frame=f"{frame} at {mode.centres[frame]:.3f} s",
                gain_db=mode.gain_db(frame),
                batch_ms=self.last_ms,
                kernel=mode.kernel_text(scene.backend),
                nonfinite=mode.nonfinite_note(),
            )
            return out
        h, solver = scene.host, scene.recursion
        k = h["y"].shape[0]
        out.update(
            k=f"{k:,} of {scene.r.size:,}" + (" (done)" if k >= scene.r.size else ""),
            entries=k,
            alpha_k=float(h["alphas"][k - 1]),
            beta_k=float(h["betas"][k - 1]),
            us_per_step=self.last_ms * 1e3 / self.last_m if self.last_m else None,
            steps_per_s=total_m / (total_ms * 1e-3) if total_ms > 0 else None,
            kernel=f"{solver.kernel}: {solver.path}" if solver.backend == "gpu" else f"CPU twin ({solver.path})",
            nonfinite=self._nonfinite_note(),
        )
        return out

    def _nonfinite_note(self) -> str:
        """What the host copies hold that is not a number, counted once per change (stats are read every frame)."""
        if self._note is None or self._note[0] != self.version:
            h = self.scene.host
            self._note = (self.version, finite.notes({name: finite.text(h[name]) for name in ("y", "alphas", "betas")}))
        return self._note[1]
