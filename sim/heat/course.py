"""What the DLI heat programme does around the step: its constants, its initial field, the line it
prints before the GPU run, and its max-error check (in float, unlike the course's integer ``abs``)."""

from __future__ import annotations

import numpy as np

NI, NJ, STEPS = 200, 100, 200  # the DLI defaults
TFAC = 8.418e-5  # float tfac = 8.418e-5 (as float32: 8.41799992e-05)
TOLERANCE = 0.0005
PRINTED_CELLS = (0, 4500, 6700)
INIT_BYTES_PER_CELL = 16  # host memory while drawing the field: glibc_rand's int64 state and output


def initial_field(ni: int, nj: int) -> np.ndarray:
    """(nj, ni) float32: every cell in memory order ``(float)rand() / (float)(RAND_MAX / 100.0f)``,
    glibc rand() with no srand call (the same stream as srand(1))."""
    from sim.crand import RAND_MAX, glibc_rand  # compiled code: the parser that reads NI and NJ needs none

    divisor = np.float32(RAND_MAX) / np.float32(100.0)  # RAND_MAX / 100.0f: int -> float, float division
    draws = glibc_rand(1, ni * nj)
    field = draws.astype(np.float32)  # (float)rand(): rounded to nearest
    del draws
    field /= divisor
    return field.reshape(nj, ni)


def initial_cells_line(field: np.ndarray) -> str:
    """``printf("%.5f %.5f %.5f \\n", T[0], T[4500], T[6700])``; a cell past the grid prints ``-``."""
    flat = field.reshape(-1)
    return "".join((f"{flat[i]:.5f} " if i < flat.size else "- ") for i in PRINTED_CELLS)


def max_error(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| over all cells, in float32 like the course's ``float maxError``."""
    return float(np.max(np.abs(a.astype(np.float32) - b.astype(np.float32)), initial=np.float32(0)))


def check_line(error: float) -> tuple[str, bool]:
    """The course's verdict line and whether it passed (maxError <= 0.0005)."""
    if error > np.float32(TOLERANCE):
        return f"Problem! The Max Error of {error:.5f} is NOT within acceptable bounds.", False
    return f"The Max Error of {error:.5f} is within acceptable bounds.", True
