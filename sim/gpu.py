"""Shared GPU machinery (CuPy): kernels compiled once per device, CUDA-event stage timing.

Imported only when the GPU backend is in use: CPU-only machines never import CuPy through here.
"""

from __future__ import annotations

import functools
import pathlib
import re
from collections import deque
from contextlib import contextmanager

import cupy
import numpy as np

from sim.timing import StageTimer

ROOT = pathlib.Path(__file__).resolve().parent.parent


class GpuCompileError(RuntimeError):
    """A kernel failed to compile; the message names the file and line."""


@functools.cache
def _module(path: str, options: tuple[str, ...], device: int) -> cupy.RawModule:
    path = pathlib.Path(path)
    source = path.read_text()
    name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()
    # #line makes compiler messages name the real file and line
    module = cupy.RawModule(code=f'#line 1 "{name}"\n{source}', options=options)
    return module


def load_module(path: str | pathlib.Path, options: tuple[str, ...], kernels: tuple[str, ...]):
    """Compile ``path`` with ``options`` (once per device) and return its kernels by name."""
    device = cupy.cuda.Device().id
    try:
        module = _module(str(path), tuple(options), device)
        return {k: module.get_function(k) for k in kernels}
    except cupy.cuda.compiler.CompileException as exc:
        _module.cache_clear()
        lines = [ln for ln in str(exc).splitlines() if re.search(r"\(\d+\): (error|catastrophic)", ln)]
        detail = "\n".join(lines[:5]) or str(exc).strip().splitlines()[-1]
        raise GpuCompileError(f"kernel compile failed ({' '.join(options)}):\n{detail}") from None


def grid_for(n: int, block: int) -> tuple[tuple[int], tuple[int]]:
    return (max(1, -(-n // block)),), (block,)


class EventStageTimer(StageTimer):
    """Stage times from CUDA events on the current stream, read when they are done (a frame late).

    No device-wide synchronisation is added for timing: ``frame_done`` only queues the frame's
    events and folds in the frames whose last event has completed; ``flush`` waits (for bench).
    """

    def __init__(self, stages: tuple[str, ...] = (), history: int = 240):
        super().__init__(stages, history)
        self._events: list[tuple[str, cupy.cuda.Event, cupy.cuda.Event]] = []
        self._pending: deque[tuple[list, dict[str, float]]] = deque()

    @contextmanager
    def stage(self, name: str):
        start = cupy.cuda.Event()
        start.record()
        try:
            yield
        finally:
            end = cupy.cuda.Event()
            end.record()
            self._ensure(name)
            self._events.append((name, start, end))

    def frame_done(self) -> None:
        self._pending.append((self._events, self._current))
        self._events, self._current = [], {}
        self._resolve(wait=False)

    def _resolve(self, wait: bool) -> None:
        while self._pending:
            events, host = self._pending[0]
            if events and not wait and not events[-1][2].done:
                return
            if events:
                events[-1][2].synchronize()
            self._pending.popleft()
            for name, start, end in events:
                host[name] = host.get(name, 0.0) + cupy.cuda.get_elapsed_time(start, end)
            self._current = host
            super().frame_done()

    def flush(self) -> None:
        self._resolve(wait=True)

    def clear(self) -> None:
        super().clear()
        self._events, self._pending = [], deque()


def to_host(a) -> np.ndarray:
    return cupy.asnumpy(a)
