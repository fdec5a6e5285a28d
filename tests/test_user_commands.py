"""Your own kernel's commands: ``check`` (the grader's table, exit 0/1/2/3, --json, --baseline) and ``bench
--kernel-file``, on any machine with a stand-in sandbox (``template``: test_user_template.py; on a GPU:
test_user_commands_gpu.py)."""

from __future__ import annotations

import json

import pytest

import main
from sim.gpu.cuda import source_path
from sim.heat.user_stage import StepStage
from sim.registry import SCENES
from sim.userkernel import commands as user_commands
from sim.userkernel import source as user_source
from sim.userkernel.sandbox import RunResult, SandboxError

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")


def exit_code(argv: list[str]) -> int:
    """main's exit code, argparse's own refusals (SystemExit) included."""
    try:
        return main.main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.fixture
def my_step(tmp_path):
    path = tmp_path / "my_step.cu"
    path.write_text(source_path("sim/heat/templates/step.cu").read_text())
    return path


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


class TwinBox:
    """A sandbox stand-in for the grader's tests: "runs" the kernel as the CPU twin does, with ``plant``
    applied to the outputs, or fails a case with a time-out; times are made up."""

    def __init__(self, plant=None, timeout_size=None, overflow=()):
        self.plant, self.timeout_size, self.overflow = plant, timeout_size, list(overflow)

    def __call__(self, time_limit_s):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def run(self, source, inputs, block, repeats=0, builtin=()):
        if inputs["tin"].size == self.timeout_size:
            raise SandboxError("timeout", "the kernel did not return within 5 s; it was stopped")
        outputs = StepStage().expected(inputs)
        if self.plant:
            self.plant(outputs["tout"])
        return RunResult(outputs, [0.5] * repeats, self.overflow, {v: [0.25] * repeats for v in builtin}, "Test GPU")


def right_column_wrong(tout):
    tout[1:-1, -1] += 1.0


def test_check_exits_0_with_one_row_a_case_when_every_case_is_correct(my_step, capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(user_commands, "Sandbox", TwinBox())
    out = tmp_path / "check.json"
    assert (
        main.main(
            [
                "check",
                "heat",
                "--kernel-file",
                str(my_step),
                "--sizes",
                "9,1073",
                "--seeds",
                "2",
                "--json",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    head = next(line for line in text.splitlines() if line.split()[:1] == ["size"])
    assert head.split() == [
        "size",
        "seed",
        "correct",
        "mismatches",
        "max",
        "error",
        "my_step.cu",
        "ms",
        "global",
        "ms",
        "shared",
        "ms",
        "temporal",
        "ms",
        "GB/s",
    ]
    rows = [line.split() for line in text.splitlines() if line.strip().split(" ")[0] in ("9", "1,073")]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("9", "0", "yes", "0"),
        ("9", "1", "yes", "0"),
        ("1,073", "0", "yes", "0"),
        ("1,073", "1", "yes", "0"),
    ]
    assert "4 of 4 cases correct" in text
    record = json.loads(out.read_text())
    assert (record["device"], record["scene"], record["stage"], record["file"]) == (
        "Test GPU",
        "heat",
        "step",
        str(my_step),
    )
    assert record["correct"] is True and len(record["cases"]) == 4
    assert record["cases"][0]["builtin_ms"] == {"global": 0.25, "shared": 0.25, "temporal": 0.25}


def test_check_prints_the_warnings_and_goes_on(my_step, capsys, monkeypatch):
    monkeypatch.setattr(user_commands, "Sandbox", TwinBox())
    text = my_step.read_text()
    my_step.write_text(text.replace("const float t = tin[at];", "const float t = tin[at];\n    int unused;"))
    assert main.main(["check", "heat", "--kernel-file", str(my_step), "--sizes", "9", "--seeds", "1", "--quiet"]) == 0
    assert f'{my_step}:32: warning: variable "unused" was declared but never referenced' in capsys.readouterr().err


def test_check_exits_1_naming_the_wrong_cells_the_overflow_and_the_time_out(my_step, capsys, monkeypatch):
    monkeypatch.setattr(
        user_commands,
        "Sandbox",
        TwinBox(right_column_wrong, timeout_size=9, overflow=["wrote 12 values past the end of `tout`"]),
    )
    assert (
        main.main(["check", "heat", "--kernel-file", str(my_step), "--sizes", "9,1073", "--seeds", "1", "--quiet"]) == 1
    )
    text = capsys.readouterr().out
    assert "size 9 seed 0:\n  the kernel did not return within 5 s; it was stopped" in text
    assert (
        "size 1,073 seed 0:\n  wrote 12 values past the end of `tout`\n"
        "  27 cells differ, compared exact (bit for bit); the worst:"
    ) in text
    labels = [line.split(")")[0].strip() + ")" for line in text.splitlines() if line.strip().startswith("cell (")]
    assert labels and all(label.startswith("cell (36, ") for label in labels)
    assert "0 of 2 cases correct; 2 wrong" in text


class SlowBox(TwinBox):
    """TwinBox with the user's kernel ``factor`` times slower."""

    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def run(self, source, inputs, block, repeats=0, builtin=()):
        result = super().run(source, inputs, block, repeats, builtin)
        return RunResult(
            result.outputs, [ms * self.factor for ms in result.ms], result.overflow, result.builtin_ms, result.device
        )


def test_bench_with_a_kernel_file_compares_with_its_own_json_as_the_baseline(my_step, capsys, monkeypatch, tmp_path):
    old = tmp_path / "old.json"
    monkeypatch.setattr(user_commands, "Sandbox", TwinBox())
    assert main.main(["bench", "heat", "--kernel-file", str(my_step), "--json", str(old), "--quiet"]) == 0
    capsys.readouterr()
    monkeypatch.setattr(user_commands, "Sandbox", SlowBox(3.0))
    assert main.main(["bench", "heat", "--kernel-file", str(my_step), "--baseline", str(old), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert f"against the baseline {old} (Test GPU," in text
    mine = text.split("stage heat step  n 3000000  variant my_step.cu  block 32x8\n")[1].splitlines()[1]
    assert mine.split()[0] == "median_ms" and "3.000" in mine and mine.endswith("slower")
    shared = text.split("variant shared  block 32x8\n")[1].splitlines()[1]
    assert "1.000" in shared and shared.endswith("same within error")


# --- check --baseline --------------------------------------------------------------------------------------
def test_check_with_a_baseline_prints_each_cases_ratio_and_correctness_then_and_now(
    my_step, capsys, monkeypatch, tmp_path
):
    old = tmp_path / "old.json"
    monkeypatch.setattr(user_commands, "Sandbox", TwinBox())
    assert (
        main.main(
            [
                "check",
                "heat",
                "--kernel-file",
                str(my_step),
                "--sizes",
                "9,1073",
                "--seeds",
                "1",
                "--json",
                str(old),
                "--quiet",
            ]
        )
        == 0
    )
    capsys.readouterr()

    class SlowAndWrong(SlowBox):  # three times slower, and the last column wrong
        def run(self, source, inputs, block, repeats=0, builtin=()):
            result = super().run(source, inputs, block, repeats, builtin)
            right_column_wrong(result.outputs["tout"])
            return result

    monkeypatch.setattr(user_commands, "Sandbox", SlowAndWrong(3.0))
    assert (
        main.main(
            [
                "check",
                "heat",
                "--kernel-file",
                str(my_step),
                "--sizes",
                "9,1073,7000",
                "--seeds",
                "1",
                "--baseline",
                str(old),
                "--quiet",
            ]
        )
        == 1
    )
    text = capsys.readouterr().out
    comparison = text.split(f"against the baseline {old} ({my_step}; Test GPU, commit ")[1].splitlines()
    assert comparison[1].split() == [
        "size",
        "seed",
        "ms",
        "then",
        "ms",
        "now",
        "now/then",
        "correct",
        "then",
        "->",
        "now",
    ]
    assert comparison[2].split() == ["9", "0", "0.5000", "1.5000", "3.000", "yes", "->", "no"]
    assert comparison[3].split() == ["1,073", "0", "0.5000", "1.5000", "3.000", "yes", "->", "no"]
    assert comparison[4].split() == ["7,000", "0", "-", "1.5000", "-", "not", "in", "the", "baseline", "->", "no"]


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
