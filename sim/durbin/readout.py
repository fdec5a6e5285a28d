"""What the viewer reads of the durbin scene each frame: its plots, built from the host copies of the
state (``plots``; the lpc preset's from ``lpc_mode``) and cached until what they show changes, and its
statistics (mixed into ``DurbinScene``)."""

from __future__ import annotations

import time

import numpy as np

from sim.contract import BLOCK_COLORS, PlotsView
from sim.durbin import SPEC, plots


class DurbinReadout:
    def _timed_plots(self) -> None:
        """The plots stage: this frame's view built (in the colour mode the viewer last asked for), timed."""
        started = time.perf_counter()
        self.view(self._mode)
        self.timer.add("plots", (time.perf_counter() - started) * 1e3)

    @property
    def color_modes(self) -> dict[str, str]:
        return {"plain": "Plain", **super().color_modes}

    def view(self, color_mode: str) -> PlotsView:
        self._mode = color_mode
        key = (self._version, color_mode, self.tool_on, self.verify, id(self.verification))
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        owners = self.owners() if color_mode == BLOCK_COLORS else None
        if self.lpc is not None:
            marked = self.mismatch if self.verify and self.mismatch is not None else None
            view = PlotsView(self.lpc.plots(self.frame, marked, owners, self.tool_on), columns=2)
        else:
            h, n = self.host, self.r.size
            k = h["y"].shape[0]
            right = plots.spectrum_plot(h["y"], h["alphas"], self.noise_psd, self.kappas) \
                if self.kappas is not None else plots.input_plot(self.r)
            view = PlotsView([plots.y_plot(h["y"], n, k, self.marked(n), owners),
                              plots.alphas_plot(h["alphas"], n, self.kappas, self.draggable),
                              plots.beta_plot(h["betas"], n), right], columns=2)
        self._cache = (key, view)
        return view

    @property
    def frame(self) -> int:
        return int(np.clip(round(self.settings.frame), 0, self.lpc.frames - 1)) if self.lpc is not None else 0

    def stats(self) -> dict:
        out = {stat.key: None for stat in SPEC.stats}  # a figure of the other mode prints as "-"
        out.update(n=self.n, steps=self.steps, sim_time=0.0, max_error=self.max_error if self.verify else None)
        total_m, total_ms = sum(m for m, _ in self._rate), sum(ms for _, ms in self._rate)
        if self.lpc is not None:
            mode, frame = self.lpc, self.frame
            out.update(frames=mode.frames, frame=f"{frame} at {mode.centres[frame]:.3f} s",
                       gain_db=mode.gain_db(frame), batch_ms=self.last_ms, kernel=mode.kernel_text(self.backend))
            return out
        h, solver = self.host, self.solver
        k = h["y"].shape[0]
        out.update(k=f"{k:,} of {self.r.size:,}" + (" (done)" if k >= self.r.size else ""),
                   alpha_k=float(h["alphas"][k - 1]), beta_k=float(h["betas"][k - 1]),
                   us_per_step=self.last_ms * 1e3 / self.last_m if self.last_m else None,
                   steps_per_s=total_m / (total_ms * 1e-3) if total_ms > 0 else None,
                   kernel=f"{solver.kernel}: {solver.path}" if solver.backend == "gpu" else f"CPU twin ({solver.path})")
        return out
