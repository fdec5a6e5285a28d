"""The sandbox: a user's kernel runs in a worker process with a CUDA context of its own.

Why a worker and not the caller's process: a kernel that faults (an illegal address) leaves its CUDA
context unusable for good, every later call in that process fails; and a kernel that never returns
cannot be stopped from inside the process that launched it. In a worker, a fault costs the worker
(it reports CUDA's message and exits) and a kernel past the time limit is stopped by killing the
worker; the next ``run`` starts a new one. The caller (``check``, ``bench``, the viewer) keeps its own
context and its state.

    with Sandbox(time_limit_s=5.0) as box:
        result = box.run(source, inputs, block=(32, 8), repeats=20, builtin=("global",))
        result.outputs, result.ms, result.overflow, result.builtin_ms, result.checked_ms

The worker is a "spawn" process (never a fork of a process that may hold a CUDA context); requests
and answers are plain picklable data: the ``UserSource``, the stage's inputs as numpy arrays, the
outputs back as numpy arrays. The time limit applies to each launch of the user's kernel (timed launches
queued back to back, as the built-ins' are, get it once per launch); starting
the worker, compiling and timing the built-in variants get ``SETUP_LIMIT_S`` (NVRTC on a large
build takes seconds).
"""

from __future__ import annotations

import multiprocessing
import signal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from sim.userkernel import faults, timing
from sim.userkernel.source import UserSource

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import SpawnProcess

SETUP_LIMIT_S = 300.0  # starting CuPy, compiling, timing the built-in builds


@dataclass
class RunResult:
    outputs: dict[str, np.ndarray]  # what the kernel wrote (guards stripped)
    ms: list[float] = field(default_factory=list)  # one per timed launch (CUDA events); empty when not timed
    overflow: list[str] = field(default_factory=list)  # "wrote 12 values past the end of `out`"; empty when none
    builtin_ms: dict[str, list[float]] = field(default_factory=dict)  # built-in variant -> ms, when asked
    device: str = ""  # the GPU it ran on
    checked_ms: float = 0.0  # the checked launch (a new build's first also loads it): the live stage's time


class SandboxError(RuntimeError):
    """The kernel could not run to the end: ``kind`` is "fault", "timeout", "compile" or "no-gpu"; the
    message is one line for the panel or the terminal. ``device``: the GPU itself faulted (an illegal
    address...), not the worker's Python: reported to ``sim.userkernel.faults``, since it outlives the
    worker (GL draws of CUDA-written data go wrong on that GPU)."""

    def __init__(self, kind: str, message: str, device: bool = False):
        super().__init__(message)
        self.kind = kind
        self.device = device


class Sandbox:
    """One worker process, started on first use and again after a fault or a timeout."""

    def __init__(self, time_limit_s: float = 5.0, job=None):
        self.time_limit_s = float(time_limit_s)
        self._job = job or run_job  # what the worker does with a request (tests hand in their own)
        self._process: SpawnProcess | None = None
        self._conn: Connection | None = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> None:
        """A new worker; kept only once it has started (a job that cannot be pickled, or a system out of
        processes, leaves nothing to stop and says why)."""
        context = multiprocessing.get_context("spawn")
        conn, child = context.Pipe()
        process = context.Process(target=serve, args=(child, self._job), name="kernel-lab sandbox", daemon=True)
        try:
            process.start()
        except BaseException as exc:
            conn.close()
            if isinstance(exc, OSError):
                raise SandboxError("fault", f"could not start the sandbox worker: {exc}") from None
            raise
        finally:
            child.close()  # the worker has its own end of the pipe
        self._process, self._conn = process, conn

    def _worker(self) -> tuple[SpawnProcess, Connection]:
        """The worker ``_start`` made and the pipe to it."""
        if self._process is None or self._conn is None:
            raise SandboxError("fault", "the sandbox worker is not running")
        return self._process, self._conn

    def _stop(self) -> None:
        """Kill the worker (a kernel that never returns ignores anything gentler)."""
        if self._process is not None:
            self._process.kill()
            self._process.join(10)
        if self._conn is not None:
            self._conn.close()
        self._process = self._conn = None

    def run(
        self, source: UserSource, inputs: dict, block, repeats: int = 0, builtin: tuple[str, ...] = ()
    ) -> RunResult:
        """Compile (cached in the worker by source text), one checked launch, ``repeats`` timed launches after
        a warm-up, the built-in variants when asked; SandboxError when it cannot finish."""
        if self._process is None or not self._process.is_alive():
            self._stop()
            self._start()
        _, conn = self._worker()
        conn.send((source, inputs, block, int(repeats), tuple(builtin)))
        try:
            return self._answer()
        except SandboxError:
            raise
        except BaseException:  # Ctrl-C in the caller: the worker's answer would come to the next run
            self._stop()
            raise

    def _answer(self) -> RunResult:
        """The worker's answer to the request just sent, the time limit applied phase by phase."""
        process, conn = self._worker()
        phase, launches = "setup", 1
        while True:
            limit = self.time_limit_s * launches if phase == "kernel" else SETUP_LIMIT_S
            try:
                ready = conn.poll(limit)
                message = conn.recv() if ready else None
            except (EOFError, OSError):
                process.join(5)
                code = process.exitcode
                self._stop()
                raise SandboxError("fault", f"the worker running the kernel died (exit code {code})") from None
            if message is None:
                self._stop()
                if phase == "kernel":
                    what = "the kernel" if launches == 1 else f"{launches} launches of the kernel"
                    raise SandboxError("timeout", f"{what} did not return within {limit:g} s; it was stopped")
                raise SandboxError(
                    "timeout", f"the sandbox did not answer within {limit:g} s while setting up; it was stopped"
                )
            tag, *rest = message
            if tag == "phase":  # ("phase", name) or ("phase", "kernel", launches queued back to back)
                phase, launches = rest[0], (rest[1] if len(rest) > 1 else 1)
            elif tag == "done":
                return rest[0]
            else:  # "error": the worker stops itself after a fault or without a GPU
                kind, text, device = rest
                if kind in ("fault", "no-gpu"):
                    self._stop()
                if device:
                    faults.report(text)
                raise SandboxError(kind, text, device)

    def close(self) -> None:
        """Stop the worker (it holds a CUDA context and GPU memory)."""
        if self._conn is not None and self._process is not None and self._process.is_alive():
            try:
                self._conn.send(None)
                self._process.join(5)
            except (OSError, BrokenPipeError):
                pass
        self._stop()


# --- the worker side ----------------------------------------------------------------------------------
def serve(conn, job) -> None:
    """The worker's loop: one request at a time until told to stop (None) or the caller is gone. After a
    fault (the context is unusable) or without a GPU it answers and exits. Ctrl-C at the terminal reaches
    the whole process group: the caller decides, and stops the worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        try:
            conn.send(("done", job(conn, *request)))
        except SandboxError as exc:
            conn.send(("error", exc.kind, str(exc), exc.device))
            if exc.device:
                _end_on_a_dead_context()
            if exc.kind in ("fault", "no-gpu"):
                return
        except Exception as exc:  # the adapter's own failure: the caller sees it as a fault, in one line
            first = (str(exc).strip().splitlines() or [""])[0]
            conn.send(("error", "fault", f"{type(exc).__name__}: {first}", False))
            return


def _end_on_a_dead_context() -> None:
    """After a GPU fault the worker's CUDA context is dead for good, and the fault's traceback still holds
    the job's CUDA objects (the clock's events, the guarded outputs, the module): freed now, each destructor
    would call CUDA, fail, and print "Exception ignored in Event.__del__" on the caller's terminal. The
    answer is sent; the process ends here without running them (the driver frees the context's memory)."""
    import os
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


_modules: dict[tuple[str, tuple[str, ...]], Any] = {}  # the worker's loaded user modules by (text, options)


def _kernel(source: UserSource):
    """The user's entry kernel, compiled once per source text (``sim.gpu.cuda.load_module``: NVRTC for this
    device, the CPU check's float mode, the cubin cache); SandboxError("compile") with file:line."""
    import cupy

    from sim.gpu.cubins import BuildFailed
    from sim.gpu.cuda import load_module
    from sim.gpu.nvrtc import CompileStopped, arch_for
    from sim.userkernel.source import failed_build, options

    key = (source.compiled_text(), options(source))
    if key not in _modules:
        device = cupy.cuda.Device()
        try:
            _modules[key] = load_module(key[0], source.name, key[1], device.id)
        except BuildFailed as exc:
            errors = [
                d for d in failed_build(exc.log, source, arch_for(device.compute_capability)) if d.severity == "error"
            ]
            raise SandboxError("compile", str(errors[0]).splitlines()[0]) from None
        except CompileStopped as exc:
            raise SandboxError("compile", f"{source.shown_name}: {exc}") from None
    try:
        return _modules[key].get_function(source.stage.entry)
    except cupy.cuda.driver.CUDADriverError:
        raise SandboxError("compile", f"{source.shown_name}: no kernel named {source.stage.entry}") from None


def _device_errors():
    import cupy

    return cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError


def _builtin(adapter, variant: str, inputs: dict, block, repeats: int) -> list[float]:
    """A built-in variant's milliseconds, timed as the user's kernel is (``timing``), or [] where it cannot
    run with this block (a temporal kernel takes whole warps across)."""
    from sim.gpu.cuda import KernelError

    try:
        return timing.milliseconds(adapter.builtin_launch(variant, inputs, block), repeats)
    except KernelError:
        return []


def run_job(conn, source: UserSource, inputs: dict, block, repeats: int, builtin: tuple[str, ...]) -> RunResult:
    """One request in the worker: compile, one checked launch on guarded outputs (timed too), timed repeats
    queued back to back after a warm-up, built-in variants. ``conn`` hears the phase ("kernel" while the
    user's kernel runs: the caller's time limit)."""
    from sim.contract import load
    from sim.gpu import measure
    from sim.gpu.backend import gpu_status

    status = gpu_status()
    if not status.available:
        raise SandboxError("no-gpu", f"no GPU to run the kernel on: {status.reason}")
    import cupy

    from sim.userkernel.guard import Guarded

    adapter = load(source.stage.adapter)()
    try:
        kernel = _kernel(source)
        wanted = adapter.outputs(inputs)
        guards = {name: Guarded(cupy, name, out.shape, out.dtype, out.start) for name, out in wanted.items()}
        device = {name: cupy.asarray(value) for name, value in inputs.items() if isinstance(value, np.ndarray)}
        device.update({name: g.body for name, g in guards.items()})
        grid, threads, shared = adapter.launch(inputs, block)
        grid, threads, shared = tuple(grid), tuple(threads), int(shared)
        args = adapter.args(inputs, device)
        cupy.cuda.Device().synchronize()

        def launch() -> None:
            kernel(grid, threads, args, shared_mem=shared)

        # The caller's time limit runs from each phase message (sent before the first event: no host time
        # inside), for as many launches as the phase queues.
        conn.send(("phase", "kernel"))
        clock = measure.EventClock()
        clock.begin()
        launch()  # the checked launch, on poisoned outputs, from an idle GPU
        clock.end()
        (checked_ms,) = clock.collect()
        conn.send(("phase", "setup"))
        overflow = [message for g in guards.values() for message in g.overflow()]
        outputs = {name: cupy.asnumpy(g.body) for name, g in guards.items()}
        ms = []
        if repeats:  # after a warm-up, queued back to back, accumulators zeroed untimed, as the built-ins' are
            conn.send(("phase", "kernel", repeats + 1))
            zeroed = [g.body for name, g in guards.items() if wanted[name].start == "zero"]
            ms = timing.milliseconds(timing.Launch(launch, timing.zero(zeroed)), repeats)
        conn.send(("phase", "setup"))
        builtin_ms = {variant: _builtin(adapter, variant, inputs, block, max(1, repeats)) for variant in builtin}
    except _device_errors() as exc:
        raise SandboxError("fault", f"the kernel faulted: {str(exc).strip()}", device=True) from None
    return RunResult(outputs, ms, overflow, builtin_ms, status.device_name, checked_ms)
