"""Synthesise vowels.wav: the durbin scene's built-in sound for its LPC mode (run from anywhere).

    python assets/sounds/make_vowels.py [OUT.wav]

1.5 s of 16 kHz mono 16-bit PCM: a glottal pulse train (each pulse a Rosenberg-like shape, f0
gliding 130 -> 150 -> 100 Hz) through a cascade of three time-varying resonators (formants) and a
first difference (lip radiation). The formants hold /a/, glide to /i/, hold it, glide to /u/ and
hold it, so each 20 ms frame's LPC envelope has peaks that move. A little breath noise joins the
pulses and a room-noise floor 60 dB under the peak lies over everything (fixed seeds), as in a
recording: without the floor the resonators leave almost nothing above 4 kHz, the frames are nearly
exactly predictable (45 dB of prediction gain) and their Toeplitz systems needlessly ill-conditioned.
"""

from __future__ import annotations

import math
import sys
import wave
from pathlib import Path

import numpy as np

RATE = 16_000
SECONDS = 1.5
# (time s, F1, F2, F3 in Hz): formants of an adult voice, linearly interpolated between the marks
FORMANTS = [
    (0.00, 730, 1090, 2440),
    (0.35, 730, 1090, 2440),  # /a/
    (0.60, 270, 2290, 3010),
    (0.85, 270, 2290, 3010),  # glide to /i/, hold
    (1.10, 300, 870, 2240),
    (1.50, 300, 870, 2240),
]  # glide to /u/, hold
BANDWIDTHS = (80.0, 100.0, 140.0)  # Hz, per formant
F0 = [(0.0, 130.0), (0.6, 150.0), (1.5, 100.0)]  # Hz: a rise and a fall
BREATH = 2e-3  # white noise beside the pulses (the pulses' derivative peaks near 0.05)
FLOOR = 1e-3  # white noise over the voice, against its peak (-60 dB)


def interpolate(marks, t: np.ndarray) -> np.ndarray:
    """Columns of ``marks`` after the time, linearly interpolated at times ``t``."""
    table = np.asarray(marks, dtype=np.float64)
    return np.stack([np.interp(t, table[:, 0], table[:, c]) for c in range(1, table.shape[1])], axis=1)


def glottal_source(t: np.ndarray) -> np.ndarray:
    """A pulse train whose period follows F0: per period an opening half-cosine, a closing quarter
    cosine, then closed (Rosenberg's shape, open quotient 0.6), differentiated into flow derivative."""
    f0 = interpolate(F0, t)[:, 0]
    phase = np.cumsum(f0) / RATE % 1.0
    opening, closing = 0.4, 0.2
    flow = np.where(
        phase < opening,
        0.5 * (1 - np.cos(np.pi * phase / opening)),
        np.where(phase < opening + closing, np.cos(0.5 * np.pi * (phase - opening) / closing), 0.0),
    )
    return np.diff(flow, prepend=0.0)


def resonate(x: np.ndarray, frequency: np.ndarray, bandwidth: float) -> np.ndarray:
    """A two-pole resonator with unit gain at DC whose centre frequency changes per sample."""
    r = math.exp(-math.pi * bandwidth / RATE)
    a1 = -2.0 * r * np.cos(2.0 * np.pi * frequency / RATE)
    a2 = r * r
    gain = 1.0 + a1 + a2
    y = np.zeros_like(x)
    y1 = y2 = 0.0
    for n in range(x.shape[0]):
        v = gain[n] * x[n] - a1[n] * y1 - a2 * y2
        y[n], y2, y1 = v, y1, v
    return y


def synthesise() -> np.ndarray:
    t = np.arange(int(SECONDS * RATE)) / RATE
    breath = np.random.default_rng(7).standard_normal(t.shape[0])
    voice = glottal_source(t) + BREATH * breath
    formants = interpolate(FORMANTS, t)
    for column, bandwidth in enumerate(BANDWIDTHS):
        voice = resonate(voice, formants[:, column], bandwidth)
    voice = np.diff(voice, prepend=0.0)  # radiation at the lips: +6 dB per octave
    fade = np.minimum(1.0, np.minimum(t / 0.03, (SECONDS - t) / 0.05))  # no clicks at the ends
    voice *= np.clip(fade, 0.0, 1.0)
    voice = voice / np.abs(voice).max() + FLOOR * np.random.default_rng(8).standard_normal(t.shape[0])
    return voice / np.abs(voice).max() * 0.8


def write(path: Path, samples: np.ndarray) -> None:
    pcm = np.round(samples * 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(pcm.tobytes())


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("vowels.wav")
    write(out, synthesise())
    print(f"{out}: {out.stat().st_size:,} bytes, {SECONDS} s at {RATE} Hz")
