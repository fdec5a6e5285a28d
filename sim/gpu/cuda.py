"""The one CUDA layer: every ``.cu`` file of the product is compiled and launched through here.

A kernel build is a ``Build``: a source named by its package path (``"sim/balls/proximity.cu"``,
found where the package is installed, without importing it, so an installed copy works like a
checkout), the NVRTC options
and the kernel names. ``kernels(build, device)`` compiles it once per device (``sim.gpu.nvrtc``, to a cubin
for the device's architecture, kept on disk by ``sim.gpu.cubins``, loaded as a CuPy RawModule),
with ``sim/`` on the include path for shared ``.cuh`` headers and a ``#line`` directive so compiler
messages name the real file and line; after that, asking again is one dictionary lookup (launchers ask
every frame): no file is read and nothing is hashed. A failing compile raises ``GpuCompileError`` and
caches nothing; other builds stay compiled.

Each package lists the builds its launchers make in a CuPy-free module (``kernels.py``; the viewer's
renderers in ``sim/gpu/render_builds.py``) so that a machine without a GPU can compile every one of them
with NVRTC (tests/test_cuda_sources.py).

Also shared by every launcher: ``KernelError`` (settings a kernel cannot run with), the device's
properties read once (``device_properties``), ``ceil_div`` and ``grid_for``. The prefix sum of counts
that several scenes share is ``sim.gpu.scan``.

CuPy is imported inside the functions: importing this module needs no GPU.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import re
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sim.gpu.timing import StageTimer


def package_dir(package: str) -> Path:
    """The folder of a top-level package, found without importing it (``viewer``'s import opens pyglet)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"no package {package!r}")
    return Path(next(iter(spec.submodule_search_locations)))


PACKAGES = ("sim", "viewer")  # where .cu sources live
INCLUDE_DIR = package_dir("sim")  # shared headers: #include "common/....cuh"


class GpuCompileError(RuntimeError):
    """A kernel failed to compile; the message names the file and line."""


class KernelError(ValueError):
    """A kernel cannot run with these settings (block size, shared memory, size, device); the message
    says why."""


@dataclass(frozen=True)
class Build:
    """One compilation of one source: what a launcher needs, what the NVRTC check compiles."""

    source: str  # package path, e.g. "sim/heat/stencil.cu"
    options: tuple[str, ...] = ()
    kernels: tuple[str, ...] = ()
    std: str = "--std=c++17"

    def all_options(self) -> tuple[str, ...]:
        extra = _planted.get(self.source, ())
        return (self.std, f"--include-path={INCLUDE_DIR}", *self.options, *extra)


def source_path(source: str) -> Path:
    """The file behind a package path such as ``"sim/balls/proximity.cu"``."""
    if source in _overrides:
        return _overrides[source]
    package, _, rest = source.partition("/")
    if package not in PACKAGES or not rest:
        raise ValueError(f"CUDA source {source!r} is not under {' or '.join(PACKAGES)}/")
    return package_dir(package) / rest


def all_sources() -> list[str]:
    """Every .cu file of the product, as package paths."""
    found = []
    for package in PACKAGES:
        root = package_dir(package)
        found += [f"{package}/{p.relative_to(root).as_posix()}" for p in sorted(root.rglob("*.cu"))]
    return found


def source_text(source: str) -> str:
    """The source with a #line directive naming it (or the file a test put in its place), and a last
    line naming the digest of the shared headers: the cubin cache (sim.gpu.cubins) keys on this text, and
    a header edited under an unchanged .cu must not bring back the kernel compiled from the old one."""
    name = _overrides[source].as_posix() if source in _overrides else source
    return f'#line 1 "{name}"\n{source_path(source).read_text()}\n// headers {headers_digest()}\n'


@functools.cache
def headers_digest() -> str:
    """SHA-1 of every .cuh under sim/ (names and contents), taken once a process: headers edited under a
    running process are not seen (a new process compiles them)."""
    digest = hashlib.sha1()
    for header in sorted(INCLUDE_DIR.rglob("*.cuh")):
        digest.update(header.relative_to(INCLUDE_DIR).as_posix().encode() + b"\0" + header.read_bytes())
    return digest.hexdigest()


def load_module(text: str, name: str, options: tuple[str, ...], device: int, stop=None):
    """A CuPy RawModule of ``text`` loaded on ``device``, compiled by ``sim.gpu.nvrtc`` for the device's own
    architecture with ``options`` alone (no ``-ftz=true``: the float mode of the CPU twins), through the
    disk cache of ``sim.gpu.cubins``. ``sim.gpu.cubins.BuildFailed`` (NVRTC's log) when it does not compile,
    ``sim.gpu.nvrtc.CompileStopped`` when the compile does not finish."""
    import cupy

    from sim.gpu import cubins, nvrtc

    with cupy.cuda.Device(device) as dev:
        arch = nvrtc.arch_for(dev.compute_capability)
        path = cubins.cubin_file(text, name, options, arch, stop=stop)
        try:
            module = cupy.RawModule(path=str(path))
            module.compile()  # loads it on this device now, not at the first launch
        except cupy.cuda.driver.CUDADriverError:  # a damaged cache entry: compiled again, replaced
            path = cubins.cubin_file(text, name, options, arch, fresh=True, stop=stop)
            module = cupy.RawModule(path=str(path))
            module.compile()
    return module


@functools.cache  # builds that differ only in their kernel names share one module
def _module(text: str, options: tuple[str, ...], device: int):
    """The loaded RawModule of ``text``; GpuCompileError with the compiler's first errors (caching nothing)
    when it does not compile or its compile does not finish."""
    from sim.gpu.cubins import BuildFailed
    from sim.gpu.nvrtc import CompileStopped

    name = re.match(r'#line 1 "(.*)"', text)
    try:
        return load_module(text, name[1] if name else "kernel.cu", options, device)
    except BuildFailed as exc:
        lines = [ln for ln in exc.log.splitlines() if re.search(r"\(\d+\): (error|catastrophic)|ptxas.*error", ln)]
        raise GpuCompileError("\n".join(lines[:5]) or exc.log.strip().splitlines()[-1]) from None
    except CompileStopped as exc:
        raise GpuCompileError(str(exc)) from None


# CuPy's objects (RawKernel, Stream, Event, Graph) are Any: CuPy has no type information.
_compiled: dict[tuple[Build, int], Mapping[str, Any]] = {}  # (build, device) -> its kernels by name


def kernels(build: Build, device: int) -> Mapping[str, Any]:
    """The build's kernels (CuPy RawKernel by name), compiled for ``device`` on first use; later calls
    are a dictionary lookup."""
    found = _compiled.get((build, device))
    if found is None:
        try:
            module = _module(source_text(build.source), build.all_options(), int(device))
        except GpuCompileError as exc:
            raise GpuCompileError(f"kernel compile failed ({' '.join(build.options)}):\n{exc}") from None
        found = MappingProxyType({name: module.get_function(name) for name in build.kernels})
        _compiled[build, device] = found
    return found


def kernel(build: Build, device: int, name: str | None = None):
    """One kernel of a build (its first when ``name`` is None)."""
    return kernels(build, device)[name or build.kernels[0]]


def _forget(source: str) -> None:
    """Drop the compiled builds of ``source`` (its options or file changed for a test)."""
    for key in [key for key in _compiled if key[0].source == source]:
        del _compiled[key]


@functools.cache
def device_properties(device: int) -> dict:
    """CuPy's properties of ``device`` (cudaDeviceProp's fields by name, ``name`` as text), read once."""
    import cupy

    props = dict(cupy.cuda.runtime.getDeviceProperties(device))
    if isinstance(props["name"], bytes):
        props["name"] = props["name"].decode()
    return props


def ceil_div(a: int, b: int) -> int:
    """a / b rounded up (for positive b): blocks to cover a items, b to a block."""
    return -(-a // b)


def grid_for(n: int, block: int) -> tuple[tuple[int], tuple[int]]:
    """(grid, block) for one thread per item."""
    return (max(1, ceil_div(n, block)),), (block,)


# --- tests plant faults here, never in a launcher's options ------------------------------------
_planted: dict[str, tuple[str, ...]] = {}
_overrides: dict[str, Path] = {}


@contextmanager
def planted(source: str, *options: str) -> Iterator[None]:
    """Tests only: every build of ``source`` gets ``options`` too while the block runs."""
    before = _planted.get(source)
    _planted[source] = (*(before or ()), *options)
    _forget(source)
    try:
        yield
    finally:
        if before is None:
            del _planted[source]
        else:
            _planted[source] = before
        _forget(source)


@contextmanager
def replaced_source(source: str, path: Path) -> Iterator[None]:
    """Tests only: compile ``path`` wherever ``source`` is asked for."""
    _overrides[source] = Path(path)
    _forget(source)
    try:
        yield
    finally:
        del _overrides[source]
        _forget(source)


# --- CUDA graphs --------------------------------------------------------------------------------
@dataclass
class FrameGraph:
    """The launches of ``record()`` captured once into a CUDA graph and replayed.

    For a frame with no host wait inside (no read-back, no allocation that grows) whose launches
    take the same arguments every time (e.g. an even number of double-buffered steps). Everything
    runs on a stream of its own, ordered after the current stream's work and before its next: the
    first call runs ``record`` eagerly there (so CuPy's memory pool holds every buffer it needs on
    that stream), the second captures it, later calls replay the graph. Anything that changes the
    launches' arguments (buffers reallocated, sizes, kernels) needs a new FrameGraph.
    """

    record: Callable[[], None]
    device: int
    _graph: Any = None
    _stream: Any = None
    _warm: bool = False
    replays: int = field(default=0)

    def __call__(self) -> None:
        import cupy

        with cupy.cuda.Device(self.device):
            caller = cupy.cuda.get_current_stream()
            if self._stream is None:
                self._stream = cupy.cuda.Stream(non_blocking=True)
            stream = self._stream
            stream.wait_event(caller.record())
            with stream:
                if not self._warm:
                    self.record()
                    self._warm = True
                else:
                    if self._graph is None:
                        stream.begin_capture()
                        try:
                            self.record()
                        finally:
                            self._graph = stream.end_capture()
                    self._graph.launch(stream)
                    self.replays += 1
            caller.wait_event(stream.record())


# --- stage timing with CUDA events -----------------------------------------------------------------
class EventStageTimer(StageTimer):
    """Stage times from CUDA events on the current stream, read when they are done (a frame late).

    No device-wide synchronisation is added for timing: ``frame_done`` only queues the frame's
    events and folds in the frames whose last event has completed; ``flush`` waits (for bench).
    """

    def __init__(self, stages: tuple[str, ...] = (), history: int = 240):
        super().__init__(stages, history)
        self._events: list[tuple[str, Any, Any]] = []
        self._pending: deque[tuple[list, dict[str, float], int]] = deque()

    @contextmanager
    def stage(self, name: str):
        import cupy

        start = cupy.cuda.Event()
        start.record()
        try:
            yield
        finally:
            end = cupy.cuda.Event()
            end.record()
            self._ensure(name)
            self._events.append((name, start, end))

    def frame_done(self, steps: int = 0) -> None:
        self._pending.append((self._events, self._current, steps))
        self._events, self._current = [], {}
        self._resolve(wait=False)

    def _resolve(self, wait: bool) -> None:
        import cupy

        while self._pending:
            events, host, steps = self._pending[0]
            if events and not wait and not events[-1][2].done:
                return
            if events:
                events[-1][2].synchronize()
            self._pending.popleft()
            for name, start, end in events:
                host[name] = host.get(name, 0.0) + cupy.cuda.get_elapsed_time(start, end)
            self._current = host
            super().frame_done(steps)

    def flush(self) -> None:
        self._resolve(wait=True)

    def clear(self) -> None:
        super().clear()
        self._events, self._pending = [], deque()


def stage_timer(backend: str, stages: tuple[str, ...]) -> StageTimer:
    """The timer for a backend: CUDA events on the GPU, the host clock on the CPU."""
    return EventStageTimer(stages) if backend == "gpu" else StageTimer(stages)
