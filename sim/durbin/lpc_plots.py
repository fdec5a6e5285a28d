"""The durbin scene's lpc preset drawn: the spectrogram with the chosen frame, the frame's spectrum and LPC
envelope, its reflection coefficients, the poles of 1/A(z) and the prediction error by order, from an
``LpcMode``'s frames (``lpc_mode``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.contract import DragPoint, Plot, Series
from sim.durbin import plots as recursion_plots
from sim.framework import finite
from sim.framework.colormap import MISMATCH_RGBA

if TYPE_CHECKING:
    from sim.durbin.lpc_mode import LpcMode

FLOOR_DB = 90.0  # the spectrogram shows this many dB under its loudest bin
FRAME_RGBA = (1.0, 0.85, 0.2, 1.0)
ENVELOPE_RGBA = (1.0, 0.55, 0.2, 1.0)
CIRCLE_RGBA = (0.6, 0.6, 0.6, 0.8)
POLE_RGBA = (0.35, 0.75, 1.0, 1.0)


def db(power: np.ndarray) -> np.ndarray:
    return 10.0 * np.log10(np.maximum(power, 1e-30))


def plots(
    mode: LpcMode, frame: int, marked: np.ndarray | None, owners: np.ndarray | None, draggable: bool
) -> list[Plot]:
    """Spectrogram, z-plane, the frame's spectrum, its reflection coefficients and its error by order,
    in the order that puts them in two columns (plot i in column i % 2)."""
    return [
        spectrogram(mode, frame, marked, owners, draggable),
        z_plane(mode, frame),
        frame_spectrum(mode, frame),
        reflection(mode, frame),
        error_by_order(mode, frame),
    ]


def spectrogram(mode: LpcMode, frame: int, marked, owners, draggable: bool) -> Plot:
    values = db(mode.power.T)  # rows: frequency (row 0 at the bottom), columns: frames
    values = np.maximum(values, values.max() - FLOOR_DB)
    step = mode.hop / mode.audio.rate
    x0, x1 = mode.centres[0] - step / 2, mode.centres[-1] + step / 2
    top = float(mode.freq_khz[-1])
    start = frame * mode.hop / mode.audio.rate
    span = np.array([start, start + mode.length / mode.audio.rate])
    series = [
        Series(f"frame {frame}", span, np.full(2, top), "shaded", FRAME_RGBA, y2=np.zeros(2)),
        Series(
            "##frame centre",
            np.full(2, mode.centres[frame]),
            np.array([0.0, top]),
            "line",
            FRAME_RGBA,
            items=np.full(2, frame),
        ),
    ]
    if owners is not None:
        edges = np.append(mode.centres - step / 2, mode.centres[-1] + step / 2)
        series += recursion_plots.block_band(
            owners, edges, -0.09 * top, -0.02 * top, "CUDA block that solved the frame"
        )
    if marked is not None and marked.any():
        index = np.flatnonzero(marked)
        series.append(
            Series(
                "beyond tolerance",
                mode.centres[index],
                np.full(index.size, 0.96 * top),
                "scatter",
                MISMATCH_RGBA,
                items=index,
            )
        )
    if not mode.finite_frames.all():
        index = np.flatnonzero(~mode.finite_frames)
        series.append(
            Series(
                f"NaN or inf in the solution ({index.size:,} frames)",
                mode.centres[index],
                np.full(index.size, 0.9 * top),
                "scatter",
                MISMATCH_RGBA,
                items=index,
            )
        )
    points = [DragPoint("frame", float(mode.centres[frame]), 0.6 * top, FRAME_RGBA)] if draggable else []
    return Plot(
        "spectrogram (drag the yellow point to choose a frame)" if draggable else "spectrogram",
        series,
        "time (s)",
        "frequency (kHz)",
        x_limits=(x0, x1),
        y_limits=(-0.1 * top if owners is not None else 0.0, top),
        heatmap=values,
        drag_points=points,
        height=0.45,
        legend="above",
    )


def frame_spectrum(mode: LpcMode, frame: int) -> Plot:
    envelope = db(mode.envelope(frame))
    series = [
        Series("|X|^2 (Hann window)", mode.freq_khz, db(mode.power[frame]), "line", recursion_plots.PERIODOGRAM_RGBA),
        Series("E_p R_0 / |A|^2", mode.freq_khz, envelope, "line", ENVELOPE_RGBA),
    ]
    series += finite.marks(
        mode.freq_khz,
        envelope,
        finite.span(db(mode.power[frame]))[1],
        label=f"envelope: {finite.text(envelope)} (not drawn)",
    )
    return Plot(
        f"frame {frame}: spectrum and LPC envelope (order {mode.order})",
        series,
        "frequency (kHz)",
        "dB",
        x_limits=(0.0, float(mode.freq_khz[-1])),
        height=0.35,
        legend="above",
    )


def reflection(mode: LpcMode, frame: int) -> Plot:
    alphas = mode.alphas[frame]
    index = np.arange(alphas.shape[0], dtype=np.float64)
    return Plot(
        f"frame {frame}: reflection coefficients",
        [
            Series(
                "|kappa| < 1",
                np.array([-0.5, index.size - 0.5]),
                np.ones(2),
                "shaded",
                recursion_plots.BAND_RGBA,
                y2=-np.ones(2),
            ),
            Series("alpha", index, alphas, "bars", recursion_plots.ALPHA_RGBA, width=0.7, items=None),
            *finite.marks(index, alphas, 1.1),
        ],
        "order m",
        "alpha_m",
        x_limits=(-0.5, index.size - 0.5),
        y_limits=(-1.15, 1.15),
        hlines=(-1.0, 1.0),
        height=0.4,
        legend="above",
    )


def z_plane(mode: LpcMode, frame: int) -> Plot:
    poles = mode.poles(frame)
    theta = np.linspace(0.0, 2.0 * np.pi, 361)
    series = [
        Series("unit circle", np.cos(theta), np.sin(theta), "line", CIRCLE_RGBA),
        Series("poles", poles.real.copy(), poles.imag.copy(), "scatter", POLE_RGBA),
    ]
    why = mode.no_poles_reason(frame, poles)
    if why:  # a red point at the centre names the reason in the legend
        series.append(Series(why, np.zeros(1), np.zeros(1), "scatter", MISMATCH_RGBA))
    return Plot(
        f"frame {frame}: poles of 1/A(z)" + (" - none (see the legend)" if why else ""),
        series,
        "Re z",
        "Im z",
        equal_aspect=True,
        x_limits=(-1.25, 1.25),
        y_limits=(-1.25, 1.25),
        height=0.6,
    )


def error_by_order(mode: LpcMode, frame: int) -> Plot:
    errors = mode.errors(frame)
    order = np.arange(errors.size, dtype=np.float64)
    return Plot(
        f"frame {frame}: prediction error against order",
        [
            Series("E_m", order, errors, "line", recursion_plots.BETA_RGBA),
            Series("##E_m points", order, errors, "scatter", recursion_plots.BETA_RGBA),
            *finite.marks(order, errors, 1.0),  # E_0 = 1: the top of the plot
        ],
        "order m",
        "E_m",
        y_log=True,
        x_limits=(-0.5, errors.size - 0.5),
        height=0.2,
        legend="ne",
    )  # E_m falls with the order: the top right is free
