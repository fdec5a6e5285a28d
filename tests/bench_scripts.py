"""The scripts under bench/ loaded as modules for their tests (bench/ is a folder of scripts, not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


def load(script: str, name: str | None = None, register: bool = False):
    """bench/<script>.py as a module called ``name`` (default the script's own); with ``register`` it is put in
    sys.modules first (dataclasses look their module up there)."""
    name = name or script
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
