"""How the viewer talks about each scene: what it is made of, what q cycles, what v checks."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SceneWords:
    unit: str  # what the scene is made of, plural
    variant: str  # what q cycles
    verified: str  # what v checks, for the message line
    mismatch: str  # what a red one means
    kernels_hint: str  # how to get a CUDA kernel to handle the scene (for c)


BALLS = SceneWords(
    unit="balls",
    variant="proximity variant",
    verified="each proximity pass is checked on the CPU",
    mismatch="balls whose pairs differ from the CPU's are drawn red",
    kernels_hint="turn on CUDA proximity (F4) or GPU physics (a)",
)
PARTICLES = SceneWords(
    unit="particles",
    variant="force kernel variant",
    verified="each GPU step is checked against a CPU step from the same state",
    mismatch="particles whose step differs from the CPU's are drawn red",
    kernels_hint="switch the physics to the GPU (a)",
)
_BY_NAME = {"balls": BALLS, "particles": PARTICLES}


def words_for(scene) -> SceneWords:
    """The scene's words; a scene the viewer does not know is talked about as balls."""
    return _BY_NAME.get(getattr(scene, "name", ""), BALLS)
