"""sim.cmdline.baseline: ``bench ... --baseline OLD.json`` (the A/B text, bad files) and the matching of a record to
the viewer's live configuration, on fake records."""

from __future__ import annotations

import json
import os

import pytest

import main
from sim.cmdline import baseline, bench, bench_report
from sim.cmdline.cli import UsageError


def report(records, device="NVIDIA H100", commit="abc"):
    return {
        "device": device,
        "commit": commit,
        "date": "2026-11-25T10:00:00+00:00",
        "workload": "x",
        "results": records,
    }


def frames_record(step_ms, err=None, variant="grid", n=1000, block=128, stage_err=None):
    record = {
        "scene": "balls",
        "preset": "block",
        "n": n,
        "backend": "gpu",
        "variant": variant,
        "block": block,
        "options": {},
        "stage_ms": {"sort": step_ms / 4, "forces": 3 * step_ms / 4},
        "step_ms": step_ms,
    }
    if err is not None:
        record.update(
            step_ms_err=err, repeats=50, stage_ms_err={"sort": stage_err or err / 4, "forces": stage_err or 3 * err / 4}
        )
    return record


def lines_of(text: str, config: str) -> list[str]:
    """The figure lines under the configuration line that starts with ``config``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(config))
    out = []
    for line in lines[start + 2 :]:
        if not line.startswith("  "):
            break
        out.append(line)
    return out


def test_faster_slower_and_the_same_within_the_error():
    old = report(
        [
            frames_record(1.0, 0.01),
            frames_record(2.0, 0.01, variant="shared"),
            frames_record(3.0, 0.01, variant="zsweep"),
        ]
    )
    new = report(
        [
            frames_record(0.9, 0.01),
            frames_record(2.015, 0.01, variant="shared"),
            frames_record(3.5, 0.01, variant="zsweep"),
        ]
    )
    text = baseline.comparison(new, old)
    grid = lines_of(text, "scene balls  preset block  n 1000  backend gpu  variant grid")
    assert "step_ms" in grid[-1] and grid[-1].endswith("faster") and "0.900" in grid[-1]
    shared = lines_of(text, "scene balls  preset block  n 1000  backend gpu  variant shared")
    assert shared[-1].endswith("same within error")  # 0.015 <= 0.01 + 0.01
    zsweep = lines_of(text, "scene balls  preset block  n 1000  backend gpu  variant zsweep")
    assert zsweep[-1].endswith("slower") and "1.167" in zsweep[-1]
    assert "sort ms/step" in zsweep[0]  # every stage, then the step


def test_missing_configurations_are_said_plainly_and_old_records_count_as_exact():
    old = report([frames_record(1.0), frames_record(1.0, n=5000)], device="NVIDIA H200")  # before the harness
    new = report([frames_record(1.005, 0.01), frames_record(1.0, 0.01, block=256)])
    text = baseline.comparison(new, old)
    assert "note: the baseline ran on NVIDIA H200, this run on NVIDIA H100" in text
    assert "block 256: not in the baseline" in text
    assert "n 5000  backend gpu  variant grid  block 128: in the baseline only (not run now)" in text
    step = lines_of(text, "scene balls  preset block  n 1000")[-1]
    assert "1 ± ?" in step and step.endswith("same within error")  # 0.005 <= 0 + 0.01


@pytest.mark.parametrize(
    "old, new, config, figure",
    [
        (
            {"n": 512000, "w": 500.0, "backend": "gpu", "kernel": "tensor", "block": 256, "kernel_ms": 70.0},
            {"kernel_ms": 80.0, "kernel_ms_err": 0.5},
            "n 512000  w 500.0  backend gpu  kernel tensor",
            "kernel_ms",
        ),
        (
            {
                "n": 10000,
                "backend": "gpu",
                "kernel": "temporal",
                "block": "32x8",
                "k": 8,
                "fma": False,
                "ms_per_step": 0.06,
                "run_ms": 12.0,
            },
            {"ms_per_step": 0.07, "ms_per_step_err": 0.001},
            "n 10000  backend gpu  kernel temporal  block 32x8  k 8",
            "ms_per_step",
        ),
        (
            {
                "kind": "batch",
                "systems": 100000,
                "order": 32,
                "backend": "gpu",
                "method": "batched-register",
                "block": 128,
                "precision": "fp64",
                "s": 0.0002,
            },
            {"s": 0.0003, "s_err": 1e-6},
            "kind batch  systems 100000  order 32",
            "s",
        ),
        (
            {
                "scene": "balls",
                "preset": "block",
                "n": 1000000,
                "backend": "gpu",
                "variant": "grid",
                "width": 1920,
                "height": 1080,
                "frames": 60,
                "frame_ms": 4.6,
                "pick_frame_ms": 7.8,
            },
            {"frame_ms": 5.0, "frame_ms_err": 0.01},
            "scene balls  preset block  n 1000000",
            "frame_ms",
        ),
    ],
)
def test_every_bench_shape_compares(old, new, config, figure):
    text = baseline.comparison(report([{**old, **new}]), report([old]))
    line = next(line for line in lines_of(text, config) if line.strip().startswith(figure))
    assert line.endswith("slower")


def test_the_table_then_the_comparison_and_the_exit_code_is_the_bench_s(tmp_path, capsys, monkeypatch):
    old = tmp_path / "old.json"
    old.write_text(json.dumps(report([frames_record(1.0, 0.01)])))
    monkeypatch.setattr("sim.cmdline.bench_report.git_commit", lambda: "new")
    bench_report.publish(report([frames_record(2.0, 0.01)]), "THE TABLE", None, baseline.load(str(old)))
    out = capsys.readouterr().out
    assert out.startswith("THE TABLE\n") and f"against the baseline {old}" in out and "slower" in out
    # the command: the comparison is a report, the exit code stays the bench's (0); the table goes to stderr
    # with --json -
    older = tmp_path / "balls.json"
    assert main.main(["bench", "balls", "--preset", "T", "--steps", "6", "--warmup", "0", "--json", str(older)]) == 0
    capsys.readouterr()
    assert (
        main.main(
            [
                "bench",
                "balls",
                "--preset",
                "T",
                "--steps",
                "6",
                "--warmup",
                "0",
                "--baseline",
                str(older),
                "--json",
                "-",
            ]
        )
        == 0
    )
    printed = capsys.readouterr()
    assert "against the baseline" in printed.err and "step_ms" in printed.err
    assert json.loads(printed.out)["workload"] == "balls"


@pytest.mark.parametrize(
    "content, message",
    [
        ("not json", "is not JSON"),
        ('{"device": "x"}', "is not a benchmark report"),
        ('{"results": [{"n": 5}]}', "has no timed records"),
    ],
)
def test_a_bad_baseline_is_refused_before_any_run(tmp_path, capsys, content, message):
    path = tmp_path / "old.json"
    path.write_text(content)
    with pytest.raises(SystemExit) as exit_:
        main.main(["bench", "balls", "--preset", "T", "--baseline", str(path)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --baseline: baseline '{path}' {message}" in err and "T n=1,715" not in err
    with pytest.raises(UsageError, match="does not exist"):
        baseline.load(str(tmp_path / "none.json"))


def test_the_closest_record_to_the_live_configuration():
    records = [
        frames_record(1.0, n=1000),
        frames_record(2.0, n=100000),
        frames_record(3.0, variant="shared", n=1000),
        {**frames_record(4.0), "scene": "particles"},
    ]
    want = {"scene": "balls", "variant": "grid", "block": 128, "n": 1000, "backend": "gpu"}
    record, differs = baseline.closest(records, want)
    assert record["step_ms"] == 1.0 and differs == []
    record, differs = baseline.closest(records, {**want, "n": 80000})  # the nearest count of the same variant
    assert record["step_ms"] == 2.0 and differs == ["n"]
    record, differs = baseline.closest(records, {**want, "variant": "zsweep"})
    assert record["variant"] == "grid" and differs == ["variant"]
    record, differs = baseline.closest(records, {**want, "variant": "shared", "block": 256})
    assert record["step_ms"] == 3.0 and differs == ["block"]
    assert baseline.closest(records, {**want, "scene": "heat"}) == (None, [])
    assert baseline.closest(records, {**want, "backend": "cpu"}) == (None, [])


def test_view_takes_a_baseline_and_refuses_a_bad_one(tmp_path, capsys):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(report([frames_record(1.0, 0.01)])))
    bad.write_text("[1, 2]")
    args = main.build_parser().parse_args(["view", "--baseline", str(good)])
    assert args.baseline["results"][0]["step_ms"] == 1.0 and args.baseline["path"] == str(good)
    with pytest.raises(SystemExit) as exit_:
        main.build_parser().parse_args(["view", "--baseline", str(bad)])
    assert exit_.value.code == 2 and f"baseline '{bad}' is not a benchmark report" in capsys.readouterr().err


@pytest.mark.window
def test_the_viewer_draws_ghost_bars_and_survives_a_bad_file(tmp_path):
    from viewer.window.display import display_problem

    if display_problem() is not None:
        pytest.skip(f"needs a display: {display_problem()}")
    from sim import create_scene
    from viewer.window.app import Viewer

    scene = create_scene("balls", preset="block", n=400, seed=1)
    live = bench.configuration(scene)
    stages = {"sort": 0.01, "proximity": 0.02, "forces+integrate": 0.03}
    old = report(
        [
            {**live, "stage_ms": stages, "step_ms": 0.06},
            {**live, "variant": "other", "stage_ms": {"sort": 9.0}, "step_ms": 9.0},
        ]
    )
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(old))
    bad.write_text("{not json")
    v = Viewer(scene, 1024, 700, max_fps=None, screenshot_dir=tmp_path)
    try:
        for _ in range(3):
            assert v.tick()
        bars = v.panel.baseline
        assert bars.bars is None  # no baseline yet: no bars
        assert not bars.load(v.controller, str(bad))
        assert v.controller.message.startswith(f"baseline not loaded: baseline '{bad}' is not JSON")
        assert v.tick() and bars.report is None, "the viewer keeps running, nothing loaded"
        assert bars.load(v.controller, str(good)) and "2 timed records" in v.controller.message
        for _ in range(3):
            assert v.tick()
        names, now, ghost = bars.bars
        assert names == list(stages) and (now > 0).all(), "the bench's stages (not the window's render)"
        assert dict(zip(names, ghost.tolist(), strict=True)) == stages, "the exact configuration's stage times"
        assert bars.match(scene)[1] == []
        assert not bars.load(v.controller, str(tmp_path / "none.json")) and "does not exist" in v.controller.message
        assert bars.report["path"] == str(good), "a failed load keeps the baseline there was"
    finally:
        v.close()


@pytest.mark.parametrize(
    "change, field",
    [
        ({"n": "many"}, '"n" is "many", not a positive whole number'),
        ({"n": -1}, '"n" is -1, not a positive whole number'),
        ({"stage_ms": {"sort": "fast"}}, '"stage_ms" is {"sort": "fast"}, not stage names with their times'),
        ({"stage_ms": [1, 2]}, '"stage_ms" is [1, 2], not stage names'),
        ({"stage_ms_err": [1]}, '"stage_ms_err" is [1], not stage names with their errors'),
        ({"step_ms": -0.2}, '"step_ms" is -0.2, not a time: a number 0 or more'),
        ({"stage_ms": {"sort": -0.1}}, '"stage_ms" is {"sort": -0.1}, not stage names'),
        ({"step_ms_err": "x"}, '"step_ms_err" is "x", not a time'),
        ({"block": [0]}, '"block" is [0], not a CUDA block'),
    ],
)
def test_a_record_that_is_not_what_a_bench_writes_is_refused_naming_the_field(tmp_path, capsys, change, field):
    path = tmp_path / "old.json"
    path.write_text(json.dumps(report([frames_record(1.0, 0.01), {**frames_record(2.0, 0.01), **change}])))
    with pytest.raises(UsageError) as raised:
        baseline.load(str(path))
    assert str(raised.value).startswith(f"baseline {str(path)!r}: results[1] field {field}")
    for command in (["view"], ["bench", "balls", "--preset", "T"]):  # refused as the command line is read
        with pytest.raises(SystemExit) as exit_:
            main.main([*command, "--baseline", str(path)])
        assert exit_.value.code == 2 and f"results[1] field {field}" in capsys.readouterr().err


def test_every_committed_report_loads_as_a_baseline():
    import glob

    loaded = 0
    for path in glob.glob(os.path.join(os.path.dirname(os.path.dirname(__file__)), "bench", "results", "*.json")):
        try:
            loaded += bool(baseline.load(path)["results"])
        except UsageError as exc:
            assert "has no timed records" in str(exc)
    assert loaded > 20  # bench/results keeps the newest figures per device and workload
