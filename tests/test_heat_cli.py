"""The ``heat`` command on the CPU: the DLI printout, --stats and --output against the twin, bad
input refused before anything is written, the memory guard, Ctrl-C."""

import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from process_time import CORES, signal_and_wait

import main
from sim.gpu.backend import gpu_status
from sim.heat import course
from sim.heat.stencil_cpu import HeatCpu

ROOT = pathlib.Path(__file__).resolve().parent.parent


def heat(capsys, *args):
    """(exit code, stdout, stderr) of ``main.py heat ARGS`` run in this process."""
    try:
        code = main.main(["heat", *map(str, args)])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def final_field(ni, nj, steps, factor=course.TFAC):
    twin = HeatCpu(course.initial_field(ni, nj), factor)
    twin.advance(steps)
    return twin.field


def test_defaults_print_what_the_dli_programme_prints(capsys):
    code, out, err = heat(capsys)
    lines = out.splitlines()
    assert code == 0 and err == ""
    dli = course.initial_field(course.NI, course.NJ)
    assert lines[0] == course.initial_cells_line(dli) == "84.01878 12.91487 43.08361 "
    assert lines[1].startswith("Elapsed CPU: ") and lines[1].endswith(" ms") and len(lines) == 2


def test_stats_and_output_are_the_twins_field(capsys, tmp_path):
    path = tmp_path / "field.f32"
    code, out, _ = heat(capsys, "--ni", 37, "--nj", 19, "--steps", 11, "--factor", 0.2, "--stats", "--output", path)
    expected = final_field(37, 19, 11, 0.2)
    assert code == 0
    assert path.read_bytes() == expected.astype("<f4").tobytes()
    values = expected.astype(np.float64)
    assert out.splitlines()[-1] == f"sum {values.sum():.6f} min {values.min():.6f} max {values.max():.6f}"
    assert out.splitlines()[0] == "84.01878 - - "  # a 37 x 19 grid has no cell 4500 or 6700


def test_zero_steps_write_the_initial_field(capsys, tmp_path):
    path = tmp_path / "init.f32"
    assert heat(capsys, "--ni", 101, "--nj", 71, "--steps", 0, "--output", path)[0] == 0
    assert path.read_bytes() == course.initial_field(101, 71).tobytes()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--ni", 2], "at least 3"),
        (["--nj", 0], "at least 3"),
        (["--steps", -1], "must be"),
        (["--steps", "many"], "whole number"),
        (["--factor", "nan"], "--factor"),
        (["--factor", 0.25], "--factor"),
        (["--factor", -0.01], "--factor"),
        (["--kernel", "shared"], "GPU backend only"),
        (["--block", "32x8"], "GPU backend only"),
        (["--fma"], "GPU backend only"),
        (["--compare"], "GPU backend only"),
        (["--backend", "gpu", "--kernel", "fancy"], "unknown kernel"),
        (["--backend", "gpu", "--k", 4], "temporal kernel only"),
        (["--backend", "gpu", "--kernel", "temporal", "--k", 0], "must be positive"),
        (["--backend", "gpu", "--kernel", "temporal", "--k", 9], "1 <= k <= 8"),
        (["--backend", "gpu", "--kernel", "temporal", "--block", "48x2"], "multiple of 32"),
        (["--backend", "gpu", "--block", "64x32"], "at most 1024"),
        (["--backend", "gpu", "--block", "256"], "2D shape"),
        (["--backend", "tpu"], "invalid choice"),
        (["--output", "/nonexistent-folder/field.f32"], "does not exist"),
    ],
)
def test_bad_input_exits_2_before_any_work(capsys, tmp_path, args, message):
    code, out, err = heat(capsys, *args)
    assert code == 2 and message in err
    assert out == ""  # refused before the initial cells are printed


def test_an_existing_output_is_kept_when_the_input_is_bad(capsys, tmp_path):
    path = tmp_path / "keep.f32"
    path.write_bytes(b"previous")
    assert heat(capsys, "--steps", -3, "--output", path)[0] == 2
    assert path.read_bytes() == b"previous" and os.listdir(tmp_path) == ["keep.f32"]


def test_a_grid_too_large_for_memory_is_refused_with_the_estimate(capsys):
    code, out, err = heat(capsys, "--ni", "1M", "--nj", "1M")
    assert code == 2 and out == ""
    assert "a 1,000,000x1,000,000 grid x 200 steps on the CPU needs about 16 TB of memory" in err and "to spare" in err


@pytest.mark.skipif(gpu_status().available, reason="this machine has a GPU")
def test_the_gpu_backend_without_a_gpu_exits_1_with_the_reason(capsys):
    code, out, err = heat(capsys, "--backend", "gpu", "--kernel", "all", "--block", "32x4")
    assert code == 1 and "GPU backend unavailable" in err and out == ""


def test_ctrl_c_stops_a_long_cpu_run_within_a_second_and_writes_nothing(tmp_path):
    path = tmp_path / "never.f32"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "main.py"),
            "heat",
            "--ni",
            "2000",
            "--nj",
            "2000",
            "--steps",
            "10M",
            "--output",
            str(path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        first = proc.stdout.readline()  # printed before the run starts
        assert first.startswith("84.01878 ")
        time.sleep(1.5)  # well into the run
        sent = time.perf_counter()
        after = signal_and_wait(proc, signal.SIGINT)
        assert proc.returncode == 130
        assert after < 0.5 * CORES  # a chunk is ~0.2 s on each core
        assert time.perf_counter() - sent < 10.0
        assert os.listdir(tmp_path) == []
    finally:  # a failed check leaves no run behind
        if proc.returncode is None:
            proc.kill()
            proc.wait()
