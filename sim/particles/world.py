"""The CS 267 particle world: constants every version of the assignment uses."""

import math

DENSITY = 0.0005
MASS = 0.01
CUTOFF = 0.01
MIN_R = CUTOFF / 100
DT = 0.0005
STEPS = 1000
SAVE_EVERY = 10


def box_size(n: int) -> float:
    """Side of the square box: sqrt(density * n)."""
    return math.sqrt(DENSITY * n)
