"""The scenes kernel-lab knows: the only place a scene is named.

Adding a scene: its package under sim/ declares a ``SceneSpec`` (``SPEC``); add one line here.
"""

from __future__ import annotations

from sim.balls import SPEC as BALLS
from sim.contract import SceneSpec, load
from sim.density import SPEC as DENSITY
from sim.durbin import SPEC as DURBIN
from sim.gpu import peaks, render_builds
from sim.gpu.cuda import Build
from sim.heat import SPEC as HEAT
from sim.particles import SPEC as PARTICLES
from sim.sdh import SPEC as SDH

SCENES: dict[str, SceneSpec] = {
    spec.name: spec
    for spec in (
        BALLS,
        PARTICLES,
        DENSITY,
        SDH,
        HEAT,
        DURBIN,
    )
}


def spec(name: str) -> SceneSpec:
    """A scene's spec by name; ValueError names the choices on a typo."""
    if name not in SCENES:
        raise ValueError(f"unknown scene {name!r} (choose from {', '.join(SCENES)})")
    return SCENES[name]


def create_scene(name: str = "balls", **kwargs):
    """A new scene by name (keyword arguments as ``sim.framework.scene.Scene`` takes them)."""
    return spec(name).create(**kwargs)


def course_commands() -> list:
    """The course-compatible subcommands every scene package contributes (``sim.cmdline.cli.Command``)."""
    return [command for s in SCENES.values() if s.commands for command in load(s.commands)]


def distance_histogram():
    """The all-pairs distance histogram any points scene shows in the panel (the sdh scene's kernels),
    looked up when called."""
    return load("sim.sdh.live:distance_histogram")


def all_builds() -> list[Build]:
    """Every CUDA build of the product's launchers (for the NVRTC check), and each replaceable stage's
    template built as a user's file is (the stage's reference options)."""
    builds = [build for s in SCENES.values() if s.kernels for build in load(s.kernels)()] + render_builds.builds()
    builds.append(peaks.BUILD)  # the peak rates' copy and FMA kernels
    templates = [
        Build(stage.template, load(stage.adapter)().reference.options, (stage.entry,))
        for s in SCENES.values()
        for stage in s.user_stages
    ]
    return list(dict.fromkeys(builds + templates))  # scenes that share kernels (density: the particles') list them once
