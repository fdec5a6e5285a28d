"""Physics for kernel-lab: scenes, their state and steps, CPU kernels and GPU launchers.

Nothing here imports OpenGL: the viewer, the CLI and the tests drive scenes the same way.
"""

from sim.registry import SCENES, create_scene

__all__ = ["SCENES", "create_scene"]
