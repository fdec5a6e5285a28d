"""The one timing harness of every benchmark (the product's and the peers'): warm-up, then repeats
until the median is known to 1% or a time budget ends.

``measure(run, clock=...)`` calls ``run`` ``warmup`` times untimed, then repeats it, each repeat
timed by ``clock`` (``EventClock``: CUDA events on a stream; ``HostClock``: the host's clock, for CPU
work or work that waits for itself). Between repeats, untimed: ``setup`` (restore the input) and
``flush`` (``l2_flush``: a write of a buffer larger than the device's L2 cache, where the working set
fits in L2, so that no repeat finds its data left in L2 by the one before). Repeats are queued in
batches that double in size (bounded by what the budget leaves); only between batches does the host
wait for the device and look at the samples, so a repeat holds no host sync beyond what ``run``
itself needs.

The error is the half-width of the distribution-free 95% confidence interval of the median: the
order statistics x_(k) and x_(n+1-k) with k the largest rank for which P(B <= k-1) <= 2.5%, B
binomial(n, 1/2) (the sign test's interval; no assumption about the distribution of the samples).
Fewer than 6 samples have no such interval: the error is then None (unknown).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

CONFIDENCE = 0.95
REL_ERROR = 0.01  # stop once the error is under 1% of the median
BUDGET_S = 2.0  # ... or once the timed repeats have taken this long
MAX_REPEATS = 100_000


@dataclass(frozen=True)
class Timing:
    """A measured figure: the median of ``repeats`` samples and its error (same unit), or None."""

    median: float
    error: float | None
    repeats: int
    samples: tuple[float, ...] = field(default=(), repr=False, compare=False)

    @property
    def converged(self) -> bool:
        return self.error is not None and self.error <= REL_ERROR * self.median

    def scaled(self, factor: float) -> Timing:
        """The same measurement in another unit (ms -> s, per run -> per step)."""
        return Timing(
            self.median * factor,
            None if self.error is None else self.error * factor,
            self.repeats,
            tuple(v * factor for v in self.samples),
        )

    def fields(self, name: str, repeats: str | None = "repeats") -> dict:
        """The record's figure ``name``, its ``<name>_err`` and the repeat count under ``repeats`` (a further
        pass of the same record: its own key; None: left out, the count being another figure's)."""
        found = {name: self.median, f"{name}_err": self.error}
        return found if repeats is None else {**found, repeats: self.repeats}

    def text(self, digits: int = 4) -> str:
        """``median ± err (n)``, as the tables print a figure."""
        error = "?" if self.error is None else f"{self.error:.{digits}g}"
        return f"{self.median:.{digits}g} ± {error} ({self.repeats})"


def figure_text(record: dict, name: str, digits: int = 4, repeats: str = "repeats") -> str:
    """A record's figure as ``median ± err (n)``, n under ``repeats`` (older records without the error: the
    median alone)."""
    if f"{name}_err" not in record:
        return f"{record[name]:.{digits}g}"
    return Timing(record[name], record[f"{name}_err"], record.get(repeats, 0)).text(digits)


def median_ranks(n: int, confidence: float = CONFIDENCE) -> int:
    """The 1-based rank k of the interval [x_(k), x_(n+1-k)] for the median, 0 when n is too small."""
    if n < 1:
        return 0
    j = np.arange(1, n + 1)
    log_pmf = np.concatenate(([0.0], np.cumsum(np.log(n - j + 1) - np.log(j)))) - n * math.log(2)
    cdf = np.cumsum(np.exp(log_pmf))  # P(B <= j), j = 0..n
    return int(np.count_nonzero(cdf[: (n + 1) // 2] <= (1 - confidence) / 2))


def summarise(samples) -> Timing:
    """The median of ``samples`` and the half-width of its 95% interval (None below 6 samples)."""
    x = np.sort(np.asarray(samples, dtype=np.float64))
    n = x.size
    k = median_ranks(n)
    error = float(x[n - k] - x[k - 1]) / 2 if k else None
    return Timing(float(np.median(x)), error, n, tuple(np.asarray(samples, dtype=np.float64).tolist()))


class HostClock:
    """Milliseconds of each repeat by the host's clock (CPU work, or device work that waits for itself)."""

    def __init__(self, now: Callable[[], float] = time.perf_counter):
        self.now = now
        self._start = 0.0
        self._samples: list[float] = []

    def begin(self) -> None:
        self._start = self.now()

    def end(self) -> None:
        self._samples.append((self.now() - self._start) * 1e3)

    def collect(self) -> list[float]:
        samples, self._samples = self._samples, []
        return samples


class EventClock:
    """Milliseconds of each repeat between CUDA events on ``stream`` (default: the current stream).

    The events are made once and reused batch after batch; ``collect`` waits for the last one."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream
        self._events: list[tuple[Any, Any]] = []  # CuPy events
        self._used = 0

    def _pair(self):
        import cupy

        if self._used == len(self._events):
            self._events.append((cupy.cuda.Event(), cupy.cuda.Event()))
        return self._events[self._used]

    def begin(self) -> None:
        self._pair()[0].record(self.stream)

    def end(self) -> None:
        self._pair()[1].record(self.stream)
        self._used += 1

    def collect(self) -> list[float]:
        import cupy

        used, self._used = self._events[: self._used], 0
        if used:
            used[-1][1].synchronize()
        return [cupy.cuda.get_elapsed_time(start, end) for start, end in used]


class StageTimerClock:
    """The frames a scene's ``StageTimer`` records (CUDA events or host times per stage) as the repeats:
    a repeat's time is the sum of its frame's stages; ``stages`` gathers each stage's samples."""

    def __init__(self, timer: Any) -> None:
        self.timer = timer
        self.stages: dict[str, list[float]] = {}
        self._frames = 0

    def begin(self) -> None:
        """The scene's timer marks its own stages."""

    def end(self) -> None:
        self._frames += 1

    def collect(self) -> list[float]:
        self.timer.flush()
        k, self._frames = self._frames, 0
        if not k:
            return []
        totals = np.zeros(k)
        for name in self.timer.names:
            values = self.timer.history(name)[-k:]
            values = np.concatenate((np.zeros(k - values.size), values))  # a stage first seen in this batch
            self.stages.setdefault(name, []).extend(values.tolist())
            totals += values
        return totals.tolist()


class L2Flush:
    """Writes a device buffer twice the size of the L2 cache (queued on ``stream``): L2 then holds none of
    the measured work's data."""

    def __init__(self, l2_bytes: int, device: int = 0, stream=None):
        import cupy

        self.device, self.stream = device, stream
        with cupy.cuda.Device(device):
            self.buffer = cupy.empty(2 * l2_bytes, cupy.uint8)

    def __call__(self) -> None:
        import cupy

        stream = self.stream if self.stream is not None else cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memsetAsync(self.buffer.data.ptr, 0, self.buffer.nbytes, stream.ptr)


def l2_flush(working_set_bytes: int | None, device: int = 0, stream=None) -> L2Flush | None:
    """The flush between repeats when the working set fits in the device's L2 (else the work evicts its own
    data, and a flush would only add time); None when the working set is not known."""
    from sim.gpu.cuda import device_properties

    l2 = int(device_properties(device).get("l2CacheSize", 0))
    if working_set_bytes is None or not l2 or working_set_bytes > l2:
        return None
    return L2Flush(l2, device, stream)


def measure(
    run: Callable[[], object],
    clock,
    *,
    setup: Callable[[], object] | None = None,
    flush: Callable[[], object] | None = None,
    warmup: int = 1,
    min_repeats: int = 1,
    budget_s: float = BUDGET_S,
    max_repeats: int = MAX_REPEATS,
    max_batch: int | None = None,
    done: Callable[[], bool] | None = None,
    between: Callable[[], object] | None = None,
    now: Callable[[], float] = time.perf_counter,
) -> Timing:
    """Time ``run``: ``warmup`` untimed calls, then at least ``min_repeats`` timed ones, more until the
    error is under 1% of the median or the repeats have taken ``budget_s`` (or ``max_repeats``, or ``done()``
    says the work has ended). ``between()`` is called after each repeat (a Ctrl-C check, a progress bar);
    ``max_batch`` bounds the repeats queued before the clock is read."""
    for _ in range(warmup):
        if setup is not None:
            setup()
        run()
    clock.collect()
    samples: list[float] = []
    started = now()
    batch = 1
    while True:
        for _ in range(batch):
            if setup is not None:
                setup()
            if flush is not None:
                flush()
            clock.begin()
            run()
            clock.end()
            if between is not None:
                between()
            if done is not None and done():
                break
        samples += clock.collect()
        timing = summarise(samples)
        elapsed = now() - started
        n = len(samples)
        if (done is not None and done()) or n >= max_repeats:
            return timing
        if n >= min_repeats and (timing.converged or elapsed >= budget_s):
            return timing
        batch = _next_batch(n, min_repeats, elapsed, budget_s, max_repeats, max_batch)


Result = TypeVar("Result")


def measure_returning(
    run: Callable[[], Result], clock, *, between: Callable[[], object] | None = None, **options
) -> tuple[Timing, Result]:
    """``measure(run, clock, **options)`` and what the last call of ``run`` returned. The older results are
    let go after each repeat, outside the timed part (a batch's solution is large: freeing it is not the
    solve's time), before the caller's ``between``."""
    results: list[Result] = []

    def forget_older() -> None:
        del results[:-1]
        if between is not None:
            between()

    timing = measure(lambda: results.append(run()), clock, between=forget_older, **options)
    return timing, results[-1]


def samples(run: Callable[[], object], clock, repeats: int, setup: Callable[[], object] | None = None) -> list[float]:
    """Exactly ``repeats`` timed runs of ``run`` after one untimed one, in ``clock``'s milliseconds: a fixed
    count (the best of a few runs, a table of built-in times) where no interval is asked for. ``setup`` runs
    untimed before each (zeroing an accumulator the run adds to)."""
    return list(measure(run, clock, setup=setup, warmup=1, min_repeats=repeats, max_repeats=repeats).samples)


def _next_batch(
    n: int, min_repeats: int, elapsed: float, budget_s: float, max_repeats: int, max_batch: int | None
) -> int:
    """Doubling, up to what the budget leaves at the pace so far; first up to ``min_repeats``."""
    if n < min_repeats:
        batch = min_repeats - n
    else:
        pace = elapsed / n
        batch = min(n, int((budget_s - elapsed) / pace) + 1 if pace > 0 else n)
    batch = min(batch, max_repeats - n, max_batch or batch)
    return max(1, batch)
