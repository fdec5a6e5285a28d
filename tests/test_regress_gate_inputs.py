"""bench/regress.py given hostile inputs: what the gate writes, what it reads, what it compares."""

from __future__ import annotations

import json
import os

import pytest
from gate_reports import (
    DEVICE,
    product_reports,
    regress,
    run,
    write,
)


def test_the_figures_file_is_written_atomically_never_through_a_link(gate_folders, tmp_path, capsys):
    out, results = gate_folders
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")
    os.symlink(precious, os.path.join(out, "regress.json"))
    assert run(out, results, 1.0) == 2
    captured = capsys.readouterr()
    assert precious.read_text() == "keep me" and "is a symbolic link (not followed): not replaced" in captured.err
    assert "regression gate" not in captured.out, "refused before the table"
    os.remove(os.path.join(out, "regress.json"))
    os.mkdir(os.path.join(out, "regress.json"))
    assert regress.main([out, "--results", results]) == 2
    assert "is a directory: not replaced" in capsys.readouterr().err
    os.rmdir(os.path.join(out, "regress.json"))
    assert regress.main([out, "--results", results]) == 0
    assert sorted(n for n in os.listdir(out) if n.startswith(".")) == [], "no temporary file left"


@pytest.mark.parametrize(
    "make, says",
    [
        (lambda tmp: tmp / "none", "does not exist"),
        (lambda tmp: (tmp / "file").write_text("x") and tmp / "file", "is not a folder"),
    ],
)
def test_an_out_that_is_no_folder_is_a_usage_error(tmp_path, capsys, make, says):
    with pytest.raises(SystemExit) as exit_:
        regress.main([str(make(tmp_path))])
    assert exit_.value.code == 2 and says in capsys.readouterr().err


@pytest.mark.parametrize("limit", ["nan", "-1", "0.5", "inf", "x"])
def test_a_limit_that_could_not_fail_or_always_fails_is_refused(gate_folders, capsys, limit):
    out, results = gate_folders
    with pytest.raises(SystemExit) as exit_:
        regress.main([out, "--results", results, "--limit", limit])
    assert (
        exit_.value.code == 2
        and f"must be a ratio of 1 or more (1.07: 7% slower allowed), got {limit}" in capsys.readouterr().err
    )
    assert regress.main([out, "--results", results, "--limit", "1.0"]) == 2  # no figures yet: missing, not refused


def test_inputs_are_read_only_as_bounded_regular_files(gate_folders, capsys):
    """A FIFO (would hang), a link to /dev/zero (never ends), a deeply nested file (RecursionError): each skipped
    with a line saying why, the figure missing (exit 2), the figures file still valid JSON."""
    out, results = gate_folders
    run(out, results, 1.0)
    for name in ("balls.json", "heat.json", "sdh.json"):
        os.remove(os.path.join(out, name))
    os.mkfifo(os.path.join(out, "balls.json"))
    os.symlink("/dev/zero", os.path.join(out, "heat.json"))
    with open(os.path.join(out, "sdh.json"), "w") as f:
        f.write("[" * 100_000 + "]" * 100_000)
    os.mkfifo(os.path.join(results, "h200-fifo.json"))
    assert regress.main([out, "--results", results]) == 2
    captured = capsys.readouterr()
    assert "balls.json' is not a regular file (a FIFO): not read" in captured.err
    assert "heat.json' is not a regular file (a character device): not read" in captured.err
    assert "sdh.json' nests lists or tables more than 64 deep: not read" in captured.err
    assert "h200-fifo.json' is not a regular file (a FIFO)" in captured.err
    assert "not measured: balls 10M grid, ms/step, sdh 512000 tensor, ms, heat" in captured.out
    json.load(open(os.path.join(out, "regress.json")))


@pytest.mark.parametrize("bad", [float("nan"), 0.0, -0.47, "0.47", [0.47]])
def test_a_figure_that_is_no_time_is_missing_not_compared(gate_folders, capsys, bad):
    out, results = gate_folders
    run(out, results, 1.0)
    reports = product_reports(1.0)
    reports["balls"]["results"][0]["step_ms"] = bad
    write(out, "balls.json", reports["balls"])
    assert regress.main([out, "--results", results]) == 2
    assert "not measured: balls 10M grid, ms/step" in capsys.readouterr().out
    text = open(os.path.join(out, "regress.json")).read()
    assert "NaN" not in text and json.loads(text)["results"][0]["value"] is None


def test_a_zero_or_nan_baseline_is_no_baseline_and_slower_still_fails(gate_folders, capsys):
    """2.0 ms against 1.0 ms is SLOWER at the tightest limit, whatever newer baseline files hold."""
    out, results = gate_folders
    for scale, date in ((0.0, "2027-01-01"), (float("nan"), "2027-01-02")):
        write(results, f"h200-balls-{date}.json", product_reports(scale)["balls"] | {"date": date})
    assert run(out, results, 2.0) == 1
    text = capsys.readouterr().out
    assert "SLOWER than the baseline: balls 10M grid" in text and "h200-balls-2027" not in text
    assert regress.main([out, "--results", results, "--limit", "1"]) == 1


def test_odd_peer_and_fingerprint_fields_are_no_traceback(gate_folders, capsys):
    out, results = gate_folders
    write(out, "peer-balls.json", {"device": DEVICE})  # no results
    write(out, "peer-sdh.json", [1, 2])
    for workload, rep in product_reports(1.0).items():
        write(out, f"{workload}.json", rep | {"fingerprint": ["host", "cpu"], "device": DEVICE})
    assert regress.main([out, "--results", results]) == 0
    captured = capsys.readouterr()
    assert "peer-balls.json' is not a benchmark report" in captured.err and "peer-sdh.json'" in captured.err
    report = json.load(open(os.path.join(out, "regress.json")))
    assert report["host_cpu"] is None and report["results"][0]["peer"] is None
