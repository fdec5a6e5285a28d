"""The grader's hints: each classic mistake, planted in what a stand-in sandbox hands back for heat's step,
gets its hint under check's table and in the JSON; a correct kernel gets none."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_user_commands import TwinBox

import main
from sim.gpu.cuda import source_path
from sim.userkernel import commands as user_commands
from sim.userkernel import hints

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")


@pytest.fixture
def my_step(tmp_path):
    path = tmp_path / "my_step.cu"
    path.write_text(source_path("sim/heat/templates/step.cu").read_text())
    return path


def one_ulp_up(tout):  # a product rounded once, not twice: the last bit off in some cells
    tout[1:-1:3, 1:-1:2] = np.nextafter(tout[1:-1:3, 1:-1:2], np.float32(np.inf))


def last_row_unwritten(tout):  # a grid one block row short
    tout[-1, :] = np.nan


def wrong_unless_square(tout):  # ni and nj swapped: right only where they are equal
    if tout.shape[0] != tout.shape[1]:
        tout[1, 1] += 1.0


class Racy:  # other cells wrong on every run of the same inputs
    def __init__(self):
        self.runs = 0

    def __call__(self, tout):
        self.runs += 1
        tout[1, 1 + self.runs % (tout.shape[1] - 2)] += 1.0


def check(my_step, tmp_path, monkeypatch, capsys, box, sizes="9,1073"):
    monkeypatch.setattr(user_commands, "Sandbox", box)
    out = tmp_path / "check.json"
    code = main.main(
        [
            "check",
            "heat",
            "--kernel-file",
            str(my_step),
            "--sizes",
            sizes,
            "--seeds",
            "1",
            "--json",
            str(out),
            "--quiet",
        ]
    )
    text = capsys.readouterr().out
    return (
        code,
        [line.removeprefix("hint: ") for line in text.splitlines() if line.startswith("hint: ")],
        json.loads(out.read_text()),
    )


@pytest.mark.parametrize(
    "plant, overflow, hint",
    [
        (one_ulp_up, (), hints.FMA),
        (last_row_unwritten, (), hints.NEVER_WRITTEN.format(item="cell")),
        (None, ["wrote 3 values past the end of `tout`"], hints.BOUNDS),
        (Racy(), (), hints.RACE),
    ],
    ids=["fma", "never written", "bounds", "race"],
)
def test_each_planted_mistake_gets_its_hint(my_step, tmp_path, monkeypatch, capsys, plant, overflow, hint):
    code, found, record = check(my_step, tmp_path, monkeypatch, capsys, TwinBox(plant, overflow=overflow))
    assert code == 1
    assert found == [hint] and record["hints"] == [hint]


def test_a_kernel_wrong_only_where_the_grid_is_not_square_is_told_about_indices(my_step, tmp_path, monkeypatch, capsys):
    code, found, record = check(my_step, tmp_path, monkeypatch, capsys, TwinBox(wrong_unless_square), "9,1073,7000")
    assert code == 1
    assert found == [hints.SIZES.format(right="9", wrong="1,073, 7,000", item="cell")]
    assert [c["unstable"] for c in record["cases"]] == [False, False, False]


def test_a_correct_kernel_gets_no_hint(my_step, tmp_path, monkeypatch, capsys):
    code, found, record = check(my_step, tmp_path, monkeypatch, capsys, TwinBox())
    assert (code, found, record["hints"]) == (0, [], [])
