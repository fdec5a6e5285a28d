"""bench/regress.py: the headline figures beside the newest committed ones of the same GPU model."""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import bench_scripts
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
regress = bench_scripts.load("regress", register=True)

DEVICE = "NVIDIA H200"
M = 1_000_000


def product_reports(scale: float) -> dict[str, dict]:
    """Every workload's report as its bench writes it, each figure times ``scale``."""

    def rep(workload, results):
        return {
            "device": DEVICE,
            "commit": "abc",
            "date": "2026-11-25T10:00:00+00:00",
            "workload": workload,
            "results": results,
        }

    return {
        "balls": rep(
            "balls",
            [
                {
                    "scene": "balls",
                    "preset": "block",
                    "n": 10 * M,
                    "backend": "gpu",
                    "variant": "grid",
                    "block": 128,
                    "step_ms": 0.47 * scale,
                },
                {
                    "scene": "balls",
                    "preset": "block",
                    "n": M,
                    "backend": "gpu",
                    "variant": "grid",
                    "block": 128,
                    "step_ms": 0.065,
                },
            ],
        ),
        "particles": rep(
            "particles",
            [
                {
                    "scene": "particles",
                    "n": 10 * M,
                    "backend": "gpu",
                    "variant": "plain",
                    "block": 128,
                    "options": {"precision": "fp64"},
                    "step_ms": 0.52 * scale,
                },
                {
                    "scene": "particles",
                    "n": 10 * M,
                    "backend": "gpu",
                    "variant": "plain",
                    "block": 128,
                    "options": {"precision": "fp32"},
                    "step_ms": 0.3,
                },
            ],
        ),
        "sdh": rep("sdh", [{"n": 512000, "backend": "gpu", "kernel": "tensor", "block": 256, "kernel_ms": 73 * scale}]),
        "heat": rep(
            "heat",
            [
                {
                    "n": 10000,
                    "backend": "gpu",
                    "kernel": "temporal",
                    "block": "32x4",
                    "k": 8,
                    "fma": False,
                    "ms_per_step": 0.06 * scale,
                }
            ],
        ),
        "durbin": rep(
            "durbin",
            [
                {
                    "kind": "single",
                    "backend": "gpu",
                    "n": 200000,
                    "method": "persistent-grid",
                    "block": 256,
                    "us_per_step": 2.5 * scale,
                },
                {
                    "kind": "batch",
                    "backend": "gpu",
                    "systems": 100000,
                    "order": 32,
                    "method": "batched-register",
                    "block": 128,
                    "s": 0.0002 * scale,
                },
                {
                    "kind": "batch",
                    "backend": "gpu",
                    "systems": 100000,
                    "order": 32,
                    "method": "batched-register",
                    "block": 64,
                    "skipped": "no",
                },
            ],
        ),
        "frame": rep(
            "frame",
            [
                {
                    "scene": "balls",
                    "n": M,
                    "backend": "gpu",
                    "width": 1920,
                    "height": 1080,
                    "panel": "all",
                    "frame_ms": 4.6 * scale,
                    "pick_frame_ms": 5.0 * scale,
                }
            ],
        ),
        "frame-heat": rep(
            "frame",
            [
                {
                    "scene": "heat",
                    "preset": "large",
                    "n": 100 * M,
                    "backend": "gpu",
                    "width": 1920,
                    "height": 1080,
                    "panel": "all",
                    "frame_ms": 13.2 * scale,
                }
            ],
        ),
    }


def write(folder, name, rep):
    with open(os.path.join(folder, name), "w") as f:
        json.dump(rep, f)


@pytest.fixture
def folders(tmp_path):
    out, results = tmp_path / "out", tmp_path / "results"
    out.mkdir()
    results.mkdir()
    for workload, rep in product_reports(1.0).items():
        write(results, f"h200-{workload}.json", rep)
    # an older file with faster figures, and another GPU model's: neither is the baseline
    old = product_reports(0.5)["balls"] | {"date": "2026-11-01T00:00:00+00:00"}
    write(results, "h200-balls-old.json", old)
    write(results, "h100-balls.json", product_reports(0.1)["balls"] | {"device": "NVIDIA H100 80GB HBM3"})
    write(out, "peer-balls.json", {"device": DEVICE, "results": [{"n": 10 * M, "ms_per_step": 1.9}]})
    return str(out), str(results)


def run(out, results, scale):
    for workload, rep in product_reports(scale).items():
        write(out, f"{workload}.json", rep)
    return regress.main([out, "--results", results])


def test_same_figures_pass_and_are_written(folders, capsys):
    out, results = folders
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


def test_a_slower_figure_fails_the_gate(folders, capsys):
    out, results = folders
    assert run(out, results, 1.10) == 1
    assert "SLOWER than the baseline" in capsys.readouterr().out


def test_the_frame_counts_by_its_best_process(folders, capsys):
    out, results = folders
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


def test_the_heat_frame_is_read_from_its_own_reports_best_process(folders, capsys):
    out, results = folders
    run(out, results, 1.0)
    write(out, "frame-heat.json", product_reports(1.30)["frame-heat"])
    write(out, "frame-heat-run2.json", product_reports(0.97)["frame-heat"])
    assert regress.main([out, "--results", results]) == 0
    figures = {r["figure"]: r for r in json.load(open(os.path.join(out, "regress.json")))["results"]}
    heat = figures["frame heat 10000^2 1920x1080 panel open, ms"]
    assert heat["value"] == pytest.approx(13.2 * 0.97) and heat["baseline"] == pytest.approx(13.2)
    assert figures["frame 1M balls 1920x1080 panel open, ms"]["value"] == pytest.approx(4.6), "balls' own file"
    capsys.readouterr()


def test_a_figure_without_a_baseline_is_new_not_a_failure(folders, capsys):
    """The frames with the panel open have no baseline where only frames without a panel were committed
    (records without ``panel``, or a regress file's figures of another name): they are reported as new."""
    out, results = folders
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


def test_a_committed_regress_file_is_the_newest_baseline(folders, capsys):
    out, results = folders
    assert run(out, results, 1.0) == 0
    newer = json.load(open(os.path.join(out, "regress.json"))) | {"date": "2026-11-26T00:00:00+00:00"}
    for r in newer["results"]:
        r["value"] *= 0.5  # the last committed gate run was twice as fast
    write(results, "h200-regress.json", newer)
    assert run(out, results, 1.0) == 1
    assert "h200-regress.json" in capsys.readouterr().out


def test_the_host_cpu_is_recorded_and_named_where_a_baseline_ran_on_another(folders, capsys):
    out, results = folders
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


def test_a_missing_figure_is_an_error(folders, capsys):
    out, results = folders
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


def test_a_baseline_without_an_error_counts_as_exact(folders, capsys):
    out, results = folders  # the committed baselines have no _err fields (before the harness)
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


# --- hostile inputs: what the gate writes, what it reads, what it compares -----------------------------------
def test_the_figures_file_is_written_atomically_never_through_a_link(folders, tmp_path, capsys):
    out, results = folders
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
def test_a_limit_that_could_not_fail_or_always_fails_is_refused(folders, capsys, limit):
    out, results = folders
    with pytest.raises(SystemExit) as exit_:
        regress.main([out, "--results", results, "--limit", limit])
    assert (
        exit_.value.code == 2
        and f"must be a ratio of 1 or more (1.07: 7% slower allowed), got {limit}" in capsys.readouterr().err
    )
    assert regress.main([out, "--results", results, "--limit", "1.0"]) == 2  # no figures yet: missing, not refused


def test_inputs_are_read_only_as_bounded_regular_files(folders, capsys):
    """A FIFO (would hang), a link to /dev/zero (never ends), a deeply nested file (RecursionError): each skipped
    with a line saying why, the figure missing (exit 2), the figures file still valid JSON."""
    out, results = folders
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
def test_a_figure_that_is_no_time_is_missing_not_compared(folders, capsys, bad):
    out, results = folders
    run(out, results, 1.0)
    reports = product_reports(1.0)
    reports["balls"]["results"][0]["step_ms"] = bad
    write(out, "balls.json", reports["balls"])
    assert regress.main([out, "--results", results]) == 2
    assert "not measured: balls 10M grid, ms/step" in capsys.readouterr().out
    text = open(os.path.join(out, "regress.json")).read()
    assert "NaN" not in text and json.loads(text)["results"][0]["value"] is None


def test_a_zero_or_nan_baseline_is_no_baseline_and_slower_still_fails(folders, capsys):
    """2.0 ms against 1.0 ms is SLOWER at the tightest limit, whatever newer baseline files hold."""
    out, results = folders
    for scale, date in ((0.0, "2027-01-01"), (float("nan"), "2027-01-02")):
        write(results, f"h200-balls-{date}.json", product_reports(scale)["balls"] | {"date": date})
    assert run(out, results, 2.0) == 1
    text = capsys.readouterr().out
    assert "SLOWER than the baseline: balls 10M grid" in text and "h200-balls-2027" not in text
    assert regress.main([out, "--results", results, "--limit", "1"]) == 1


def test_odd_peer_and_fingerprint_fields_are_no_traceback(folders, capsys):
    out, results = folders
    write(out, "peer-balls.json", {"device": DEVICE})  # no results
    write(out, "peer-sdh.json", [1, 2])
    for workload, rep in product_reports(1.0).items():
        write(out, f"{workload}.json", rep | {"fingerprint": ["host", "cpu"], "device": DEVICE})
    assert regress.main([out, "--results", results]) == 0
    captured = capsys.readouterr()
    assert "peer-balls.json' is not a benchmark report" in captured.err and "peer-sdh.json'" in captured.err
    report = json.load(open(os.path.join(out, "regress.json")))
    assert report["host_cpu"] is None and report["results"][0]["peer"] is None


# --- the steps and headlines come from the scenes (SceneSpec.gate), the same as when they were listed here -------
FIGURES = [
    "balls 10M grid, ms/step",
    "particles 10M plain fp64, ms/step",
    "sdh 512000 tensor, ms",
    "heat 10000^2 temporal k8 32x4, ms/step",
    "durbin 200000 persistent-grid, us/step",
    "durbin 100000x32 batched-register, ms",
    "frame 1M balls 1920x1080 panel open, ms",
    "frame 1M balls 1920x1080 panel open picking, ms",
    "frame heat 10000^2 1920x1080 panel open, ms",
]
FRAME_BALLS = "$py -m viewer.bench.frame -n 1000000 --size 1920x1080 --backend gpu --headless --frames 60 --pick"
FRAME_HEAT = (
    "$py -m viewer.bench.frame --scene heat --preset large -n 100000000 --size 1920x1080 --backend gpu "
    "--headless --frames 60"
)
STEPS = [
    (
        "balls 10M grid",
        "$py main.py bench balls --backend gpu --preset block -n 10000000 --variant grid --block 128 "
        '--steps 120 --json "$out/balls.json"',
    ),
    (
        "peer balls 10M",
        '$py bench/peer.py "$peers/peer_balls.py" --sizes 10000000 --steps 60 --json "$out/peer-balls.json"',
    ),
    (
        "particles 10M plain",
        "$py main.py bench particles --backend gpu --sizes 10000000 --variant plain --block 128 "
        '--steps 1000 --json "$out/particles.json"',
    ),
    (
        "peer particles 10M",
        '$py bench/peer.py "$peers/peer_particles.py" --sizes 10000000 --methods counting '
        '--steps 1000 --json "$out/peer-particles.json"',
    ),
    ("sdh 512000 tensor", '$py main.py bench sdh -n 512000 --kernel tensor --block 256 --json "$out/sdh.json"'),
    (
        "peer sdh 512000",
        '$py bench/peer.py "$peers/peer_sdh.py" --sizes 512000 --naive-max 0 --json "$out/peer-sdh.json"',
    ),
    (
        "heat 10000^2 temporal",
        '$py main.py bench heat --sizes 10000 --kernel temporal --block 32x4 --k 8 --steps 200 --json "$out/heat.json"',
    ),
    ("peer heat 10000^2", '$py bench/peer.py "$peers/peer_heat.py" --n 10000 --json "$out/peer-heat.json"'),
    (
        "durbin 200000 and 100000x32",
        '$py main.py bench durbin --sizes 200000 --kernel persistent-grid --batch 100000x32 --json "$out/durbin.json"',
    ),
    (
        "peer durbin",
        '$py bench/peer.py "$peers/peer_durbin.py" --sizes 200000 --scipy-max 0 --json "$out/peer-durbin.json"',
    ),
    ("frame 1M balls 1920x1080, picking (run 1)", FRAME_BALLS + ' --json "$out/frame.json"'),
    ("frame heat 10000^2 1920x1080 (run 1)", FRAME_HEAT + ' --json "$out/frame-heat.json"'),
    ("frame 1M balls 1920x1080, picking (run 2)", FRAME_BALLS + ' --json "$out/frame-run2.json"'),
    ("frame heat 10000^2 1920x1080 (run 2)", FRAME_HEAT + ' --json "$out/frame-heat-run2.json"'),
]


def test_the_scenes_declare_the_same_figures_and_steps():
    assert [h.name for h in regress.HEADLINES] == FIGURES
    assert regress.commands() == STEPS
    files = {h.name: (h.workload, h.file, h.peer_file) for h in regress.HEADLINES}
    assert files["balls 10M grid, ms/step"] == ("balls", "balls", "peer-balls.json")
    assert files["durbin 100000x32 batched-register, ms"] == ("durbin", "durbin", "peer-durbin.json")
    assert files["frame 1M balls 1920x1080 panel open picking, ms"] == ("frame", "frame", None)
    assert files["frame heat 10000^2 1920x1080 panel open, ms"] == ("frame", "frame-heat", None)


def test_commands_prints_a_label_and_a_tab_before_each_step(capsys):
    assert regress.main(["--commands"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [tuple(line.split("\t")) for line in lines] == STEPS


def test_a_record_without_options_ran_with_the_default_precision():
    """The particles figure is fp64's: a record that names no options (from before the option) counts as
    fp64, an fp32 record never does; the durbin batch figure is the record's seconds in ms."""
    particles = next(h for h in regress.HEADLINES if h.name.startswith("particles"))
    record = {"scene": "particles", "n": 10 * M, "backend": "gpu", "variant": "plain", "block": 128, "step_ms": 0.5}
    assert particles.pick(record) and particles.pick(record | {"options": {"precision": "fp64"}})
    assert not particles.pick(record | {"options": {"precision": "fp32"}})
    assert not particles.pick(record | {"block": 256})
    batch = next(h for h in regress.HEADLINES if h.name.startswith("durbin 100000x32"))
    assert batch.ms({"s": 0.25}) == pytest.approx(250.0) and batch.err({"s_err": 0.002}) == pytest.approx(2.0)
    assert batch.peer_ms({"s": 0.5}) == pytest.approx(500.0)
    assert batch.peer_pick({"batch": 100000, "order": 32, "method": "cupy-vectorised"})


STUB = """#!{python}
import json, os, sys
if sys.argv[1:2] == ["bench/regress.py"]:
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
with open({log!r}, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
"""


def test_regress_sh_runs_every_step_with_its_folders(tmp_path):
    """bench/regress.sh runs bench/regress.py --commands' steps in order, $out and $peers filled in (quoted: a
    space in a folder's name stays one argument), then the table: nothing measured here, exit 2."""
    import subprocess

    log, stub = tmp_path / "argv.jsonl", tmp_path / "python"
    stub.write_text(STUB.format(python=sys.executable, log=str(log)))
    stub.chmod(0o755)
    out, peers = tmp_path / "out dir", tmp_path / "peer scripts"
    peers.mkdir()
    done = subprocess.run(
        ["bash", os.path.join(ROOT, "bench", "regress.sh"), str(out), str(peers)],
        env=os.environ | {"PYTHON": str(stub)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    ran = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(ran) == len(STEPS)
    assert ran[0][:3] == ["main.py", "bench", "balls"] and ran[0][-2:] == ["--json", f"{out}/balls.json"]
    assert ran[1][:2] == ["bench/peer.py", f"{peers}/peer_balls.py"]
    assert ran[-1][:2] == ["-m", "viewer.bench.frame"] and ran[-1][-1] == f"{out}/frame-heat-run2.json"
    text = (out / "regress-log.txt").read_text()
    assert [line[3 : line.index(" (at ")] for line in text.splitlines() if line.startswith("== ")] == [
        label for label, _ in STEPS
    ] + ["table"]
    assert "not measured: balls 10M grid, ms/step" in text
