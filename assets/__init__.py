"""kernel-lab's data files, found by name: presets (TOML), colour maps, the panel font, the icon.

Packaged with the code (``pip install .`` runs like a checkout): read through ``path()``.
"""

from __future__ import annotations

import functools
import importlib.resources
import tomllib
from pathlib import Path


def path(name: str) -> Path:
    """The file ``name`` (e.g. "presets/balls.toml") under assets/."""
    found = Path(importlib.resources.files(__name__).joinpath(name))
    if not found.is_file():
        raise FileNotFoundError(f"asset {name!r} is missing ({found})")
    return found


@functools.cache
def toml(name: str) -> dict:
    """A TOML asset, parsed once."""
    with open(path(name), "rb") as f:
        return tomllib.load(f)


def presets(scene: str) -> dict[str, dict]:
    """A scene's presets, in file order: name -> its table (description, count, key, and the
    values the scene builds it from)."""
    return toml(f"presets/{scene}.toml")
