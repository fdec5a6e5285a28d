"""Load GLSL programs from ``shaders/`` by name.

A program is one ``NAME.glsl`` file holding both stages, each guarded by
``#if defined VERTEX_SHADER`` / ``#elif defined FRAGMENT_SHADER``; the loader compiles the
file twice, inserting the matching ``#define`` after the ``#version`` line.
"""

from __future__ import annotations

import importlib.resources
from functools import cache
from pathlib import Path

import moderngl

SHADER_DIR = Path(importlib.resources.files("shaders"))


@cache
def shader_source(name: str) -> str:
    path = SHADER_DIR / f"{name}.glsl"
    if not path.is_file():
        raise FileNotFoundError(f"no shader named {name!r} (looked for {path})")
    return path.read_text()


def _with_defines(source: str, defines: tuple[str, ...]) -> str:
    lines = source.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("#version"):
            return "\n".join([*lines[: i + 1], *(f"#define {d}" for d in defines), *lines[i + 1 :]]) + "\n"
    raise ValueError("shader source has no #version line")


def load_program(ctx: moderngl.Context, name: str, defines: tuple[str, ...] = ()) -> moderngl.Program:
    """The program of ``shaders/NAME.glsl``; ``defines`` select compile-time options of the file."""
    source = shader_source(name)
    return ctx.program(
        vertex_shader=_with_defines(source, ("VERTEX_SHADER", *defines)),
        fragment_shader=_with_defines(source, ("FRAGMENT_SHADER", *defines)),
    )
