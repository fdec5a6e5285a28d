"""bench/regress.py: the headline figures beside the newest committed ones of the same GPU model."""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import pytest
from gate_reports import (
    DEVICE,
    ROOT,
    product_reports,
    regress,
    run,
    write,
)


def test_same_figures_pass_and_are_written(gate_folders, capsys):
    out, results = gate_folders
    assert run(out, results, 1.03) == 0
    text = capsys.readouterr().out
    assert "SLOWER" not in text and text.count(" same ") == len(regress.HEADLINES)
    report = json.load(open(os.path.join(out, "regress.json")))
    figures = {r["figure"]: r for r in report["results"]}
    balls = figures["balls 10M grid, ms/step"]
    assert balls["value"] == pytest.approx(0.47 * 1.03) and balls["baseline"] == pytest.approx(0.47)
    assert balls["peer"] == pytest.approx(1.9)
    assert figures["durbin 100000x32 batched-register, ms"]["value"] == pytest.approx(0.2 * 1.03)
    assert report["device"] == DEVICE and report["workload"] == "regress"


def test_a_slower_figure_fails_the_gate(gate_folders, capsys):
    out, results = gate_folders
    assert run(out, results, 1.10) == 1
    assert "SLOWER than the baseline" in capsys.readouterr().out


def test_the_frame_counts_by_its_best_process(gate_folders, capsys):
    out, results = gate_folders
    slow = product_reports(1.30)["frame"]
    for name, rep in (("frame-run2.json", product_reports(0.95)["frame"]), ("frame-run3.json", slow)):
        write(out, name, rep)
    write(out, "frame.json", slow)
    for workload, rep in product_reports(1.0).items():
        if workload != "frame":
            write(out, f"{workload}.json", rep)
    assert regress.main([out, "--results", results]) == 0, "a run slowed by the host does not fail the gate"
    figures = {r["figure"]: r for r in json.load(open(os.path.join(out, "regress.json")))["results"]}
    assert figures["frame 1M balls 1920x1080 panel open, ms"]["value"] == pytest.approx(4.6 * 0.95)
    assert figures["frame 1M balls 1920x1080 panel open picking, ms"]["value"] == pytest.approx(5.0 * 0.95)
    capsys.readouterr()


def test_the_heat_frame_is_read_from_its_own_reports_best_process(gate_folders, capsys):
    out, results = gate_folders
    run(out, results, 1.0)
    write(out, "frame-heat.json", product_reports(1.30)["frame-heat"])
    write(out, "frame-heat-run2.json", product_reports(0.97)["frame-heat"])
    assert regress.main([out, "--results", results]) == 0
    figures = {r["figure"]: r for r in json.load(open(os.path.join(out, "regress.json")))["results"]}
    heat = figures["frame heat 10000^2 1920x1080 panel open, ms"]
    assert heat["value"] == pytest.approx(13.2 * 0.97) and heat["baseline"] == pytest.approx(13.2)
    assert figures["frame 1M balls 1920x1080 panel open, ms"]["value"] == pytest.approx(4.6), "balls' own file"
    capsys.readouterr()


def test_a_figure_without_a_baseline_is_new_not_a_failure(gate_folders, capsys):
    """The frames with the panel open have no baseline where only frames without a panel were committed
    (records without ``panel``, or a regress file's figures of another name): they are reported as new."""
    out, results = gate_folders
    os.remove(os.path.join(results, "h200-frame-heat.json"))
    without_panel = product_reports(0.5)["frame"]
    for record in without_panel["results"]:
        del record["panel"]
    write(results, "h200-frame.json", without_panel)
    write(
        results,
        "h200-regress.json",
        {
            "device": DEVICE,
            "date": "2026-11-26T00:00:00+00:00",
            "workload": "regress",
            "results": [{"figure": "frame 1M balls 1920x1080, ms", "value": 2.0}],
        },
    )
    assert run(out, results, 1.0) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("frame ")]
    assert len(rows) == 3 and all(" new " in row and "none on this GPU model" in row for row in rows)
    figures = {r["figure"]: r for r in json.load(open(os.path.join(out, "regress.json")))["results"]}
    assert figures["frame heat 10000^2 1920x1080 panel open, ms"]["baseline"] is None


def test_a_committed_regress_file_is_the_newest_baseline(gate_folders, capsys):
    out, results = gate_folders
    assert run(out, results, 1.0) == 0
    newer = json.load(open(os.path.join(out, "regress.json"))) | {"date": "2026-11-26T00:00:00+00:00"}
    for r in newer["results"]:
        r["value"] *= 0.5  # the last committed gate run was twice as fast
    write(results, "h200-regress.json", newer)
    assert run(out, results, 1.0) == 1
    assert "h200-regress.json" in capsys.readouterr().out


def test_a_workload_file_newer_than_the_regress_file_moves_only_its_figure(gate_folders, capsys):
    out, results = gate_folders
    assert run(out, results, 1.0) == 0
    gate = json.load(open(os.path.join(out, "regress.json"))) | {"date": "2026-11-26T00:00:00+00:00"}
    write(results, "h200-regress.json", gate)
    faster = product_reports(0.5)["particles"] | {"date": "2026-11-27T00:00:00+00:00", "commit": "def"}
    write(results, "h200-particles-def.json", faster)  # a particles figure committed after the gate run
    older = product_reports(0.5)["balls"] | {"date": "2026-11-25T12:00:00+00:00"}
    write(results, "h200-balls-older.json", older)  # a balls figure committed before it: not the baseline
    assert run(out, results, 1.0) == 1
    rows = {line.split(",")[0]: line for line in capsys.readouterr().out.splitlines() if " ms" in line}
    particles = next(row for name, row in rows.items() if name.startswith("particles"))
    balls = next(row for name, row in rows.items() if name.startswith("balls"))
    assert "SLOWER" in particles and "h200-particles-def.json @ def" in particles
    assert "same" in balls and "h200-regress.json" in balls


def test_the_host_cpu_is_recorded_and_named_where_a_baseline_ran_on_another(gate_folders, capsys):
    out, results = gate_folders
    for workload, rep in product_reports(1.0).items():
        write(out, f"{workload}.json", rep | {"fingerprint": {"kind": "gpu", "name": DEVICE, "host_cpu": "Host A"}})
    assert regress.main([out, "--results", results]) == 0
    assert "host CPU: Host A; some baselines' host CPU: not recorded" in capsys.readouterr().out
    report = json.load(open(os.path.join(out, "regress.json")))
    assert report["host_cpu"] == "Host A"
    write(results, "h200-regress.json", report | {"date": "2026-11-26T00:00:00+00:00"})
    assert regress.main([out, "--results", results]) == 0
    assert "host CPU" not in capsys.readouterr().out, "every baseline ran on this host"
    write(results, "h200-regress.json", report | {"date": "2026-11-26T00:00:00+00:00", "host_cpu": "Host B"})
    assert regress.main([out, "--results", results]) == 0
    assert "host CPU: Host A; some baselines' host CPU: Host B" in capsys.readouterr().out


def test_a_missing_figure_is_an_error(gate_folders, capsys):
    out, results = gate_folders
    run(out, results, 1.0)
    os.remove(os.path.join(out, "sdh.json"))
    assert regress.main([out, "--results", results]) == 2
    assert "not measured: sdh 512000 tensor, ms" in capsys.readouterr().out


PEER_SDH = """
import argparse, json, types
cp = types.SimpleNamespace(get_default_memory_pool=lambda: types.SimpleNamespace(used_bytes=lambda: 1000))
def timed(fn, reps):
    raise AssertionError("the harness times this peer")
def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--sizes"); ap.add_argument("--json"); a = ap.parse_args()
    rows = []
    for n in (int(s) for s in a.sizes.split(",")):
        ms = timed(lambda: sum(range(20000)), 3)
        rows.append({"n": n, "kernel": "tiled", "kernel_ms": ms})
    json.dump({"device": "X", "workload": "sdh-peer", "results": rows}, open(a.json, "w"))
"""


def test_a_peer_runs_through_the_harness_and_its_rows_gain_the_error(tmp_path, monkeypatch):
    from sim.gpu import measure

    spec_ = importlib.util.spec_from_file_location("peer_harness", os.path.join(ROOT, "bench", "peer.py"))
    peer = importlib.util.module_from_spec(spec_)
    monkeypatch.setitem(sys.modules, "peer_harness", peer)  # dataclasses look their module up
    spec_.loader.exec_module(peer)
    flushes = []
    monkeypatch.setattr(measure, "l2_flush", lambda working_set: lambda: flushes.append(working_set))
    monkeypatch.setitem(peer.CLOCKS, "events", measure.HostClock)  # no GPU here: the host clock stands in
    script = tmp_path / "peer_sdh.py"
    script.write_text(PEER_SDH)
    out = tmp_path / "peer-sdh.json"
    assert peer.main([str(script), "--sizes", "10,20", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["timed_by"] == "sim.gpu.measure" and [r["n"] for r in report["results"]] == [10, 20]
    for row in report["results"]:
        assert row["repeats"] >= 6 and row["kernel_ms"] > 0 and 0 <= row["kernel_ms_err"] < row["kernel_ms"]
    assert len(flushes) == sum(r["repeats"] for r in report["results"]) and set(flushes) == {1000}
    assert peer.main([str(tmp_path / "peer_other.py")]) == 2


def with_errors(reports: dict[str, dict], relative: float) -> dict[str, dict]:
    """Every figure of the reports given an error of ``relative`` of it, as sim.gpu.measure writes them."""
    for rep in reports.values():
        for r in rep["results"]:
            for name in ("step_ms", "kernel_ms", "ms_per_step", "us_per_step", "s", "frame_ms", "pick_frame_ms"):
                if name in r:
                    r[f"{name}_err"] = r[name] * relative
    return reports


def test_the_gate_allows_seven_percent_plus_the_combined_error(tmp_path, capsys):
    out, results = tmp_path / "out", tmp_path / "results"
    out.mkdir()
    results.mkdir()
    for workload, rep in with_errors(product_reports(1.0), 0.01).items():
        write(results, f"h200-{workload}.json", rep)
    # 10% slower, each side +-1%: 10% - 7% = 3% of old; the errors add 1% + 1.1% = 2.1%: beyond, fails
    for workload, rep in with_errors(product_reports(1.10), 0.01).items():
        write(out, f"{workload}.json", rep)
    assert regress.main([str(out), "--results", str(results)]) == 1
    capsys.readouterr()
    # the same 10% with +-2% on the new figures: 3% of old <= 1% + 2.2%: within the error, passes
    for workload, rep in with_errors(product_reports(1.10), 0.02).items():
        write(out, f"{workload}.json", rep)
    assert regress.main([str(out), "--results", str(results)]) == 0
    text = capsys.readouterr().out
    assert "SLOWER" not in text and "0.517 ± 0.01" in text  # balls: 0.47 x 1.10 ± 2%
    report = json.load(open(out / "regress.json"))
    balls = {r["figure"]: r for r in report["results"]}["balls 10M grid, ms/step"]
    assert balls["error"] == pytest.approx(0.47 * 1.10 * 0.02) and balls["baseline_error"] == pytest.approx(0.0047)


def test_a_baseline_without_an_error_counts_as_exact(gate_folders, capsys):
    out, results = gate_folders  # the committed baselines have no _err fields (before the harness)
    for workload, rep in with_errors(product_reports(1.09), 0.01).items():
        write(out, f"{workload}.json", rep)
    # 9% slower: 2% of old over the 7%, the new error 1.09% alone: fails
    assert regress.main([out, "--results", results]) == 1
    for workload, rep in with_errors(product_reports(1.09), 0.025).items():
        write(out, f"{workload}.json", rep)
    assert regress.main([out, "--results", results]) == 0  # 2% of old <= the new error, 2.7%


def test_the_verdict_rule():
    assert regress.verdict(1.08, 0.0, 1.0, 0.0, 1.07) == "SLOWER"
    assert regress.verdict(1.08, 0.005, 1.0, 0.005, 1.07) == "same"  # 0.08 <= 0.07 + 0.01
    assert regress.verdict(0.9, 0.0, 1.0, 0.0, 1.07) == "faster"
    assert regress.verdict(0.92, 0.01, 1.0, 0.0, 1.07) == "same"


PEERS = next(
    (p for p in (os.path.join(ROOT, ".peers"), os.path.join(ROOT, "..", "shared", "peers")) if os.path.isdir(p)), None
)


@pytest.mark.gpu
@pytest.mark.skipif(PEERS is None, reason="the peers' scripts (.peers or ../shared/peers) are not here")
@pytest.mark.parametrize(
    "script, args, figure",
    [
        ("peer_heat.py", ["--n", "1000", "--steps", "20"], "ms_per_step"),
        ("peer_sdh.py", ["--sizes", "20000", "--naive-max", "0"], "kernel_ms"),
        ("peer_balls.py", ["--sizes", "20000", "--steps", "20"], "ms_per_step"),
        ("peer_particles.py", ["--sizes", "20000", "--steps", "20", "--methods", "counting"], "ms_per_step"),
        ("peer_durbin.py", ["--sizes", "2000", "--batch", "1000x16"], "s"),
    ],
)
def test_the_real_peers_run_through_the_harness(tmp_path, script, args, figure):
    import subprocess

    out = tmp_path / "peer.json"
    done = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "bench", "peer.py"),
            os.path.join(PEERS, script),
            *args,
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    rows = [r for r in report["results"] if figure in r]
    assert rows and all(r["repeats"] >= 1 and f"{figure}_err" in r for r in rows)
