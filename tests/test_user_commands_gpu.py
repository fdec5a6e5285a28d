"""``check heat`` on a GPU with the template and planted wrong kernels: the grader's table names the wrong cells,
a race in a shared-memory tile and a write past the end; ``bench --kernel-file`` times the kernel beside the
built-ins (marked ``gpu``)."""

from __future__ import annotations

import json

import pytest
from test_user_kernels import heat_source

import main

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")


def check_json(tmp_path, capsys, name: str, *extra: str):
    path = heat_source(name).path
    out = tmp_path / "check.json"
    code = main.main(["check", "heat", "--kernel-file", str(path), "--json", str(out), "--quiet", *extra])
    return code, capsys.readouterr(), json.loads(out.read_text())


@pytest.mark.gpu
def test_check_passes_the_template_on_every_default_size(tmp_path, capsys):
    code, printed, record = check_json(tmp_path, capsys, "template", "--seeds", "2")
    assert code == 0, printed.err
    assert "8 of 8 cases correct" in printed.out
    assert [c["size"] for c in record["cases"]] == [9, 9, 1073, 1073, 7000, 7000, 3_000_000, 3_000_000]
    assert all(c["correct"] and c["ms"] > 0 and c["builtin_ms"]["global"] > 0 for c in record["cases"])
    assert record["device"] and record["commit"]


@pytest.mark.gpu
@pytest.mark.parametrize(
    "name, cells",
    [
        ("edge_column", lambda ni, nj: {(ni - 1, j) for j in range(1, nj - 1)}),
        (
            "no_boundary",
            lambda ni, nj: {(i, j) for i in range(ni) for j in range(nj) if i in (0, ni - 1) or j in (0, nj - 1)},
        ),
        ("wrong_factor", lambda ni, nj: {(i, j) for i in range(1, ni - 1) for j in range(1, nj - 1)}),
    ],
)
def test_check_catches_planted_kernels_naming_the_right_cells(tmp_path, capsys, name, cells):
    code, printed, record = check_json(tmp_path, capsys, name, "--sizes", "1073", "--seeds", "1")
    assert code == 1
    case = record["cases"][0]
    want = cells(37, 29)
    assert case["mismatches"] == len(want) and not case["correct"]
    named = {tuple(int(v) for v in w["label"][len("cell (") : -1].split(", ")) for w in case["worst"]}
    assert named and named <= want


@pytest.mark.gpu
def test_check_catches_a_race_in_a_shared_memory_tile(tmp_path, capsys):
    """The tile read before every warp has filled it: cells read rows above and below that other warps
    store, so some come out wrong; only interior cells can (the ring reads its own cell only)."""
    code, printed, record = check_json(
        tmp_path, capsys, "tile_race", "--sizes", "3000000", "--seeds", "1", "--block", "32x8"
    )
    assert code == 1, printed.out
    case = record["cases"][0]
    assert case["mismatches"] > 0 and not case["correct"]
    named = [tuple(int(v) for v in w["label"][len("cell (") : -1].split(", ")) for w in case["worst"]]
    assert named and all(0 < i < 1999 and 0 < j < 1499 for i, j in named), named


@pytest.mark.gpu
def test_check_reports_a_write_past_the_end(tmp_path, capsys):
    code, printed, record = check_json(tmp_path, capsys, "past_end", "--sizes", "7000", "--seeds", "1")
    assert code == 1 and record["cases"][0]["overflow"] == ["wrote 12 values past the end of `tout`"]
    assert "wrote 12 values past the end of `tout`" in printed.out


@pytest.mark.gpu
def test_bench_times_the_kernel_beside_the_builtins(tmp_path, capsys):
    out = tmp_path / "bench.json"
    path = heat_source("template").path
    assert main.main(["bench", "heat", "--kernel-file", str(path), "--json", str(out), "--quiet"]) == 0
    record = json.loads(out.read_text())
    assert [r["variant"] for r in record["results"]] == ["step.cu", "global", "shared", "temporal"]
    assert record["correct"] and all(r["median_ms"] > 0 for r in record["results"])
