"""kernel-lab's data files, found by name: colour maps, the panel font, the icon; and the reader of
each scene's presets, which live in its folder (``sim/<scene>/presets.toml``).

Packaged with the code (``pip install .`` runs like a checkout): read through ``path()``.
A preset or colour-map file that cannot be read (not UTF-8 TOML, not a regular file, larger than
1 MiB, nested too deeply) or holds the wrong shape (a preset without its description, a field of the wrong
type: ``PRESET_FIELDS``; a colour map without its colours) stops the program with one line naming the file,
the preset or table and the field (exit 1): the scenes are built from them when they are imported, before
any command, ``--help`` included.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
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
    from sim.cmdline.cli import UsageError
    from sim.cmdline.reader import read_toml

    try:
        return read_toml(where, "data file", SIZE_LIMIT)
    except UsageError as exc:  # missing, not a regular file, too large, not TOML, nested too deeply
        raise AssetError(str(exc)) from None
    except OSError as exc:
        raise AssetError(f"data file {str(where)!r} cannot be read ({exc.strerror or exc})") from None


def _located(name: str) -> Path:
    return Path(str(importlib.resources.files(__name__).joinpath(name)))


def _presets_file(scene: str) -> Path:
    """Beside the scene's code: a new workload is one folder."""
    return Path(str(importlib.resources.files(f"sim.{scene}").joinpath("presets.toml")))


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


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _real(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _source(value) -> bool:
    return isinstance(value, dict) and all(_real(value.get(name)) for name in ("x", "y", "r", "t"))


_TEXT = (lambda v: isinstance(v, str), "text")
_POSITIVE = (lambda v: _real(v) and v > 0, "a number above 0")
_NON_NEGATIVE = (lambda v: _real(v) and v >= 0, "a number 0 or more")
# The fields the scenes build their presets from (sim/<scene>/presets.toml), each checked where present
PRESET_FIELDS = {
    "count": (_whole, "a positive whole number"),
    "key": (lambda v: isinstance(v, str), "a key name"),
    **dict.fromkeys(("ni", "nj", "tiers", "order"), (_whole, "a positive whole number")),
    **dict.fromkeys(("radius", "factor", "width", "speed", "tolerance", "frame_ms"), _POSITIVE),
    **dict.fromkeys(("friction", "play"), _NON_NEGATIVE),
    **dict.fromkeys(("build", "init", "input", "sound"), _TEXT),
    "kappas": (lambda v: isinstance(v, list) and all(map(_real, v)), "a list of numbers"),
    "sources": (lambda v: isinstance(v, list) and all(map(_source, v)), "a list of tables of numbers x, y, r, t"),
}


def _preset_problem(values) -> str:
    if not isinstance(values, dict):
        return "is not a table"
    if not isinstance(values.get("description"), str):
        return "has no description"
    for name, (valid, expected) in PRESET_FIELDS.items():
        if name in values and not valid(values[name]):
            shown = repr(values[name])
            return f"has {name} {shown if len(shown) <= 40 else shown[:37] + '...'}, not {expected}"
    return ""


def _colours(value, channels: int, least: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) >= least
        and all(isinstance(c, list) and len(c) == channels and all(_real(x) and 0 <= x <= 1 for x in c) for c in value)
    )


# What sim/framework/colormap.py reads: (table, field, colours a colour has, the least count; 0: one colour, not a list)
COLOUR_FIELDS = (
    ("viridis", "stops", 3, 2),
    ("inferno", "stops", 3, 2),
    ("block", "palette", 3, 1),
    ("marks", "mismatch", 4, 0),
)


@functools.cache
def colormaps() -> dict:
    """assets/colormaps.toml, checked: every colour map has two or more RGB stops in 0..1, the palette and
    marks what sim/framework/colormap.py reads; AssetError naming the table and field otherwise."""
    where = _located("colormaps.toml")
    maps = _parsed(where)
    wanted = {(table, field): (channels, least) for table, field, channels, least in COLOUR_FIELDS}
    for table, values in maps.items():
        if isinstance(values, dict) and "stops" in values:
            wanted.setdefault((table, "stops"), (3, 2))
    for (table, field), (channels, least) in wanted.items():
        value = maps.get(table, {}).get(field) if isinstance(maps.get(table), dict) else None
        if not (_colours([value], channels, 1) if least == 0 else _colours(value, channels, least)):
            what = (
                f"a colour of {channels} numbers 0..1"
                if least == 0
                else f"a list of {least} or more colours of {channels} numbers 0..1"
            )
            raise AssetError(f"data file {str(where)!r}: [{table}] {field} is missing or not {what}")
    return maps
