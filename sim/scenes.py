"""The scenes kernel-lab knows, by name."""

from __future__ import annotations

from sim.balls.scene import BallsScene
from sim.particles.scene import ParticlesScene
from sim.scene import Scene

SCENES: dict[str, type[Scene]] = {"balls": BallsScene, "particles": ParticlesScene}


def create_scene(name: str = "balls", **kwargs) -> Scene:
    """A scene by name; ValueError names the choices on a typo."""
    if name not in SCENES:
        raise ValueError(f"unknown scene {name!r} (choose from {', '.join(SCENES)})")
    return SCENES[name](**kwargs)
