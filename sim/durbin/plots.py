"""What the durbin scene draws, from host arrays: decimation, spectra, block bands and the plots of
the recursion (the LPC mode's plots are in ``lpc_plots``). No scene state here: plain functions.

Large systems (N up to 200,000) are drawn from at most a few thousand points: each bucket of
entries keeps its smallest and its largest value, in index order, so a spike stays visible.
"""

from __future__ import annotations

import numpy as np
import scipy.signal

from sim.contract import DragPoint, Plot, Series
from sim.framework import finite
from sim.framework.colormap import BLOCK_PALETTE, MISMATCH_RGBA
from sim.gpu.cuda import ceil_div

POINTS = 4000  # most points a drawn series keeps
BAR_LIMIT = 256  # alphas as bars up to this many, a line beyond
SPECTRUM_BINS = 1024  # frequencies of the AR spectrum (0 .. pi)
REALISATION = 16_384  # samples of the noise realisation of the AR process
WELCH_SEGMENT = 256
BURN_IN = 2_000  # samples dropped so the realisation starts in the process's steady state
Y_RGBA = (0.35, 0.75, 1.0, 1.0)
ALPHA_RGBA = (0.95, 0.7, 0.25, 1.0)
BAND_RGBA = (0.3, 0.8, 0.4, 1.0)  # shaded: the renderer draws fills at a third of this
BETA_RGBA = (0.75, 0.55, 1.0, 1.0)
NEGATIVE_RGBA = (1.0, 0.45, 0.35, 1.0)
PERIODOGRAM_RGBA = (0.6, 0.6, 0.6, 0.9)
TRUE_RGBA = (0.4, 0.85, 0.45, 0.8)
KAPPA_RGBA = (1.0, 0.85, 0.2, 1.0)


def decimate(values: np.ndarray, limit: int = POINTS) -> np.ndarray:
    """Indices of the entries to draw: all when there are at most ``limit``, else per bucket the
    smallest and the largest (in index order), about ``limit`` in all."""
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[0]
    if n <= limit:
        return np.arange(n)
    width = ceil_div(n, limit // 2)
    buckets = ceil_div(n, width)
    padded = np.full(buckets * width, np.nan)
    padded[:n] = values
    rows = padded.reshape(buckets, width)
    base = np.arange(buckets) * width
    missing = np.isnan(rows)  # the padding, and a user's NaN: a bucket of them only gives its first entry
    lo = base + np.argmin(np.where(missing, np.inf, rows), axis=1)
    hi = base + np.argmax(np.where(missing, -np.inf, rows), axis=1)
    return np.stack([np.minimum(lo, hi), np.maximum(lo, hi)], axis=1).ravel()


def drawn(values: np.ndarray, limit: int = POINTS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, items) of a decimated series whose x is the entry index."""
    index = decimate(values, limit)
    return index.astype(np.float64), np.asarray(values, np.float64)[index], index


def prediction_errors(alphas: np.ndarray) -> np.ndarray:
    """E_0 .. E_k: the normalised prediction-error variance of each order, E_m = prod_{j<m} (1 - alpha_j^2)
    (the recursion's betas, plus the last order's)."""
    with np.errstate(over="ignore", invalid="ignore"):  # a user's kernel's garbage alphas: inf and NaN, said elsewhere
        return np.concatenate([[1.0], np.cumprod(1.0 - np.asarray(alphas, np.float64) ** 2)])


def ar_spectrum(y: np.ndarray, error: float, bins: int = SPECTRUM_BINS) -> tuple[np.ndarray, np.ndarray]:
    """(w / pi, error / |A(e^jw)|^2) with A(z) = 1 + sum_i y_i z^-(i+1): the model's power spectrum, whose
    mean over 0..pi is r_0 = 1 for the normalised autocorrelation the recursion solved."""
    a = np.concatenate([[1.0], np.asarray(y, np.float64)])
    nfft = max(2 * bins, 1 << int(np.ceil(np.log2(a.shape[0]))))
    with np.errstate(invalid="ignore", over="ignore"):  # a NaN or inf in y: NaN power, marked where it is drawn
        response = np.abs(np.fft.rfft(a, nfft)) ** 2
    step = max(1, (nfft // 2) // bins)
    response = response[::step]
    freq = np.arange(response.shape[0]) * step / (nfft // 2)
    return freq, error / np.maximum(response, 1e-300)


def realisation(kappas: np.ndarray, seed: int, count: int = REALISATION) -> np.ndarray:
    """A unit-variance realisation of the AR(p) process with reflection coefficients ``kappas``: white
    noise of variance E_p through 1/A_p(z) (A_p from the step-up recursion), burn-in dropped."""
    a = step_up(kappas)
    error = float(np.prod(1.0 - np.asarray(kappas, np.float64) ** 2))
    noise = np.random.default_rng(seed).standard_normal(count + BURN_IN) * np.sqrt(error)
    return scipy.signal.lfilter([1.0], np.concatenate([[1.0], a]), noise)[BURN_IN:]


def periodogram(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(w / pi, power) of ``x`` by Welch's method (Hann segments of 256, half overlap): one-sided and
    scaled so that its mean over 0..pi is the variance, like ``ar_spectrum``."""
    freq, power = scipy.signal.welch(x, fs=2.0, nperseg=WELCH_SEGMENT)
    return freq, power


def step_up(kappas: np.ndarray) -> np.ndarray:
    """Predictor coefficients a_1..a_p (A(z) = 1 + sum a_i z^-i) of reflection coefficients in Durbin's
    convention (its alphas: alpha_m = a_m of order m)."""
    a = np.zeros(0)
    for kappa in np.asarray(kappas, np.float64):
        a = np.concatenate([a + kappa * a[::-1], [kappa]])
    return a


def block_band(owners: np.ndarray, x: np.ndarray, bottom: float, top: float, label: str) -> list[Series]:
    """Shaded series in the block palette, one per colour in use: over [x_i, x_{i+1}) the colour of
    ``owners[i]``, between ``bottom`` and ``top`` (zero height elsewhere). ``x`` has one edge more than
    ``owners``; only the first series is named (the others stay out of the legend)."""
    owners = np.asarray(owners, np.int64)
    if owners.size == 0:
        return []
    if owners.size > POINTS // 2:  # decimate: the owner at each bucket's first entry
        width = ceil_div(owners.size, POINTS // 2)
        starts = np.arange(0, owners.size, width)
        owners, x = owners[starts], np.append(x[starts], x[-1])
    colours = owners % len(BLOCK_PALETTE)
    edges = np.repeat(x, 2)[1:-1]  # each span's left and right edge
    series: list[Series] = []
    for colour in np.unique(colours):
        on = np.repeat(colours == colour, 2)
        name = label if not series else f"##block colour {colour}"
        series.append(
            Series(
                name,
                edges,
                np.where(on, top, bottom),
                "shaded",
                (*BLOCK_PALETTE[colour], 0.9),
                y2=np.full(edges.shape[0], bottom),
            )
        )
    return series


def marks(index: np.ndarray, values: np.ndarray, label: str = "beyond tolerance") -> Series:
    """A red scatter over the entries ``index`` (at most POINTS of them)."""
    index = np.asarray(index)
    if index.size > POINTS:
        index = index[np.linspace(0, index.size - 1, POINTS).astype(np.int64)]
    return Series(
        label, index.astype(np.float64), np.asarray(values, np.float64)[index], "scatter", MISMATCH_RGBA, items=index
    )


def y_plot(y: np.ndarray, n: int, k: int, marked: np.ndarray | None, owners: np.ndarray | None) -> Plot:
    """y[0..k-1] as a line over the whole range 0..N-1, the marked entries red, and under it (block
    colours) a band of the CUDA block that updated each entry in step k-1."""
    x, v, items = drawn(y)
    series = [Series(f"y (k = {k:,})", x, v, "line", Y_RGBA, items=items)]
    lo, hi = finite.span(v)  # a NaN or inf (a user's garbage) has no place on the axis: marked below
    span = hi - lo if hi > lo else max(abs(hi), 1.0)
    if owners is not None:
        edges = np.arange(owners.shape[0] + 1) - 0.5
        series += block_band(owners, edges, lo - 0.16 * span, lo - 0.06 * span, "CUDA block (last step)")
    if marked is not None and marked[:k].any():
        series.append(marks(np.flatnonzero(marked[:k]), y))
    series += finite.marks(x, v, hi, items)
    limits = (lo - (0.22 if owners is not None else 0.06) * span, hi + 0.06 * span)
    return Plot(
        "y: the predictor after k steps (T y = -r of the leading k x k system)",
        series,
        "entry i",
        "y[i]",
        x_limits=(-0.5, n - 0.5),
        y_limits=limits if np.isfinite(limits).all() else None,
        height=0.55,
    )


def alphas_plot(alphas: np.ndarray, n: int, kappas: np.ndarray | None, draggable: bool) -> Plot:
    """The alphas (reflection coefficients) as bars (a line when many) over the band |kappa| < 1, with the
    AR process's kappas as drag points."""
    k = alphas.shape[0]
    series = [Series("|kappa| < 1", np.array([-0.5, n - 0.5]), np.ones(2), "shaded", BAND_RGBA, y2=-np.ones(2))]
    if k <= BAR_LIMIT:
        series.append(
            Series("alpha", np.arange(k, dtype=np.float64), alphas, "bars", ALPHA_RGBA, width=0.7, items=np.arange(k))
        )
    else:
        x, v, items = drawn(alphas)
        series.append(Series("alpha", x, v, "line", ALPHA_RGBA, items=items))
    series += finite.marks(series[-1].x, series[-1].y, 1.1, series[-1].items)
    inside = k == 0 or bool(np.all(np.abs(alphas) < 1))
    points = []
    if kappas is not None and draggable:
        points = [DragPoint(f"kappa{i}", float(i), float(kappa), KAPPA_RGBA) for i, kappa in enumerate(kappas)]
    return Plot(
        "alpha: reflection coefficients (drag the yellow points)" if points else "alpha: reflection coefficients",
        series,
        "step",
        "alpha",
        x_limits=(-0.5, n - 0.5),
        y_limits=(-1.15, 1.15) if inside else None,
        hlines=(-1.0, 1.0),
        drag_points=points,
        height=0.5,
    )


def beta_plot(betas: np.ndarray, n: int) -> Plot:
    """|beta_k| on a log axis; where beta < 0 (an indefinite T) its entries are marked red."""
    magnitude = np.maximum(np.abs(betas), 1e-300)
    x, v, items = drawn(magnitude)
    negative = np.flatnonzero(betas < 0)
    label = "|beta| (red: beta < 0, T indefinite)" if negative.size else "beta"
    series = [Series(label, x, v, "line", BETA_RGBA, items=items)]
    if negative.size:
        pick = negative[np.linspace(0, negative.size - 1, min(negative.size, POINTS // 4)).astype(np.int64)]
        series.append(
            Series("beta < 0", pick.astype(np.float64), magnitude[pick], "scatter", NEGATIVE_RGBA, items=pick)
        )
    series += finite.marks(x, v, 1.0, items)
    lo, hi = finite.span(v, (1.0, 1.0))
    with np.errstate(over="ignore"):
        limits = (lo / 1.6, hi * 1.6)
    return Plot(
        "beta: prediction-error variance",
        series,
        "step",
        "|beta|" if negative.size else "beta",
        y_log=True,
        x_limits=(-0.5, n - 0.5),
        y_limits=limits if np.isfinite(limits).all() else None,
        height=0.45,
    )


def spectrum_plot(y: np.ndarray, alphas: np.ndarray, noise_psd, kappas: np.ndarray | None) -> Plot:
    """The model spectrum from y beside the periodogram of a realisation and the AR(p) process's own
    spectrum, the reference: the true model has p coefficients, so from order p on the model from y is
    that spectrum and covers it (the legend says so instead of the curve vanishing)."""
    k = y.shape[0]
    error = float(prediction_errors(alphas)[-1])
    freq, power = ar_spectrum(y, error)
    series = []
    if noise_psd is not None:
        series.append(
            Series("periodogram of a realisation (Welch)", noise_psd[0], noise_psd[1], "line", PERIODOGRAM_RGBA)
        )
    if kappas is not None:
        order = kappas.shape[0]
        true_error = float(prediction_errors(kappas)[-1])
        tf, tp = ar_spectrum(step_up(kappas), true_error)
        label = (
            f"AR({order}) process: the true model, order {order}"
            if k < order
            else f"AR({order}) process: order {order} reached, the model from y lies on it"
        )
        series.append(Series(label, tf, tp, "line", TRUE_RGBA))
    series.append(Series(f"beta / |A(e^jw)|^2 from y (order {k})", freq, power, "line", Y_RGBA))
    return Plot("spectrum", series, "frequency w / pi", "power", y_log=True, x_limits=(0.0, 1.0), height=0.5)


def input_plot(r: np.ndarray) -> Plot:
    """The right-hand side r (inputs without a spectrum: PolyBench's)."""
    x, v, items = drawn(r)
    return Plot(
        "r: the right-hand side (T = toeplitz(1, r[0..N-2]))",
        [Series("r", x, v, "line", PERIODOGRAM_RGBA, items=items)],
        "entry i",
        "r[i]",
        height=0.5,
    )
