"""Particles over ranks: the box's bin rows cut into horizontal strips, one per rank.

Rank r owns the particles whose bin row (the binning's own formula) lies in rows [row0, row1); a
particle's forces come from the 9 bins around it, so a rank needs, besides its own rows, the one
row below and the one above: its neighbours' boundary rows (ghosts; a GPU rank, which renumbers its
particles only every few steps, reads two rows each side: sim/particles/ranks_gpu.py). With rows numbered bottom to
top and bins numbered row by row, a strip, its boundary rows and the particles that leave it are
all contiguous runs of a bin-sorted array: ghosts and migrants are slices, never gathered.

Why strips for every R and not a 2D grid of ranks: a strip's halo is two bin rows whatever R is
(100M particles: 2 x 11,180 bins of about 0.8 particles, some 18k particles or 300 KB a step), while
its compute falls as 1/R; a 2D grid would halve the halo only once a strip is a few rows tall
(R in the thousands at these sizes) and would need corner messages and gathers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Strips:
    rows: int  # bin rows of the box
    ranks: int

    def __post_init__(self) -> None:
        if self.rows < self.ranks:
            raise ValueError(
                f"the box has {self.rows} bin rows, fewer than the {self.ranks} ranks: each rank needs "
                "at least one (use fewer ranks or more particles)"
            )

    def bounds(self, rank: int) -> tuple[int, int]:
        """Rows [row0, row1) of ``rank``: equal shares of rows (the particles fill the box evenly)."""
        return rank * self.rows // self.ranks, (rank + 1) * self.rows // self.ranks

    def cuts(self) -> np.ndarray:
        """The first row of every rank, then ``rows`` (ranks + 1 values)."""
        return np.array([self.bounds(r)[0] for r in range(self.ranks)] + [self.rows], np.int64)

    def owners(self, rows: np.ndarray) -> np.ndarray:
        """The rank owning each row."""
        return np.searchsorted(self.cuts(), rows, side="right") - 1

    def neighbours(self, rank: int) -> tuple[int | None, int | None]:
        """(the rank below, the rank above), None at the box's walls."""
        return (rank - 1 if rank > 0 else None), (rank + 1 if rank < self.ranks - 1 else None)
