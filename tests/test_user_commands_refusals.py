"""What your own kernel's commands, ``check`` and ``bench --kernel-file``, say before running it: a compile
error at its file:line (exit 2), no GPU to run it on (exit 3), bad options, sizes and seeds past this
machine's memory or past a week, the announced estimate of a long check, a missing file, a --json that is
the kernel, a --baseline of another stage or one that is no check report. Their runs with a stand-in
sandbox: test_user_commands.py."""

from __future__ import annotations

import json

import pytest
import test_user_commands as commands

import main
from sim.registry import SCENES
from sim.userkernel import commands as user_commands
from sim.userkernel import source as user_source

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")
my_step = commands.my_step  # its fixture: heat's step template in tmp_path as my_step.cu


def exit_code(argv: list[str]) -> int:
    """main's exit code, argparse's own refusals (SystemExit) included."""
    try:
        return main.main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize("command", ["check", "bench"])
def test_a_compile_error_exits_2_with_file_line_and_runs_nothing(my_step, capsys, command):
    my_step.write_text(my_step.read_text().replace("tout[at] = t + tfac *", "tout[at] = t + tfacc *"))
    assert main.main([command, "heat", "--kernel-file", str(my_step)]) == 2
    err = capsys.readouterr().err
    assert f'{my_step}:38: error: identifier "tfacc" is undefined\n    tout[at] = t + tfacc * (d2tdx2 + d2tdy2);' in err
    assert f"{my_step} does not compile (1 error); nothing was run" in err


@pytest.mark.parametrize("command", ["check", "bench"])
def test_a_good_kernel_on_a_machine_without_a_gpu_exits_3_saying_so(my_step, capsys, command):
    from sim.gpu.backend import gpu_status

    if gpu_status().available:
        pytest.skip("this machine has a GPU")
    assert main.main([command, "heat", "--kernel-file", str(my_step), "--quiet"]) == 3
    assert f"kernel-lab {command}: {my_step} compiles; no GPU to run the kernel on: " in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--sizes", "5"], "--sizes: a heat step needs a grid of at least 3x3 = 9 cells, got 5"),
        (["--sizes", "9,abc"], "argument --sizes"),
        (["--seeds", "0"], "argument --seeds: value must be positive, got 0"),
        (["--block", "256"], "--block: the step stage takes a 2D block such as 32x8, got 256"),
        (["--block", "64x32"], "--block 64x32 is 2,048 threads; a CUDA block holds at most 1,024"),
        (["--time-limit", "0"], "--time-limit must be above 0"),
        (["--stage", "forces"], "no replaceable stage 'forces'"),
    ],
)
def test_check_refuses_bad_input_with_exit_2(my_step, capsys, extra, words):
    assert exit_code(["check", "heat", "--kernel-file", str(my_step), *extra]) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--seeds", "1e300"], "argument --seeds: must be at most 4,294,967,296 (seeds 0..K-1 are 32-bit), got 1e+300"),
        (
            ["--seeds", "1e9"],
            "check heat step: 4,000,000,000 cases (sizes 9, 1,073, 7,000, 3,000,000 x 1,000,000,000 "
            "seeds) needs about 3.04 PB of memory; this machine has",
        ),
        (
            ["--sizes", "1e12"],
            "check heat step: 3 cases (size 1,000,000,000,000 x 3 seeds) needs about 19 TB of memory",
        ),
        (["--sizes", "1e300", "--seeds", "2"], "(size 1e+300 x 2 seeds) needs about"),
    ],
)
def test_check_refuses_sizes_and_seeds_past_this_machine_before_making_anything(
    my_step, capsys, monkeypatch, extra, words
):
    from sim.cmdline import resources

    monkeypatch.setattr(resources, "available_memory", lambda: 8 << 30)
    monkeypatch.setattr(user_commands.Sandbox, "__init__", lambda *a: pytest.fail("refused before the sandbox"))
    assert exit_code(["check", "heat", "--kernel-file", str(my_step), *extra]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_check_refuses_a_run_past_a_week(tmp_path, capsys):
    """sdh's CPU twin takes every pair: 10^8 atoms fit in memory, not in a week."""
    kernel = tmp_path / "my_sdh.cu"
    assert main.main(["template", "sdh", "-o", str(kernel)]) == 0
    capsys.readouterr()
    assert exit_code(["check", "sdh", "--kernel-file", str(kernel), "--sizes", "1e8", "--seeds", "1"]) == 2
    assert "check sdh histogram: 1 case (size 100,000,000 x 1 seed) would take about" in capsys.readouterr().err


def test_a_long_check_is_announced_with_its_estimate(my_step, capsys, monkeypatch):
    from sim.cmdline import resources
    from sim.userkernel.estimate import check_estimate

    stage = SCENES["heat"].user_stage(None)
    adapter = user_source.adapter(user_source.load(my_step, SCENES["heat"]))
    assert not check_estimate(SCENES["heat"], stage, adapter, list(adapter.sizes()), 3).long
    big = check_estimate(SCENES["heat"], stage, adapter, [1 << 28], 3)
    assert big.long and 2 << 30 < big.memory < 8 << 30, big
    monkeypatch.setattr(resources, "available_memory", lambda: 64 << 30)
    resources.check(big)
    assert capsys.readouterr().err.startswith("check heat step: 3 cases (size 268,435,456 x 3 seeds): about ")


def test_check_refuses_a_missing_file_and_a_json_that_is_the_kernel(my_step, tmp_path, capsys):
    assert main.main(["check", "heat", "--kernel-file", str(tmp_path / "gone.cu")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main.main(["check", "heat", "--kernel-file", str(my_step), "--json", str(my_step)]) == 2
    assert "writing it would replace the input" in capsys.readouterr().err


def test_bench_with_a_kernel_file_refuses_the_frame_bench_options(my_step, capsys):
    assert exit_code(["bench", "heat", "--kernel-file", str(my_step), "--steps", "3"]) == 2
    assert "unrecognized arguments: --steps 3" in capsys.readouterr().err


def test_check_refuses_a_baseline_of_another_stage_before_running(my_step, capsys, monkeypatch, tmp_path):
    old = tmp_path / "sdh.json"
    old.write_text(
        json.dumps(
            {
                "device": "Test GPU",
                "scene": "sdh",
                "stage": "histogram",
                "file": "h.cu",
                "cases": [{"size": 1, "seed": 0, "correct": True, "ms": 0.1}],
            }
        )
    )
    monkeypatch.setattr(user_commands, "Sandbox", lambda *a: pytest.fail("nothing may run"))
    assert main.main(["check", "heat", "--kernel-file", str(my_step), "--baseline", str(old), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"baseline '{old}' is a check of sdh histogram, not of heat step" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "content, says",
    [
        ({"results": [{"variant": "global", "median_ms": 1.0}]}, 'is not a check report (no "cases" list'),
        (
            {"scene": "heat", "stage": "step", "cases": [{"size": 9, "seed": 0, "correct": "yes"}]},
            'cases[0] field "correct" is not true or false',
        ),
        ({"scene": "heat", "stage": "step", "cases": [{"size": 9, "correct": True}]}, 'cases[0] has no "seed"'),
        ({"stage": "step", "cases": []}, "does not say its scene"),
    ],
)
def test_check_refuses_a_baseline_that_is_no_check_report(my_step, capsys, tmp_path, content, says):
    old = tmp_path / "old.json"
    old.write_text(json.dumps(content))
    with pytest.raises(SystemExit) as exit:
        main.main(["check", "heat", "--kernel-file", str(my_step), "--baseline", str(old)])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert "--baseline" in err and says in err
