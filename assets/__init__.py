"""kernel-lab's data files, found by name: colour maps, the panel font, the icon; and the reader of
each scene's presets, which live in its folder (``sim/<scene>/presets.toml``).

Packaged with the code (``pip install .`` runs like a checkout): read through ``path()``.
A preset or colour-map file that cannot be read (not UTF-8 TOML, not a regular file, larger than
1 MiB, a preset without its description) stops the program with one line naming the file (exit 1):
the scenes are built from them when they are imported, before any command, ``--help`` included.
"""

from __future__ import annotations

import functools
import importlib.resources
from pathlib import Path

SIZE_LIMIT = 1 << 20  # the presets are a few KiB


class AssetError(SystemExit):
    """A damaged data file of the installation: nothing can run. A SystemExit carrying its one-line
    message (printed, exit 1, no traceback), since it is met while modules are imported."""

    def __init__(self, what: str):
        super().__init__(f"kernel-lab: {what}; reinstall kernel-lab")


def path(name: str) -> Path:
    """The file ``name`` (e.g. "colormaps.toml") under assets/."""
    found = _located(name)
    if not found.is_file():
        raise FileNotFoundError(f"asset {name!r} is missing ({found})")
    return found


@functools.cache
def toml(name: str) -> dict:
    """A TOML asset, parsed once; AssetError if it cannot be."""
    return _parsed(_located(name))


def _parsed(where: Path) -> dict:
    from sim.cli import UsageError
    from sim.reader import read_toml

    try:
        return read_toml(where, "data file", SIZE_LIMIT)
    except UsageError as exc:  # missing, not a regular file, too large, not TOML, nested too deeply
        raise AssetError(str(exc)) from None
    except OSError as exc:
        raise AssetError(f"data file {str(where)!r} cannot be read ({exc.strerror or exc})") from None


def _located(name: str) -> Path:
    return Path(importlib.resources.files(__name__).joinpath(name))


def _presets_file(scene: str) -> Path:
    """Beside the scene's code: a new workload is one folder."""
    return Path(importlib.resources.files(f"sim.{scene}").joinpath("presets.toml"))


@functools.cache
def presets(scene: str) -> dict[str, dict]:
    """A scene's presets (``sim/<scene>/presets.toml``), in file order: name -> its table (description,
    count, key, and the values the scene builds it from); AssetError for a preset without what every
    scene reads."""
    where = _presets_file(scene)
    table = _parsed(where)
    for preset, values in table.items():
        problem = _preset_problem(values)
        if problem:
            raise AssetError(f"data file {str(where)!r}: preset {preset!r} {problem}")
    return table


def _preset_problem(values) -> str:
    if not isinstance(values, dict):
        return "is not a table"
    if not isinstance(values.get("description"), str):
        return "has no description"
    count = values.get("count")
    if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 1):
        return f"has count {count!r}, not a positive whole number"
    if "key" in values and not isinstance(values["key"], str):
        return f"has key {values['key']!r}, not a key name"
    return ""
