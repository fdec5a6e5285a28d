"""sdh against hostile sizes, widths and options; the resource estimate; the interruptible CPU histogram."""

import io
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from process_time import CORES, signal_and_wait
from streams import Terminal

from sim.cmdline import resources
from sim.cmdline.cli import UsageError
from sim.sdh import data, sdh_cpu
from tests.test_sdh_cpu import brute_force

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("width", ["1e-300", "5e-324", "1e-5", "1e-4", "1e-3", "0.0398"])
def test_tiny_widths_are_refused_quickly(cli, width):
    start = time.perf_counter()
    out = cli("sdh", "100", width)
    assert out.returncode == 2 and "at most 1,000,000" in out.stderr and "Traceback" not in out.stderr
    assert time.perf_counter() - start < 30 and out.stdout == ""


def test_smallest_width_within_the_limit_runs(cli):
    out = cli("sdh", "100", "0.04")
    assert out.returncode == 0, out.stderr
    assert out.stdout.endswith("\n T:4950 \n")
    assert out.stdout.count("|") == data.bucket_count(0.04) - 1  # "| " between buckets


@pytest.mark.parametrize("atoms", ["99999999999999999999", "1000000000000"])
def test_sizes_past_memory_are_refused_with_the_estimate(cli, atoms):
    out = cli("sdh", atoms, "500")
    assert out.returncode == 2 and "of memory" in out.stderr and "Traceback" not in out.stderr
    assert "needs about" in out.stderr and out.stdout == ""


def test_a_billion_atoms_are_refused_where_they_do_not_fit(cli):
    if data.ATOM_BYTES * 10**9 <= resources.available_memory() * resources.MEMORY_SHARE:
        pytest.skip("this machine has room for a billion atoms")
    out = cli("sdh", "1000000000", "500")
    assert out.returncode == 2 and "48 GB of memory" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--kernel", "foo"], "--kernel applies to the GPU backend only"),
        (["--kernel", "fast"], "--kernel applies to the GPU backend only"),
        (["--compare"], "--compare applies to the GPU backend only"),
        (["128"], "BLOCK applies to the GPU backend only"),
        (["128", "--compare"], "BLOCK and --compare apply to the GPU backend only"),
        (["--backend", "gpu", "--kernel", "foo"], "unknown kernel 'foo'"),
        (["--backend", "gpu", "--kernel", ""], "--kernel"),
        (["--backend", "gpu", "--kernel", "fast,bar"], "unknown kernel 'bar'"),
    ],
)
def test_options_that_do_not_apply_are_refused(cli, args, message):
    out = cli("sdh", "100", "500", *args)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_tiles_cover_every_pair_once():
    for n in (2, 3, 17, 300, 2000):
        for budget in (1, 5, 64, 4096, 10**7):
            seen = np.zeros((n, n), np.int64)
            total = 0
            for first, last, lo, hi in sdh_cpu.tiles(n, 8, lambda b=budget: b):
                for i in range(first, last):
                    seen[i, max(lo, i + 1) : hi] += 1
                total += sdh_cpu.tile_pairs(n, first, last, lo, hi)
            assert np.array_equal(seen, np.triu(np.ones((n, n), np.int64), 1)), (n, budget)
            assert total == n * (n - 1) // 2


def test_small_tiles_count_exactly(monkeypatch):
    monkeypatch.setattr(sdh_cpu, "CHUNK_SECONDS", 1e-12)  # the smallest tiles: row bands split into column windows
    points = np.random.default_rng().uniform(0, 23000, (3000, 3))
    buckets = data.bucket_count(250.0)
    counts = sdh_cpu.histogram(points, 250.0, buckets)
    np.testing.assert_array_equal(counts, brute_force(points, 250.0, buckets))


class Recorder:
    def __init__(self):
        self.done, self.calls = 0, 0

    def advance(self, pairs):
        self.done += pairs
        self.calls += 1


def test_progress_counts_every_pair():
    rec = Recorder()
    n = 20_000
    counts = sdh_cpu.histogram(data.atoms(n), 500.0, data.bucket_count(500.0), progress=rec)
    assert rec.done == counts.sum() == n * (n - 1) // 2 and rec.calls > 1


def test_ctrl_c_stops_the_cpu_histogram_within_a_second():
    points = data.atoms(3_000_000)  # 4.5e12 pairs: hours of work
    sdh_cpu.histogram(points[:100], 500.0, 80)  # compiled before the clock starts
    sent = []

    def interrupt():
        time.sleep(2.0)
        sent.extend((time.perf_counter(), time.process_time()))
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        sdh_cpu.histogram(points, 500.0, 80)
    # the work after the signal, every thread's (a loaded machine stretches the wall time, not this)
    assert time.process_time() - sent[1] < 0.5 * CORES
    assert time.perf_counter() - sent[0] < 10.0


def test_cli_announces_a_long_run_and_exits_130_on_ctrl_c():
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), "sdh", "3000000", "500"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    notice = proc.stderr.readline()
    assert "about" in notice and "Ctrl-C" in notice and "3,000,000 atoms" in notice
    time.sleep(1.5)  # into the histogram
    sent = time.perf_counter()
    after = signal_and_wait(proc, signal.SIGINT)
    assert proc.returncode == 130
    assert after < CORES and time.perf_counter() - sent < 10.0  # a chunk on each core, then the exit
    assert proc.stdout.read() == "" and "Traceback" not in proc.stderr.read()


def test_bucket_count_refuses_past_the_limit():
    assert data.bucket_count(data.MIN_WIDTH * 1.0001) <= data.MAX_BUCKETS
    for width in (data.MIN_WIDTH / 2, 5e-324, 0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            data.bucket_count(width)
        with pytest.raises(UsageError):
            data.bucket_count(width)


def test_atoms_unchanged_by_the_in_place_scaling():
    from sim.crand import RAND_MAX, glibc_rand

    expected = (glibc_rand(1, 3000).astype(np.float64) / RAND_MAX * data.BOX_SIZE).reshape(1000, 3)
    np.testing.assert_array_equal(data.atoms(1000), expected)


# --- sim/cmdline/resources.py ------------------------------------------------------------------------------
def test_check_refuses_past_memory_and_disk_and_quotes_the_estimate(tmp_path):
    with pytest.raises(UsageError, match=r"needs about 1e\+03 PB of memory"):
        resources.check(resources.Estimate("a run", memory=10**18))
    with pytest.raises(UsageError, match="writes about"):
        resources.check(resources.Estimate("a run", disk=10**18, disk_path=str(tmp_path / "out")))
    resources.check(resources.Estimate("a run", memory=1000, disk=1000, disk_path=str(tmp_path / "out")))


def test_check_announces_long_runs_only():
    stream = io.StringIO()
    resources.check(resources.Estimate("short", seconds=resources.NOTICE_SECONDS / 2), stream=stream)
    assert stream.getvalue() == ""
    resources.check(resources.Estimate("long", seconds=7200), stream=stream)
    assert "long: about 2 h" in stream.getvalue() and "Ctrl-C" in stream.getvalue()


def test_progress_bar_on_a_terminal_only():
    stream = Terminal()
    with resources.Progress("work", 1000, "items", stream=stream) as progress:
        progress.advance(250)
        progress.bar.refresh()
    assert "work:  25%" in stream.getvalue()
    for silent, show in ((io.StringIO(), True), (Terminal(), False)):  # not a terminal; not asked for
        quiet = resources.Progress("work", 1000, show=show, stream=silent)
        quiet.advance(500)
        quiet.close()
        assert silent.getvalue() == ""


def test_human_units():
    assert resources.human_bytes(48e9) == "48 GB"
    assert resources.human_seconds(5.25) == "5.2 s"
    assert resources.human_seconds(7.7e6) == "89 days"
    assert resources.human_seconds(1e13).endswith("years")
    assert 0 < resources.available_memory() and resources.cpu_threads() >= 1


def test_gpu_path_of_the_command_with_a_stand_in_device(monkeypatch, capsys):
    """The command's GPU branch (kernel list, --compare, exit codes) with the CPU standing in for CuPy."""
    import argparse
    import types

    from sim.gpu import backend
    from sim.sdh import cli as sdh_cli
    from sim.sdh.kernels import KERNELS

    launched = []

    def histogram(points, width, buckets, kernel, block):
        launched.append((kernel, block))
        counts = sdh_cpu.histogram(points, width, buckets)
        if kernel == "naive":  # a planted wrong count
            counts[0] += 1
        return counts, 1.0

    def launch_shape(kernel, n, block, buckets, device=0, slots=None):
        if kernel == "tensor" and buckets > 100:  # the tensor kernel's counters: narrow buckets do not fit
            raise ValueError(f"the tensor kernel cannot count {buckets} buckets")
        return 1, 0, False

    fake = types.SimpleNamespace(
        KERNELS=KERNELS,
        KernelError=ValueError,
        histogram=histogram,
        launch_shape=launch_shape,
        fine_slots=lambda buckets: (buckets + 1) ** 2 + 2,
    )
    monkeypatch.setitem(sys.modules, "sim.sdh.gpu", fake)
    monkeypatch.setattr("sim.sdh.gpu", fake, raising=False)
    monkeypatch.setattr(backend, "gpu_status", lambda: backend.GpuStatus(True, "stand-in"))
    parser = argparse.ArgumentParser()
    sdh_cli.add_arguments(parser)
    assert "default: the fastest exact kernel" in parser.format_help()
    # no --kernel: the fastest that can run at the width, tensor, else fast; the printout is the course's
    assert sdh_cli.run(parser.parse_args(["500", "500", "64", "--backend", "gpu", "--compare"])) == 0
    out = capsys.readouterr()
    assert "Running time for GPU version: 1.00000 ms" in out.out and "Difference histogram (GPU - CPU):" in out.out
    assert "(tensor)" not in out.out and "left out" not in out.err
    assert sdh_cli.run(parser.parse_args(["500", "300", "64", "--backend", "gpu"])) == 0  # 133 buckets
    out = capsys.readouterr()
    assert out.out.startswith("Running time for GPU version: 1.00000 ms\n") and out.err == ""
    assert launched == [("tensor", 64), ("fast", 64)]
    launched.clear()
    assert sdh_cli.run(parser.parse_args(["500", "500", "--backend", "gpu", "--kernel", "fast,naive"])) == 1
    assert "kernel naive disagrees with fast" in capsys.readouterr().err
    assert sdh_cli.run(parser.parse_args(["500", "500", "--backend", "gpu", "--kernel", "naive", "--compare"])) == 1
    assert "1 buckets differ" in capsys.readouterr().err
    # --kernel all leaves out what cannot run, saying so once: over MPI ranks only rank 0 says it
    assert sdh_cli.runnable(["tensor", "fast"], True, 500, 133, [64], say=False) == ["fast"]
    assert capsys.readouterr().err == ""
    assert sdh_cli.runnable(["tensor", "fast"], True, 500, 133, [64]) == ["fast"]
    assert "kernel tensor left out: the tensor kernel cannot count 133 buckets" in capsys.readouterr().err
