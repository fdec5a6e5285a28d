"""The scenes kernel-lab knows: the only place a scene is named."""

from __future__ import annotations

from sim.cuda import Build


def all_builds() -> list[Build]:
    """Every CUDA build of the product's launchers (for the NVRTC check)."""
    from sim.balls import kernels as balls
    from sim.particles import kernels as particles
    from sim.sdh import kernels as sdh
    from viewer.splat import SPLAT

    return [*balls.builds(), *particles.builds(), *sdh.builds(), SPLAT]
