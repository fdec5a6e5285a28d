"""The CS 267 particles seen as their density: particle counts per grid cell, a field view.

The particles, their presets, GPU kernels, tool and checks are the particles scene's
(``sim.particles``); this package only declares the field view of them.
"""

import dataclasses

from sim.contract import TIMED_FRAMES, Stat, Verifier
from sim.particles import SPEC as PARTICLES
from sim.particles import VERIFIER as PARTICLES_VERIFIER

SPEC = dataclasses.replace(
    PARTICLES,
    name="density",
    title="CS 267 particles as a density field: particle counts per grid cell (cells about two cutoffs wide)",
    view="field",
    scene="sim.density.scene:DensityScene",
    stats=PARTICLES.stats + (Stat("grid", "grid", "{}", help="the density grid: cells about two cutoffs wide"),),
    verifier=Verifier(
        checks=PARTICLES_VERIFIER.checks,
        mismatch="cells holding a particle whose step differs from the CPU's are drawn in the highlight colour",
    ),
    block_colors=None,  # the force kernels' blocks handle particles, not cells of this grid
    kernels=PARTICLES.kernels,  # the same CUDA builds (the registry lists them once)
    commands="",  # and the course commands
    bench=TIMED_FRAMES,  # and the scaling over MPI ranks stay with particles: its bench is the timed frames alone
    gate="",  # as do the regression gate's headline
    ncu="",  # and the Nsight Compute cases of the shared kernels
)
