"""Batched linear prediction of a mono PCM WAV file: frames, Hann window, autocorrelation, normalise,
one batched Durbin solve for all frames (CPU twin or GPU kernel).

Frames are ``frame_ms`` long with 50% overlap (hop = half a frame), windowed with the periodic Hann
window. Each frame's autocorrelation R[0..p] (FFT) is normalised by R[0]; r = R[1..p]/R[0] is the
right-hand side of Durbin (4.x): T y = -r with T = toeplitz(R[0..p-1]/R[0]). So y are the predictor
coefficients a_1..a_p of A(z) = 1 + sum a_i z^-i, the alphas the reflection coefficients k_i in that
convention (PARCOR = -k_i), beta the normalised prediction-error power. A silent frame (R[0] = 0)
gets r = 0, hence y = 0, k = 0, beta = 1.
"""

from __future__ import annotations

import os
import wave
from dataclasses import dataclass

import numpy as np

from sim.cmdline import interrupts
from sim.cmdline.cli import UsageError, count_text

MAX_FRAME_MS = 60_000.0  # a minute: far past any analysis frame; inf or 1e306 would overflow the frame length
RECORD = [("start", np.int64), ("r0", np.float64), ("error", np.float64)]  # + a, k, r (order,) each


@dataclass
class Audio:
    samples: np.ndarray  # float64 in [-1, 1)
    rate: int
    bits: int


def read_wav(path: str) -> Audio:
    """A mono PCM WAV (8, 16, 24 or 32-bit) in a regular file; UsageError for anything else."""
    from sim.cmdline.reader import open_input

    try:
        with open_input(path, "WAV file") as f, wave.open(f, "rb") as w:
            channels, width, rate, count = w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()
            if channels != 1:
                raise UsageError(f"{path}: {channels} channels; lpc takes a mono file")
            if width not in (1, 2, 3, 4):
                raise UsageError(f"{path}: {8 * width}-bit samples; lpc takes 8, 16, 24 or 32-bit PCM")
            check_memory(count * (width + 8 * 3), "the samples and their frames")
            data = w.readframes(count)
    except UsageError:
        raise
    except EOFError:  # wave gives no words for a file that ends inside its header
        raise UsageError(f"{path}: not a PCM WAV file ({_short_header(path)})") from None
    except wave.Error as exc:
        raise UsageError(f"{path}: not a PCM WAV file ({exc})") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if width == 1:
        x = (np.frombuffer(data, np.uint8).astype(np.float64) - 128.0) / 128.0
    elif width == 3:
        b = np.frombuffer(data[: len(data) // 3 * 3], np.uint8).reshape(-1, 3).astype(np.int32)
        v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        x = np.where(v >= 1 << 23, v - (1 << 24), v).astype(np.float64) / float(1 << 23)
    else:
        dtype = np.dtype("<i2") if width == 2 else np.dtype("<i4")
        x = np.frombuffer(data[: len(data) // width * width], dtype).astype(np.float64) / float(1 << (8 * width - 1))
    return Audio(x, rate, 8 * width)


def _short_header(path: str) -> str:
    try:
        empty = os.stat(path).st_size == 0
    except OSError:
        empty = False
    return "the file is empty: no samples" if empty else "the file ends inside its header: no samples"


def check_memory(nbytes: int, what: str) -> None:
    """Refuse (exit 2) work whose memory estimate exceeds half of this machine's RAM."""
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return
    if nbytes > ram // 2:
        raise UsageError(
            f"{what} would need about {nbytes / 2**30:.1f} GiB, more than half of this machine's {ram / 2**30:.1f} GiB"
        )


def frame_geometry(count: int, rate: int, frame_ms: float, order: int) -> tuple[int, int, int]:
    """(frame length, hop, frames); UsageError when the order or the file does not fit a frame."""
    if not 0 < frame_ms <= MAX_FRAME_MS:
        raise UsageError(f"--frame-ms must be positive and at most {MAX_FRAME_MS:g} ms, got {frame_ms}")
    if count == 0:
        raise UsageError("the file has no samples")
    length = int(round(frame_ms * rate / 1000.0))
    if length < 2:
        raise UsageError(f"a {frame_ms} ms frame at {rate} Hz has {length} samples: too short")
    if not 2 <= order < length:
        raise UsageError(
            f"--order must be at least 2 and below the frame length ({length} samples), got {count_text(order)}"
        )
    hop = max(1, length // 2)
    if count < length:
        raise UsageError(f"the file has {count} samples, fewer than one {length}-sample frame")
    return length, hop, 1 + (count - length) // hop


def autocorrelation(x, length: int, hop: int, frames: int, order: int, xp=np):
    """(frames, order+1) autocorrelation of each Hann-windowed frame (xp: numpy or cupy)."""
    x = xp.asarray(x)
    index = xp.arange(frames)[:, None] * hop + xp.arange(length)[None, :]
    n = xp.arange(length, dtype=xp.float64)
    window = 0.5 - 0.5 * xp.cos(2.0 * np.pi * n / length)
    framed = x[index] * window
    nfft = 1 << int(np.ceil(np.log2(length + order)))
    spectrum = xp.fft.rfft(framed, nfft, axis=1)
    return xp.fft.irfft(spectrum.real**2 + spectrum.imag**2, nfft, axis=1)[:, : order + 1]


def normalised(R, xp=np):
    """r = R[1..p] / R[0] per frame; zeros for silent frames."""
    r0 = R[:, :1]
    safe = xp.where(r0 > 0, r0, 1.0)
    return xp.where(r0 > 0, R[:, 1:] / safe, 0.0)


def analyse(
    audio: Audio, order: int, frame_ms: float = 20.0, backend: str = "cpu", device: int = 0, batch_frames: int = 65536
) -> tuple[np.ndarray, dict]:
    """The structured array of every frame and timings (seconds). Fields: start (first sample), r0 (R[0],
    the windowed frame's energy), error (the order-p predictor's normalised prediction-error power: the last beta
    times 1 - k[p-1]^2), a (predictor
    coefficients), k (reflection coefficients, Durbin's alphas), r (R[1..p] / R[0], the solved system)."""
    import time

    length, hop, frames = frame_geometry(audio.samples.size, audio.rate, frame_ms, order)
    out = np.zeros(frames, dtype=RECORD + [(name, np.float64, (order,)) for name in ("a", "k", "r")])
    out["start"] = np.arange(frames) * hop
    solve_s = 0.0
    start = time.perf_counter()
    if backend == "gpu":
        import cupy

        from sim.durbin import batched_gpu

        with cupy.cuda.Device(device):
            x = cupy.asarray(audio.samples)
            begin, end = cupy.cuda.Event(), cupy.cuda.Event()
            for first in range(0, frames, batch_frames):
                interrupts.check()
                count = min(batch_frames, frames - first)
                R = autocorrelation(x[first * hop :], length, hop, count, order, cupy)
                r = normalised(R, cupy)
                begin.record()
                y, k, beta = batched_gpu.batched(r, device=device)
                end.record()
                end.synchronize()
                solve_s += cupy.cuda.get_elapsed_time(begin, end) * 1e-3
                part = out[first : first + count]
                part["r0"], part["error"] = cupy.asnumpy(R[:, 0]), cupy.asnumpy(beta * (1 - k[:, -1] ** 2))
                part["a"], part["k"], part["r"] = cupy.asnumpy(y), cupy.asnumpy(k), cupy.asnumpy(r)
    else:
        from sim.durbin import durbin_cpu

        durbin_cpu.batched(np.zeros((1, order)))  # numba's compile or cache load stays out of the time
        for first in range(0, frames, batch_frames):
            interrupts.check()
            count = min(batch_frames, frames - first)
            R = autocorrelation(audio.samples[first * hop :], length, hop, count, order)
            t = time.perf_counter()
            r = normalised(R)
            y, k, beta = durbin_cpu.batched(r)
            solve_s += time.perf_counter() - t
            part = out[first : first + count]
            part["r0"], part["a"], part["k"], part["r"] = R[:, 0], y, k, r
            part["error"] = beta * (1 - k[:, -1] ** 2)
    timings = {"durbin_s": solve_s, "total_s": time.perf_counter() - start, "frame_length": length, "hop": hop}
    return out, timings


def compare_scipy(out: np.ndarray) -> tuple[float, float, int]:
    """(the largest relative difference to scipy's solve_toeplitz over frames, that frame's tolerance, the
    frame), the frame being the one closest to (or furthest over) its tolerance.

    Both are Levinson solvers summing in different orders: they agree to about eps * order * cond(T),
    so a frame's tolerance is max(1e-10, 1000 eps p cond(T)), cond computed only where 1e-10 is exceeded."""
    import scipy.linalg

    from sim.durbin.inputs import toeplitz_column

    if len(out) == 0:
        return 0.0, 1e-10, 0
    r = out["r"]
    c = toeplitz_column(r)
    try:
        ref = scipy.linalg.solve_toeplitz(c, -r[..., None])[..., 0]  # batched since SciPy 1.17
    except (ValueError, TypeError):
        ref = np.array([scipy.linalg.solve_toeplitz(ci, -ri) for ci, ri in zip(c, r, strict=True)])
    err = np.abs(out["a"] - ref).max(axis=1) / np.maximum(np.abs(ref).max(axis=1), np.finfo(float).tiny)
    tol = np.full(len(out), 1e-10)
    for i in np.flatnonzero(err > 1e-10):
        cond = np.linalg.cond(scipy.linalg.toeplitz(c[i]))
        tol[i] = max(1e-10, 1000 * np.finfo(float).eps * r.shape[1] * cond)
    worst = int(np.argmax(err / tol))
    return float(err[worst]), float(tol[worst]), worst
