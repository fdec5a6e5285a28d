"""Values a scene cannot draw or reduce: NaN, inf, and a learner's garbage (a user stage's output enters the
scene as it came back). The readouts count them with these helpers and say so ("3 NaN, 1 inf"); the plots
draw a red mark (``sim.framework.colormap.MISMATCH_RGBA``, verification's colour) in a series' place; the statistic
``STAT`` (every scene declares it) carries the scene's note, "none" when all is well."""

from __future__ import annotations

import numpy as np

from sim.contract import Series, Stat
from sim.framework.colormap import MISMATCH_RGBA

STAT_KEY = "nonfinite"
CLEAN = "none"
STAT = Stat(
    STAT_KEY,
    "non-finite values",
    "{}",
    help="NaN, inf or garbage (negative counts, indices that name "
    "nothing) in what the scene shows, from a user's kernel: marked red where they are",
)


def counts(values) -> tuple[int, int]:
    """(NaN, inf) among ``values`` (host): none in an integer array."""
    values = np.asarray(values)
    if values.dtype.kind not in "fc":
        return 0, 0
    nan = int(np.count_nonzero(np.isnan(values)))
    return nan, int(np.count_nonzero(np.isinf(values)))


def counts_text(nan: int, inf: int) -> str:
    """ "3 NaN, 1 inf", "2 NaN", ... ("" for none)."""
    return ", ".join(f"{count:,} {name}" for count, name in ((nan, "NaN"), (inf, "inf")) if count)


def text(values) -> str:
    """What ``values`` hold that is not a number ("" when every value is finite)."""
    return counts_text(*counts(values))


def notes(parts: dict[str, str], where: str = "") -> str:
    """The statistic's text from what each output holds: "3 NaN in y; 1 inf in alphas (2 frames, marked
    red)", or CLEAN."""
    said = [f"{what} in {name}" for name, what in parts.items() if what]
    if not said:
        return CLEAN
    return "; ".join(said) + f" ({where + ', ' if where else ''}marked red)"


def finite_rows(values: np.ndarray) -> np.ndarray:
    """Of a (rows, k) array: the rows whose every value is finite."""
    values = np.asarray(values)
    return np.isfinite(values.reshape(values.shape[0], -1)).all(axis=1)


def span(values, fallback: tuple[float, float] = (0.0, 1.0)) -> tuple[float, float]:
    """(lowest, highest) finite value of ``values`` (``fallback`` when there is none)."""
    values = np.asarray(values, np.float64)
    finite = values[np.isfinite(values)]
    return (float(finite.min()), float(finite.max())) if finite.size else fallback


def marks(x: np.ndarray, y: np.ndarray, at: float, items: np.ndarray | None = None, label: str = "") -> list[Series]:
    """A red scatter at height ``at`` over each x whose y is not finite, named by what it marks ("3 NaN,
    1 inf (not drawn)"); [] when every y is finite."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    bad = np.flatnonzero(~np.isfinite(y[: x.shape[0]]))
    if bad.size == 0:
        return []
    name = label or f"{text(y)} (not drawn)"
    return [
        Series(
            name,
            x[bad],
            np.full(bad.size, float(at)),
            "scatter",
            MISMATCH_RGBA,
            items=None if items is None else np.asarray(items)[bad],
        )
    ]
