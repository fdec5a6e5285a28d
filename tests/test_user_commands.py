"""Your own kernel's commands with a stand-in sandbox (TwinBox, the CPU twin's outputs and made-up times; also
used by test_user_speed.py and test_user_hints.py): ``check``'s grader table, its warnings, exit 0/1 naming
the wrong cells, the overflow and the time-out, --json; ``bench --kernel-file`` and ``check`` against a
--baseline. What they refuse before running anything: test_user_commands_refusals.py (``template``:
test_user_template.py; on a GPU: test_user_commands_gpu.py)."""

from __future__ import annotations

import json

import pytest

import main
from sim.gpu.cuda import source_path
from sim.heat.user_stage import StepStage
from sim.userkernel import commands as user_commands
from sim.userkernel.sandbox import RunResult, SandboxError

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")


@pytest.fixture
def my_step(tmp_path):
    path = tmp_path / "my_step.cu"
    path.write_text(source_path("sim/heat/templates/step.cu").read_text())
    return path


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
