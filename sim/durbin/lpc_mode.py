"""The durbin scene's lpc preset: linear prediction of a sound, every frame's system in one batched
solve on the active backend (``durbin_cpu.batched`` or ``batched_gpu.batched``), and its plots.

Frames, window and autocorrelation are ``sim.durbin.lpc``'s (20 ms, 50% overlap, periodic Hann,
r = R[1..p] / R[0]). Per frame the plots show the windowed frame's power spectrum |X|^2 and the LPC
envelope E_p R_0 / |A(e^jw)|^2 on the same scale (both have R_0 as their mean over the FFT bins),
the reflection coefficients, the poles of A(z) and the prediction error of every order.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from sim.contract import Plot
from sim.durbin import durbin_cpu, lpc, lpc_plots, plots
from sim.durbin.lpc_plots import db
from sim.framework import finite

NFFT = 512  # the display spectra's FFT length (a 20 ms frame at 16 kHz is 320 samples)


class LpcMode:
    """The sound, its frames' display spectra and right-hand sides at the current order, and the last
    batched solution (y, alphas per frame, on the host)."""

    r: np.ndarray  # per frame: the right-hand side at ``order`` (``set_order``)
    r0: np.ndarray  # per frame: its energy R_0
    y: np.ndarray  # per frame: the last solution (``take``)
    alphas: np.ndarray

    def __init__(self, path: str, frame_ms: float):
        self.audio = lpc.read_wav(path)
        rate = self.audio.rate
        self.length, self.hop, self.frames = lpc.frame_geometry(self.audio.samples.size, rate, frame_ms, 2)
        index = np.arange(self.frames)[:, None] * self.hop + np.arange(self.length)[None, :]
        window = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(self.length) / self.length)  # lpc's periodic Hann
        self.power = np.abs(np.fft.rfft(self.audio.samples[index] * window, NFFT, axis=1)) ** 2
        self.freq_khz = np.arange(NFFT // 2 + 1) * rate / NFFT / 1000.0
        self.centres = (np.arange(self.frames) * self.hop + self.length / 2) / rate  # seconds
        self.order = 0
        self.finite_frames = np.zeros(0, bool)  # per frame: are its y and alphas all numbers (a user's kernel's?)
        self.device_r: Any = None  # the GPU's copy of r (CuPy), made on first use

    def set_order(self, order: int) -> None:
        """The frames' right-hand sides at ``order`` (the solution waits for the next ``solve``)."""
        if not 2 <= order < self.length:
            raise ValueError(f"LPC order must be 2..{self.length - 1} (below the frame length), got {order}")
        R = lpc.autocorrelation(self.audio.samples, self.length, self.hop, self.frames, order)
        self.order, self.r0, self.r = order, R[:, 0], lpc.normalised(R)
        self.device_r = None

    def solve(self, backend: str, timer, device: int = 0, stream=None) -> float:
        """Every frame in one batched call; the solve's milliseconds (CUDA events on the GPU) go to the
        timer's "recursion" stage, the copy back to "read back". Returns the solve's milliseconds."""
        if backend == "gpu":
            import cupy

            from sim.durbin import batched_gpu

            with cupy.cuda.Device(device), stream:
                if self.device_r is None:
                    self.device_r = cupy.asarray(self.r)
                start, end = cupy.cuda.Event(), cupy.cuda.Event()
                start.record(stream)
                y, alphas, _ = batched_gpu.batched(self.device_r, device=device, stream=stream)
                end.record(stream)
                end.synchronize()
                ms = cupy.cuda.get_elapsed_time(start, end)
                copied = time.perf_counter()
                self.take(y.get(stream=stream), alphas.get(stream=stream))
                timer.add("read back", (time.perf_counter() - copied) * 1e3)
        else:
            started = time.perf_counter()
            y, alphas, _ = durbin_cpu.batched(self.r)
            ms = (time.perf_counter() - started) * 1e3
            self.take(y, alphas)
            timer.add("read back", 0.0)
        timer.add("recursion", ms)
        return ms

    def take(self, y: np.ndarray, alphas: np.ndarray) -> None:
        """A solution of every frame (the scene's solve or a user's kernel), its frames that hold NaN or inf
        found once here, not by every plot."""
        self.y, self.alphas = y, alphas
        self.finite_frames = finite.finite_rows(y) & finite.finite_rows(alphas)

    def nonfinite_note(self) -> str:
        """The statistic's text: what the solution holds that is not a number (CLEAN when nothing)."""
        if self.finite_frames.all():
            return finite.CLEAN
        frames = int(np.count_nonzero(~self.finite_frames))
        return finite.notes({"y": finite.text(self.y), "alphas": finite.text(self.alphas)}, f"{frames:,} frames")

    # --- one frame -----------------------------------------------------------------------------------
    def errors(self, frame: int) -> np.ndarray:
        """E_0 .. E_p of the frame: normalised prediction-error power against order."""
        with np.errstate(over="ignore", invalid="ignore"):
            return plots.prediction_errors(self.alphas[frame])

    def gain_db(self, frame: int) -> float:
        return float(-db(self.errors(frame)[-1]))

    def poles(self, frame: int) -> np.ndarray:
        """The roots of z^p A(z) = z^p + a_1 z^(p-1) + ... + a_p; none when a coefficient is not a number
        (``np.roots`` refuses them: ``no_poles_reason`` says why)."""
        if not self.finite_frames[frame]:
            return np.empty(0, complex)
        try:
            return np.roots(np.concatenate([[1.0], self.y[frame]]))
        except np.linalg.LinAlgError:  # finite garbage (1e300) overflows inside the eigenvalue solver
            return np.empty(0, complex)

    def no_poles_reason(self, frame: int, poles: np.ndarray | None = None) -> str:
        """Why the frame has no poles to show ("" when it has; ``poles``: its ``poles``, when known): its
        coefficients are not all numbers, or so large that the roots overflow."""
        if self.finite_frames[frame]:
            poles = self.poles(frame) if poles is None else poles
            return "" if poles.size else "coefficients so large that the eigenvalue solver overflowed: no roots"
        return (
            f"a_1..a_p hold {finite.text(self.y[frame]) or 'numbers only'}, alphas "
            f"{finite.text(self.alphas[frame]) or 'numbers only'}: no roots of A(z)"
        )

    def envelope(self, frame: int) -> np.ndarray:
        """E_p R_0 / |A(e^jw)|^2 at the display spectrum's frequencies."""
        a = np.concatenate([[1.0], self.y[frame]])
        with np.errstate(invalid="ignore", over="ignore"):  # a user's NaN or inf: the plot marks it
            response = np.abs(np.fft.rfft(a, NFFT)) ** 2
            return self.errors(frame)[-1] * self.r0[frame] / np.maximum(response, 1e-300)

    def nearest_frame(self, seconds: float) -> int:
        return int(np.clip(np.argmin(np.abs(self.centres - seconds)), 0, self.frames - 1))

    # --- where it ran ------------------------------------------------------------------------------------
    def kernel_text(self, backend: str) -> str:
        if backend != "gpu":
            return "CPU twin, batched (numba, a core per frame)"
        from sim.durbin import batched_gpu

        return f"batched kernel, group {batched_gpu.batched_group(self.order)}"

    def owners(self, device: int = 0) -> np.ndarray:
        """The CUDA block of ``batched_gpu.batched`` (auto group and block) that solves each frame."""
        from sim.durbin import batched_gpu

        group = batched_gpu.batched_group(self.order)
        _, threads, _ = batched_gpu.batched_shape(self.frames, self.order, group, None, 8, device)
        per_block = {"register": threads, "thread": threads, "warp": threads // 32}.get(group, 1)
        return np.arange(self.frames) // per_block

    # --- verification --------------------------------------------------------------------------------
    def check(self) -> tuple[np.ndarray, dict, np.ndarray, np.ndarray]:
        """The last solution against the CPU twin's batched solve of the same r and scipy's: (frames beyond
        their tolerance, figures, the twin's y, scipy's y). A frame's tolerance is max(1e-10, 1000 eps p
        cond(T)) as for ``lpc --compare`` (the sums run in another order), its error relative to max |y|."""
        import scipy.linalg

        from sim.durbin.inputs import toeplitz_column

        twin, _, _ = durbin_cpu.batched(self.r)
        column = toeplitz_column(self.r)
        try:
            reference = scipy.linalg.solve_toeplitz(column, -self.r[..., None])[..., 0]  # batched since SciPy 1.17
        except (ValueError, TypeError):
            reference = np.array([scipy.linalg.solve_toeplitz(c, -r) for c, r in zip(column, self.r, strict=True)])
        scale = np.maximum(np.abs(reference).max(axis=1), np.finfo(float).tiny)
        to_twin = np.abs(self.y - twin).max(axis=1) / scale
        to_scipy = np.abs(self.y - reference).max(axis=1) / scale
        tolerance = np.full(self.frames, 1e-10)
        for frame in np.flatnonzero(np.maximum(to_twin, to_scipy) > 1e-10):
            cond = np.linalg.cond(scipy.linalg.toeplitz(column[frame]))
            tolerance[frame] = max(1e-10, 1000 * np.finfo(float).eps * self.order * cond)
        beyond = (to_twin > tolerance) | (to_scipy > tolerance) | ~np.isfinite(self.y).all(axis=1)
        details = {
            "largest difference to the CPU twin": float(to_twin.max(initial=0.0)),
            "largest difference to scipy": float(to_scipy.max(initial=0.0)),
            "bit-identical frames": int(np.count_nonzero((self.y == twin).all(axis=1))),
        }
        return beyond, details, twin, reference

    def plots(self, frame: int, marked: np.ndarray | None, owners: np.ndarray | None, draggable: bool) -> list[Plot]:
        """Spectrogram, z-plane, the frame's spectrum, its reflection coefficients and its error by order
        (``lpc_plots``), in the order that puts them in two columns (plot i in column i % 2)."""
        return lpc_plots.plots(self, frame, marked, owners, draggable)
