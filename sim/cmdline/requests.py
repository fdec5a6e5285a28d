"""What ``view``, ``run`` and ``bench`` are asked to do, as the command line gave it (``sim.cmdline.arguments``
builds them): frozen, so that what runs a command reads its request and never changes it (a value worked
out later is a new request, ``dataclasses.replace``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

Block = int | tuple[int, int]


def frozen_mapping(values: dict) -> Mapping:
    """A read-only view of a copy of ``values``."""
    return MappingProxyType(dict(values))


@dataclass(frozen=True)
class SceneRequest:
    """The scene to build: its name and the options every scene takes, and the scene's own (``options``,
    by the name of each of the spec's options; None where not given). ``view`` leaves the scene, the
    backend (and so the preset and count) None where the saved settings decide."""

    scene: str | None
    backend: str | None
    preset: str | None = None
    count: int | None = None
    variant: str | None = None
    block: Block | None = None
    seed: int | None = None
    options: Mapping[str, str | None] = field(default_factory=lambda: frozen_mapping({}))

    @property
    def scene_name(self) -> str:
        """``scene``, once given or filled in (``view`` fills it from the saved settings or the default)."""
        if self.scene is None:
            raise ValueError("the request names no scene yet: view fills it in before building one")
        return self.scene


@dataclass(frozen=True)
class ViewRequest:
    """``view``: the scene, and what the window opens with."""

    scene: SceneRequest
    size: tuple[int, int] | None
    baseline: dict | None
    no_settings: bool
    kernel_file: str | None
    stage: str | None


@dataclass(frozen=True)
class RunRequest:
    """``run``: the scene and its steps, in the window or headless; the outputs (``size`` and ``fps`` with
    their defaults filled in)."""

    scene: SceneRequest
    steps: int
    headless: bool
    screenshot: str | None
    size: tuple[int, int]
    record: str | None
    record_every: int | None
    fps: float


@dataclass(frozen=True)
class BenchRequest:
    """The timed frames' ``bench`` (``sim.cmdline.timed_frames``): the comma-separated lists of presets, counts,
    variants, blocks and the scene's options (``options``; None where not given), every combination timed."""

    scene: str
    backend: str
    preset: list[str] | None
    count: list[int] | None
    variant: list[str] | None
    block: list[Block] | None
    seed: int | None
    options: Mapping[str, list[str] | None]
    steps: int
    warmup: int
    json: str | None
    baseline: dict | None
