"""Settings that last: what the user chose, saved on exit and restored at the next start.

One TOML file, ``settings.toml`` in the user's config folder (``platformdirs.user_config_dir
("kernel-lab")``; ``KERNEL_LAB_CONFIG_DIR`` names another folder, as tests do), read with tomllib
and written atomically with tomli-w through ``sim.cmdline.writer``. ``python main.py view --no-settings``
starts clean and saves nothing.

Kept: the scene and backend; per scene its preset and count, variant, block, options, switches,
sliders, tool values, colour mode and fixed colour ranges, camera and camera bookmarks (Ctrl+1..4
save, 1..4 restore); the window's size, full screen and UI scale; the panel's open sections; the
recording options. A file that is not TOML, nests too deeply, is from another version, has the wrong shape, is
larger than 1 MiB or is not a regular file (a FIFO, a link to /dev/zero: refused unread) is
reported in one line and ignored: never fatal. A value that no longer applies (a preset renamed, a
slider out of range) is skipped or clamped where it is applied.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from sim.cmdline.cli import UsageError
from sim.cmdline.reader import read_toml
from sim.cmdline.writer import OutputError, write_text

VERSION = 1
FOLDER_VARIABLE = "KERNEL_LAB_CONFIG_DIR"
FILE_NAME = "settings.toml"
BOOKMARKS = ("1", "2", "3", "4")
SIZE_LIMIT = 1 << 20  # a settings file is a few KiB: a larger one is not ours (or is /dev/zero behind a link)


def settings_path(folder: str | Path | None = None) -> Path:
    """The settings file: in ``folder``, else $KERNEL_LAB_CONFIG_DIR, else the user's config folder."""
    if folder is None:
        folder = os.environ.get(FOLDER_VARIABLE)
    if not folder:
        import platformdirs

        folder = platformdirs.user_config_dir("kernel-lab", appauthor=False)
    return Path(folder) / FILE_NAME


class Settings:
    """The settings read at start (``data``) and updated as the viewer runs, saved by ``save()``."""

    def __init__(self, path: Path | None, data: dict | None = None, problem: str = ""):
        self.path = path
        self.data = data if data is not None else {"version": VERSION}
        self.problem = problem  # why the file was ignored ("" when read, or absent)
        self.ignored: list[str] = []  # saved values that could not be used, in words (counts that cannot run)
        self._filled_count: tuple[str, int] | None = None  # (scene, count) filled took from the file

    @property
    def notices(self) -> list[str]:
        """What the viewer says at start about the file: why it was ignored, which values were."""
        return ([self.problem] if self.problem else []) + self.ignored

    @classmethod
    def load(cls, path: str | Path | None = None) -> Settings:
        """Read the file; a missing one gives empty settings, a bad one empty settings and ``problem``."""
        path = Path(path) if path is not None else settings_path()
        if not os.path.lexists(path):
            return cls(path)
        try:
            data = read_toml(path, "settings file", SIZE_LIMIT)
        except UsageError as exc:  # not a regular file, too large, not TOML, nested too deeply
            return cls(path, problem=f"{exc}; ignored, starting clean")
        except OSError as exc:
            return cls(path, problem=f"settings file {path} cannot be read ({exc}): ignored, starting clean")
        version = data.get("version")
        if version != VERSION:
            return cls(
                path,
                problem=f"settings file {path} is from another version of kernel-lab (version "
                f"{version!r}, this one reads {VERSION}): ignored, starting clean",
            )
        problem = _shape_problem(data)
        if problem:
            return cls(path, problem=f"settings file {path} is damaged ({problem}): ignored, starting clean")
        return cls(path, data)

    def save(self) -> str | None:
        """Write the file (its folder made if missing); returns why it could not be, or None."""
        if self.path is None:
            return None
        import tomli_w

        self.data["version"] = VERSION
        try:
            text = tomli_w.dumps(_plain(self.data))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_text(str(self.path), text, what="settings file")
        except (OutputError, OSError, TypeError, ValueError) as exc:
            return f"settings not saved: {exc}"
        return None

    # --- parts ------------------------------------------------------------------------------------
    def table(self, name: str) -> dict:
        """A top-level table ("window", "panel", "record"), made when missing."""
        value = self.data.get(name)
        if not isinstance(value, dict):
            value = self.data[name] = {}
        return value

    def scene(self, name: str) -> dict:
        """The saved table of one scene, made when missing."""
        scenes = self.table("scenes")
        value = scenes.get(name)
        if not isinstance(value, dict):
            value = scenes[name] = {}
        return value

    def get(self, name: str, kind: type, default=None):
        """A top-level value if it has the right type."""
        value = self.data.get(name)
        return value if isinstance(value, kind) and not (kind is int and isinstance(value, bool)) else default

    # --- the command line's share: what a scene is created with -------------------------------------
    def filled(self, request, scenes: dict):
        """``view``'s request (``sim.cmdline.requests.ViewRequest``) with what the command line left unset (None)
        taken from the file: the scene, its preset and count, the backend (a saved GPU backend starts as
        "auto": the CPU when no GPU is there now) and the window size."""
        scene, size = request.scene, request.size
        name = scene.scene
        if name is None:
            saved = self.get("scene", str)
            name = saved if saved in scenes else None
        preset, count = scene.preset, scene.count
        if name is not None and preset is None:
            preset, saved_count = self.saved_start(scenes[name])
            if count is None and saved_count is not None:
                count = saved_count
                self._filled_count = (name, count)
        backend = scene.backend
        if backend is None:
            backend = "auto" if self.get("backend", str) == "gpu" else "cpu"
        if size is None:
            window = self.table("window")
            width, height = window.get("width"), window.get("height")
            if all(isinstance(v, int) and not isinstance(v, bool) and 200 <= v <= 16384 for v in (width, height)):
                size = (width, height)
        return replace(
            request, size=size, scene=replace(scene, scene=name, preset=preset, count=count, backend=backend)
        )

    def saved_start(self, spec) -> tuple[str | None, int | None]:
        """A scene's saved preset (if the scene still has it) and count (if that preset takes one)."""
        saved = self.scene(spec.name)
        preset, count = saved.get("preset"), saved.get("count")
        if not isinstance(preset, str) or preset not in {p.name for p in spec.presets}:
            return None, None
        if (
            isinstance(count, int)
            and not isinstance(count, bool)
            and count > 0
            and spec.preset(preset).count is not None
        ):
            return preset, count
        return preset, None

    def count_ignored(self, scene: str, count: int, reason) -> str:
        """Say (and keep in ``ignored``) that the saved ``count`` of ``scene`` cannot run, and why."""
        where = f" in {self.path}" if self.path is not None else ""
        notice = (
            f"saved count {count:,} of the {scene} scene{where} cannot run ({reason}): "
            "ignored, the preset's count instead"
        )
        self.ignored.append(notice)
        return notice

    def forget_count(self, scene, reason) -> str:
        """A scene (``sim.cmdline.requests.SceneRequest``) that would not start with the count ``filled`` took from
        the file: say so, to start it with the preset's count instead; "" when the count was not the file's."""
        filled, self._filled_count = self._filled_count, None
        if filled is None or filled != (scene.scene, scene.count):
            return ""
        return self.count_ignored(*filled, reason)


def _shape_problem(data: dict) -> str:
    """What is wrong with the file's shape ("" when nothing): the tables must be tables."""
    for name in ("window", "panel", "record", "scenes"):
        if name in data and not isinstance(data[name], dict):
            return f"{name!r} should be a table"
    for name, table in data.get("scenes", {}).items():
        if not isinstance(table, dict):
            return f"scenes.{name} should be a table"
    return ""


def _plain(value):
    """Tuples -> lists, numpy numbers -> Python numbers, None dropped: what TOML can hold."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()
    return value
