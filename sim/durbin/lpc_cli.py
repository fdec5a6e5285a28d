"""The ``lpc`` command: batched linear prediction of a mono PCM WAV file (sim/durbin/lpc.py), on the
CPU or the GPU."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from sim.cmdline.cli import Command, UsageError, count, count_text, number


@dataclass(frozen=True)
class LpcRequest:
    """``lpc``'s arguments as parsed (``add_lpc_arguments``)."""

    file: str
    order: int
    frame_ms: float
    backend: str
    output: str | None
    compare: bool


def add_lpc_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE.wav", help="mono PCM WAV (8, 16, 24 or 32-bit)")
    p.add_argument(
        "--order",
        type=lambda s: count(s, 2, "order"),
        default=32,
        help="prediction order, below the frame length (default 32; GPU batched kernels: up to 1024)",
    )
    p.add_argument(
        "--frame-ms",
        type=lambda s: number(s, "frame length"),
        default=20.0,
        help="frame length in ms, hop half of it (default 20, at most 60000)",
    )
    p.add_argument("--backend", default="cpu", choices=("cpu", "gpu"), help="default cpu")
    p.add_argument(
        "--output",
        metavar="F.npy",
        help="write one record per frame (numpy structured array): start, r0, error, a (predictor "
        "coefficients), k (reflection coefficients), r (normalised autocorrelation lags)",
    )
    p.add_argument(
        "--compare",
        action="store_true",
        help="check every frame against scipy's solve_toeplitz; exit 1 when one is off by more than "
        "max(1e-10, 1000 eps order cond(T))",
    )


def run_lpc(request: LpcRequest) -> int:
    from sim.cmdline.writer import atomic_output, check_target
    from sim.durbin import lpc

    if request.output:
        check_target(request.output, "--output", inputs=[request.file])
    if request.backend == "gpu" and request.order > 1024:
        raise UsageError(f"the GPU's batched kernels take orders up to 1024, got {count_text(request.order)}")
    audio = lpc.read_wav(request.file)
    length, hop, frames = lpc.frame_geometry(audio.samples.size, audio.rate, request.frame_ms, request.order)
    lpc.check_memory(frames * (3 * request.order + 3 + length) * 8, f"{frames:,} frames of order {request.order}")
    if request.backend == "gpu":
        from sim.gpu.backend import BackendUnavailable, gpu_status

        if not gpu_status().available:
            raise BackendUnavailable(f"GPU backend unavailable: {gpu_status().reason}")
    out, t = lpc.analyse(audio, request.order, request.frame_ms, request.backend)
    seconds = audio.samples.size / audio.rate
    print(
        f"lpc: {request.file}: {audio.rate} Hz, {audio.bits}-bit mono, {seconds:.2f} s; {frames:,} frames of "
        f"{length} samples (hop {hop}), order {request.order}"
    )
    gain = -10 * np.log10(np.clip(out["error"][out["r0"] > 0], 1e-300, None))
    silent = int(np.count_nonzero(out["r0"] == 0))
    print(
        f"backend {request.backend}: batched Durbin {t['durbin_s'] * 1e3:.3f} ms, whole analysis "
        f"{t['total_s'] * 1e3:.1f} ms; mean prediction gain {gain.mean() if gain.size else 0:.2f} dB "
        f"({silent} silent frames)"
    )
    status = 0
    if request.compare:
        err, tol, frame = lpc.compare_scipy(out)
        ok = err <= tol
        print(
            f"max relative difference to scipy.linalg.solve_toeplitz: {err:.3e} at frame {frame} "
            f"(tolerance {tol:.3g}: {'ok' if ok else 'FAIL'})"
        )
        status = 0 if ok else 1
    if request.output:
        with atomic_output(request.output, binary=True, what="--output") as f:
            np.save(f, out)
        print(f"wrote {request.output}")
    return status


LPC = Command(
    "lpc",
    "batched linear prediction (LPC) of a mono PCM WAV file",
    add_lpc_arguments,
    run_lpc,
    "Frames (Hann window, 50% overlap), autocorrelation, normalisation and one batched Durbin solve "
    "for all frames, on the CPU or the GPU.",
    request=LpcRequest,
)
