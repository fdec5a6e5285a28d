"""Progress of long runs, one way for every command: a tqdm bar on stderr when it is a terminal,
nothing at all otherwise (a pipe, a log file, a test) or when the user asked for quiet (--quiet).

    from sim.cmdline import progress

    with progress.Progress("CPU histogram", total=pairs, unit="pairs", show=long_run) as bar:
        for chunk in chunks:
            ...
            bar.advance(len(chunk))

``set_quiet(True)`` silences every bar of the process; ``shown(stream)`` says whether a bar would
be drawn. The bar goes to stderr so stdout keeps only the command's results.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

_quiet = False


def set_quiet(quiet: bool) -> None:
    """Silence (or allow again) every progress bar of this process."""
    global _quiet
    _quiet = bool(quiet)


def shown(stream=None) -> bool:
    """Whether a bar would be drawn on ``stream`` (default stderr): a terminal, and not quiet."""
    stream = sys.stderr if stream is None else stream
    if _quiet:
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Progress:
    """A progress bar over ``total`` units of work; ``advance(amount)`` as the work gets done.

    ``show=False`` (e.g. a run too short to need one), a stream that is not a terminal or
    ``set_quiet(True)`` draw nothing. The bar is removed when closed, so the command's own output
    follows a clean line.
    """

    def __init__(self, label: str, total: float, unit: str = "", show: bool = True, stream=None):
        self.label, self.total, self.unit = label, _whole(max(float(total), 1.0)), unit
        self.stream = sys.stderr if stream is None else stream
        self.done: float = 0
        self.bar = None
        if show and shown(self.stream):
            from tqdm import tqdm

            self.bar = tqdm(
                total=self.total,
                desc=label,
                unit=f" {unit}" if unit else "it",
                unit_scale=self.total >= 1e5,
                file=self.stream,
                leave=False,
                dynamic_ncols=True,
                mininterval=0.25,
            )

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def active(self) -> bool:
        """Whether a bar is being drawn."""
        return self.bar is not None

    def advance(self, amount: float = 1) -> None:
        amount = _whole(min(float(amount), self.total - self.done))
        self.done += amount
        if self.bar is not None and amount > 0:
            self.bar.update(amount)

    def set_status(self, text: str) -> None:
        """A short note after the bar (e.g. the current steps/s)."""
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)

    def close(self) -> None:
        bar, self.bar = self.bar, None
        if bar is not None:
            bar.close()


def _whole(value: float) -> float | int:
    """An int when the value is whole, so the bar counts 50/200, not 50.0/200."""
    return int(value) if float(value).is_integer() else value


def frames_callback(label: str, unit: str = "frames", stream=None, show: bool = True):
    """A ``progress(done, total)`` callback drawing one bar (created on the first call; none with
    ``show=False``, as ``Progress``); call it with done == total to close the bar."""
    state: dict = {}

    def callback(done: int, total: int) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = Progress(label, total, unit, show=show, stream=stream)
        bar.advance(done - bar.done)
        if done >= total:
            bar.close()

    return callback


class CompileWatch:
    """Notices kernels being compiled: numba functions (its compile events, with their names) and CUDA
    builds (``sim.gpu.cuda``'s memo of compiled modules). ``poll()`` says whether anything compiled since
    the last poll; ``current`` names the numba function compiling now (for a start-up screen).

    Use as a context manager; numba's listener is removed on exit.
    """

    def __init__(self) -> None:
        self.names: list[str] = []  # numba functions compiled, outermost only, in order
        self.current = ""  # the one compiling now ("" between compiles)
        self._depth = 0
        self._seen = (0, 0)
        self._start_cuda = 0
        self._listener: object | None = None  # numba's compile-event listener while watching

    def __enter__(self) -> CompileWatch:
        from numba.core import event

        watch = self

        class Listener(event.Listener):
            def on_start(self, ev) -> None:
                watch._depth += 1
                if watch._depth == 1:
                    watch.current = _function_name(ev)

            def on_end(self, ev) -> None:
                watch._depth = max(watch._depth - 1, 0)
                if watch._depth == 0 and watch.current:
                    watch.names.append(watch.current)
                    watch.current = ""

        self._listener = Listener()
        event.register("numba:compile", self._listener)
        self._seen = self._counts()
        self._start_cuda = self._seen[1]
        return self

    def __exit__(self, *exc) -> None:
        from numba.core import event

        if self._listener is not None:
            event.unregister("numba:compile", self._listener)
            self._listener = None

    @staticmethod
    def _cuda_builds() -> int:
        from sim.gpu.cuda import _module

        return _module.cache_info().misses

    def _counts(self) -> tuple[int, int]:
        return len(self.names) + self._depth, self._cuda_builds()

    @property
    def cuda_builds(self) -> int:
        """CUDA builds compiled while watching."""
        return self._cuda_builds() - self._start_cuda

    def poll(self) -> bool:
        """True when a kernel compiled (or started compiling) since the last poll."""
        counts = self._counts()
        changed, self._seen = counts != self._seen, counts
        return changed


def _function_name(ev) -> str:
    dispatcher = ev.data.get("dispatcher")
    function = getattr(dispatcher, "py_func", None)
    return getattr(function, "__name__", "") or "kernel"


@dataclass
class RunTiming:
    """How a headless run's steps went: the start-up (steps during which kernels compiled or loaded,
    the first step always) apart from the rest."""

    steps: int = 0
    startup_steps: int = 0
    startup_s: float = 0.0
    run_s: float = 0.0  # the other steps, and waiting for the device at the end
    after_s: float = 0.0  # what ran after each step (a recording's frames)
    compiled: list[str] = field(default_factory=list)
    cuda_builds: int = 0

    def startup_line(self) -> str:
        what = []
        if self.compiled:
            what.append("numba: " + ", ".join(dict.fromkeys(self.compiled)))
        if self.cuda_builds:
            what.append(f"{self.cuda_builds} CUDA build{'s' if self.cuda_builds > 1 else ''}")
        how = f"compiling kernels ({'; '.join(what)})" if what else "kernels loaded from the cache"
        steps = "the first step" if self.startup_steps == 1 else f"{self.startup_steps} steps"
        return f"start-up: {self.startup_s:.2f} s in {steps}, {how}"

    @property
    def timed_steps(self) -> int:
        return self.steps - self.startup_steps

    @property
    def steps_per_s(self) -> float:
        return self.timed_steps / self.run_s if self.run_s > 0 and self.timed_steps else 0.0


def run_steps(scene, steps: int, after_step=None, label: str | None = None) -> RunTiming:
    """Step ``scene`` ``steps`` times (fewer when it reaches its end) with a progress bar (on a terminal),
    timing the steps that compiled kernels (and the first one, which loads them) apart from the others;
    ``after_step(scene)`` runs after each step, timed on its own."""
    import time

    from sim.cmdline import interrupts

    timing = RunTiming()
    with CompileWatch() as watch, Progress(label or scene.spec.name, steps, "steps") as bar:
        for i in range(steps):
            start = time.perf_counter()
            if not scene.run_frame(1):
                break
            timing.steps += 1
            stepped = time.perf_counter()
            if watch.poll() or i == 0:
                timing.startup_s += stepped - start
                timing.startup_steps += 1
            else:
                timing.run_s += stepped - start
            if after_step is not None:
                after_step(scene)
                timing.after_s += time.perf_counter() - stepped
            bar.advance(1)
            interrupts.check()
        start = time.perf_counter()
        scene.finish()
        timing.run_s += time.perf_counter() - start
        timing.compiled, timing.cuda_builds = list(watch.names), watch.cuda_builds
    return timing
