"""When a GPU rank renumbers its particles (sim/particles/ranks_gpu.py): the drift since the last numbering.

A rank renumbers (counts each particle into its bin, scans, places, hands its leavers over) only on some
steps; on the others the particles keep their slots and the numbering's bins, and drift. A step stays exact
while every particle has moved at most ``margin`` along either axis since the numbering (less 1% of a bin
for rounding). A particle within the cutoff c of mine now was numbered within c + margin of where I am
now: within a bin w of it (in the 9 bins around me) while margin <= w - c, as on one GPU. It was also
numbered within c + 2 margin of where I was numbered, in my rows: inside my window (my rows and the
neighbours' ``ghost_rows`` rows each side) while c + 2 margin <= ghost_rows w. With two ghost rows the
first bound is the tighter one (w - c); with one it would be (w - c) / 2, renumbering twice as often.

Whether a step renumbers is decided before it runs, when its interior is queued ahead of the last step's
one read: from the drift at that read and the largest move then, allowing each of the next two steps to
move ``GROWTH`` times as far. All ranks decide alike (the moves are all-gathered). A step that outran the
forecast leaves a drift past the margin: the rank then takes the slow way (every particle rebinned and sent
to its owner) before the next step.
"""

from __future__ import annotations

import math

from sim.particles import world

GROWTH = 1.5  # how much faster than the last read's largest move the next two steps may go


class Drift:
    def __init__(self, bin_side: float, ghost_rows: int):
        w, c = bin_side, world.CUTOFF
        self.margin = min(w - c, (ghost_rows * w - c) / 2) - w / 100
        self.drift = 0.0  # since the numbering, through the step last read
        self.move = math.inf  # the largest move along an axis in the step last read (every rank's; none yet)

    def renumbers(self, this_one: bool) -> bool:
        """Whether the step after the one now running renumbers (``this_one``: whether the running one does)."""
        if self.margin <= 0:
            return True
        if this_one:  # the next starts from a fresh numbering and must end within the margin
            return GROWTH * self.move > self.margin
        return self.drift + 2 * GROWTH * self.move > self.margin  # this step's move and the next one's

    def read(self, renumbered: bool, move: float) -> bool:
        """A step read (its largest move, every rank's); True if the next step, queued without a
        renumbering, would read particles that drifted past the margin."""
        self.move = move
        self.drift = 0.0 if renumbered else self.drift + move
        return self.drift > self.margin

    def renumbered(self) -> None:
        """The particles were numbered where they are (the slow way)."""
        self.drift = 0.0
