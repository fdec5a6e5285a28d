"""The scenes kernel-lab knows: the only place a scene is named.

Adding a scene: its package under sim/ declares a ``SceneSpec`` (``SPEC``); add one line here.
"""

from __future__ import annotations

from sim.balls import SPEC as BALLS
from sim.contract import SceneSpec, load
from sim.cuda import Build
from sim.density import SPEC as DENSITY
from sim.heat import SPEC as HEAT
from sim.particles import SPEC as PARTICLES
from sim.sdh import SPEC as SDH

SCENES: dict[str, SceneSpec] = {spec.name: spec for spec in (
    BALLS,
    PARTICLES,
    DENSITY,
    SDH,
    HEAT,
)}


def spec(name: str) -> SceneSpec:
    """A scene's spec by name; ValueError names the choices on a typo."""
    if name not in SCENES:
        raise ValueError(f"unknown scene {name!r} (choose from {', '.join(SCENES)})")
    return SCENES[name]


def create_scene(name: str = "balls", **kwargs):
    """A new scene by name (keyword arguments as ``sim.scene.Scene`` takes them)."""
    return spec(name).create(**kwargs)


# a package with its command and GPU builds but no viewer scene yet is listed here until its spec exists
DURBIN_COMMANDS, DURBIN_BUILDS = "sim.durbin.cli:COMMANDS", "sim.durbin.kernels:builds"  # likewise, durbin


def course_commands() -> list:
    """The course-compatible subcommands every scene package contributes (``sim.cli.Command``)."""
    return ([command for s in SCENES.values() if s.commands for command in load(s.commands)]
            + [*load(DURBIN_COMMANDS)])


def all_builds() -> list[Build]:
    """Every CUDA build of the product's launchers (for the NVRTC check)."""
    from viewer.render.points.splat import SPLAT

    builds = [build for s in SCENES.values() if s.kernels for build in load(s.kernels)()] + [SPLAT]
    builds += load(DURBIN_BUILDS)()
    return list(dict.fromkeys(builds))  # scenes that share kernels (density: the particles') list them once
