"""sim.gpu.measure: the harness's stopping rule, its interval for the median, and the L2 flush between repeats,
on a fake clock (no GPU)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sim.gpu import measure
from sim.gpu.measure import HostClock, Timing, summarise


class FakeTime:
    """A clock that moves only when told."""

    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def timed_work(clock: FakeTime, durations, log=None):
    """A repeat that takes the next of ``durations`` seconds on the fake clock."""
    source = iter(durations)

    def run():
        if log is not None:
            log.append("run")
        clock.t += next(source)

    return run


def test_tight_samples_stop_once_the_error_is_under_one_percent():
    now = FakeTime()
    jitter = itertools.cycle([0.999, 1.0, 1.001])  # 0.1%: well under 1%
    timing = measure.measure(timed_work(now, (0.001 * j for j in jitter)), HostClock(now), now=now, budget_s=60)
    assert timing.converged and timing.repeats < 20  # 6 samples give an interval; a batch or two more at most
    assert timing.median == pytest.approx(1.0, rel=2e-3)  # milliseconds
    assert timing.error <= 0.01 * timing.median


def test_noisy_samples_stop_at_the_budget():
    now = FakeTime()
    rng = np.random.default_rng(0)
    noisy = (0.001 * v for v in rng.uniform(0.5, 1.5, 100_000))  # +-50%: 1% would take ~ 10^4 repeats
    timing = measure.measure(timed_work(now, noisy), HostClock(now), now=now, budget_s=0.2)
    assert not timing.converged
    assert 150 <= timing.repeats <= 260  # ~1 ms a repeat: the 0.2 s budget, give or take the last batch
    assert now.t == pytest.approx(0.001 + timing.repeats * 0.001, rel=0.1)  # the warm-up and the repeats


def test_the_requested_repeats_come_first_even_past_the_budget():
    now = FakeTime()
    timing = measure.measure(
        timed_work(now, itertools.repeat(1.0)), HostClock(now), now=now, budget_s=0.5, min_repeats=12
    )
    assert timing.repeats == 12 and timing.median == pytest.approx(1000.0) and timing.error == 0.0


def test_samples_are_exactly_the_repeats_asked_for_after_one_untimed_run():
    now = FakeTime()
    calls = []
    tight = timed_work(now, itertools.repeat(0.002), calls)  # converged long before: still all five
    assert measure.samples(tight, HostClock(now), 5) == pytest.approx([2.0] * 5)
    assert len(calls) == 6
    noisy = timed_work(now, (0.001 * v for v in itertools.cycle([1, 3, 2])))  # never converges: still five
    assert len(measure.samples(noisy, HostClock(now), 5)) == 5


def test_measure_returning_gives_the_last_calls_result():
    now = FakeTime()
    results = iter(range(100))

    def run():
        now.t += 0.001
        return next(results)

    timing, last = measure.measure_returning(run, HostClock(now), now=now, min_repeats=4, max_repeats=4)
    assert timing.repeats == 4 and last == 4  # the warm-up's 0, then four timed calls


def test_measure_returning_lets_go_of_older_results_outside_the_timed_part():
    now = FakeTime()
    alive, checks = [], []

    class Solution:  # freeing it takes a second of the fake clock
        def __init__(self):
            alive.append(self)

        def __del__(self):
            now.t += 1.0

    def run():
        now.t += 0.001
        solution = Solution()
        alive.clear()  # only the caller's references keep it
        return solution

    timing, last = measure.measure_returning(
        run, HostClock(now), now=now, min_repeats=5, max_repeats=5, between=lambda: checks.append(True)
    )
    assert timing.median == pytest.approx(1.0) and isinstance(last, Solution), "a free is not the solve's time"
    assert len(checks) == 5, "the caller's between still runs after each repeat"


def test_done_stops_a_run_that_reached_its_end():
    now = FakeTime()
    calls = []
    run = timed_work(now, itertools.repeat(0.001), calls)
    timing = measure.measure(run, HostClock(now), now=now, warmup=0, min_repeats=50, done=lambda: len(calls) >= 7)
    assert timing.repeats == 7


def test_the_flush_runs_before_each_repeat_and_is_not_timed():
    now = FakeTime()
    log: list[str] = []

    def flush():
        log.append("flush")
        now.t += 5.0  # far longer than a repeat: if it were timed, every sample would show it

    def setup():
        log.append("setup")
        now.t += 3.0

    clock = HostClock(now)
    timing = measure.measure(
        timed_work(now, itertools.repeat(0.002), log),
        clock,
        setup=setup,
        flush=flush,
        now=now,
        warmup=2,
        min_repeats=8,
        budget_s=1e9,
    )
    assert timing.median == pytest.approx(2.0) and timing.error == pytest.approx(0.0, abs=1e-9)
    assert log[:4] == ["setup", "run", "setup", "run"]  # the warm-up: no flush
    timed = log[4:]
    assert timed == ["setup", "flush", "run"] * timing.repeats


def test_the_interval_of_the_median_on_known_samples():
    # n = 10: P(B <= 1) = 11/1024 <= 2.5% < P(B <= 2) = 56/1024: the interval is [x_(2), x_(9)]
    assert measure.median_ranks(10) == 2
    timing = summarise([10, 1, 9, 2, 8, 3, 7, 4, 6, 5])
    assert timing.median == 5.5 and timing.error == pytest.approx((9 - 2) / 2) and timing.repeats == 10
    # n = 6: [x_(1), x_(6)] (P(B = 0) = 1/64); n = 5: no 95% interval (1/32 > 2.5%)
    assert measure.median_ranks(6) == 1 and measure.median_ranks(5) == 0
    assert summarise([1, 2, 3, 4, 5]).error is None
    # large n: the normal approximation's ranks n/2 -+ 1.96 sqrt(n)/2
    assert measure.median_ranks(10_000) == pytest.approx(5000 - 1.96 * 50, abs=2)


def test_timing_scaled_fields_and_text():
    t = Timing(2.0, 0.01, 40).scaled(0.5)
    assert t.fields("ms_per_step") == {"ms_per_step": 1.0, "ms_per_step_err": 0.005, "repeats": 40}
    assert t.text() == "1 ± 0.005 (40)"
    assert Timing(3.0, None, 2).text() == "3 ± ? (2)"
    assert measure.figure_text({"kernel_ms": 7.25}, "kernel_ms") == "7.25"  # an older record: no error
    record = {"kernel_ms": 7.25, "kernel_ms_err": 0.05, "repeats": 9}
    assert measure.figure_text(record, "kernel_ms") == "7.25 ± 0.05 (9)"


def test_no_flush_where_the_working_set_exceeds_l2(monkeypatch):
    monkeypatch.setattr("sim.gpu.cuda.device_properties", lambda device: {"l2CacheSize": 50 << 20})
    assert measure.l2_flush(60 << 20) is None  # evicts itself
    assert measure.l2_flush(None) is None  # not known


@pytest.mark.gpu
def test_event_clock_and_l2_flush_on_the_device():
    import cupy

    from sim.gpu.cuda import device_properties

    a = cupy.zeros(1 << 20, cupy.float32)  # 4 MB: fits in L2
    flush = measure.l2_flush(a.nbytes)
    assert flush is not None and flush.buffer.nbytes == 2 * device_properties(0)["l2CacheSize"]
    timing = measure.measure(lambda: a.__iadd__(1), measure.EventClock(), flush=flush, budget_s=0.5)
    assert timing.repeats >= 6 and timing.median > 0 and timing.error is not None
    assert float(a[0]) == timing.repeats + 1  # the warm-up and every repeat ran once


def test_timed_frames_record_the_error_and_the_frame_count(capsys):
    from sim.cmdline import bench, bench_report
    from sim.registry import SCENES

    scene = SCENES["balls"].create(preset="T", backend="cpu")
    record = bench.run(scene, steps=60, warmup=6, budget_s=0.0)  # 10 frames of 6 steps, no more
    assert record["repeats"] == 10 and record["steps"] == 60
    # an error bar, not its size: on a busy machine ten frames' spread can pass their median
    assert record["step_ms_err"] is not None and 0 <= record["step_ms_err"] < float("inf")
    assert set(record["stage_ms_err"]) == set(record["stage_ms"]) and record["l2_flushed"] is False
    text = bench_report.table(bench_report.report("balls", [record]))
    assert f"± {record['step_ms_err']:.4g} (10)" in text


def test_the_bench_table_says_what_the_step_time_and_the_pace_each_measure():
    from sim.cmdline import bench, bench_report
    from sim.registry import SCENES

    scene = SCENES["balls"].create(preset="T", backend="cpu")
    record = bench.run(scene, steps=56, warmup=6, budget_s=0.0)  # 10 frames of 6 steps: 60 timed
    assert (record["steps"], record["warmup_steps"], record["stats"]["steps"]) == (60, 6, 66)
    lines = [line.strip() for line in bench_report.table(bench_report.report("balls", [record])).splitlines()]
    step = next(line for line in lines if line.startswith("step (stages) "))
    assert step.endswith(f"the median frame's stages per step ({1e3 / record['step_ms']:.1f} steps/s)")
    assert f"wall {record['wall_s']:.3f} s for 60 timed steps (10 frames of 6)" in lines[lines.index(step) + 1]
    said = lines[lines.index(step) + 2]
    assert "over the wall time, the host work around the stages and slow frames included" in said
    assert "steps 66 (6 warm-up + 60 timed)" in next(line for line in lines if line.startswith("stats: "))


def test_heat_records_keep_their_fields_and_gain_the_error():
    from sim.cmdline import bench_report
    from sim.heat import bench as heat_bench

    timing = summarise([100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 100.2])
    info = {"registers": 32, "rows": None}
    record = heat_bench.record_for(1000, 200, "global", (32, 8), None, False, timing, 0.4, 3e12, True, info)
    assert record["run_ms"] == 100.0 and record["runs_ms"] == [100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 100.2]
    assert record["ms_per_step"] == pytest.approx(0.5) and record["repeats"] == 7
    assert record["run_ms_err"] == pytest.approx(1.0) and record["ms_per_step_err"] == pytest.approx(1.0 / 200)
    text = heat_bench.table(bench_report.report("heat", [record]) | {"copy_TBps": 3.0})
    assert "0.5 ± 0.005 (7)" in text


def test_durbin_scipy_figures_carry_seconds_per_step_and_their_error():
    from sim.cmdline import bench_report
    from sim.durbin import bench as durbin_bench
    from sim.durbin.bench_runs import _scipy_single, seconds

    timing, y = _scipy_single(400)
    assert y.shape == (400,) and timing.repeats >= 1 and timing.median > 0
    record = {"kind": "single", "backend": "cpu", "n": 400, "method": "scipy", **seconds(timing, 399)}
    assert record["us_per_step"] == pytest.approx(timing.median / 399 * 1e6)
    assert record["repeats"] == timing.repeats and set(record) >= {"s_err", "us_per_step_err"}
    text = durbin_bench.table(bench_report.report("durbin", [record]))
    assert f"({timing.repeats})" in text


@pytest.mark.gpu
def test_every_gpu_bench_record_has_its_error_and_repeats():
    from sim.durbin import bench as durbin_bench
    from sim.sdh import data, gpu

    counts, timing = gpu.measured_histogram(data.atoms(5000), 500.0, data.bucket_count(500.0), "fast", 256)
    assert counts.sum() == data.pair_count(5000) and timing.repeats >= 6 and timing.error is not None
    report = durbin_bench.run([2000], ["persistent-grid"], [256], batch=(1000, 16), probe=False)
    for r in report["results"]:
        if "skipped" not in r:
            assert r["repeats"] >= 1 and "s_err" in r, r
