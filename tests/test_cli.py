"""The command line: exit codes, messages, outputs."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from sim.gpu.roofline import Setup, models

ROOT = pathlib.Path(__file__).resolve().parent.parent


def without_display(*args):
    """``main.py ARGS`` in a process started with no display: the viewer decides at import how to draw."""
    env = {name: value for name, value in os.environ.items() if name not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return subprocess.run(
        [sys.executable, str(ROOT / "main.py"), *args], capture_output=True, text=True, env=env, timeout=300, cwd=ROOT
    )


def test_help_lists_every_command(cli):
    out = cli("--help")
    assert out.returncode == 0
    for command in ("view", "run", "bench"):
        assert command in out.stdout
    bench = cli("bench", "--help")
    assert bench.returncode == 0 and "--json" in bench.stdout and "--backend" in bench.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "balls", "--steps", "-5", "--headless"], "must be positive"),
        (["run", "balls", "--steps", "abc", "--headless"], "whole number"),
        (["run", "balls", "--preset", "nope", "--headless"], "unknown preset"),
        (["run", "marbles", "--headless"], "unknown scene"),
        (["bench", "balls", "--backend", "tpu"], "invalid choice"),
        (["run", "balls", "--headless", "--size", "big"], "--size"),
        (["bench", "balls", "-n", "0"], "must be positive"),
        (["run", "balls", "--preset", "T", "-n", "5", "--headless"], "fixed number of balls"),
        (["bench", "particles", "--preset", "foo"], "unknown preset 'foo'"),
        (["run", "particles", "--precision", "fp32", "--headless"], "--precision applies to the particles scene's GPU"),
        (["run", "particles", "--precision", "fp16", "--headless"], "unknown precision"),
        (["run", "particles", "--variant", "tiled", "--headless"], "--variant applies"),
        (["bench", "balls", "--variant", "warp"], "unknown variant 'warp'"),
        (["run", "sdh", "--block", "64", "--headless"], "--block applies"),
        (["run", "balls", "--json", "x.json", "--headless"], "unrecognized arguments"),
        (["run", "particles", "--seed", "-1", "--headless"], "seed must be 0..4294967295"),
        (["run", "particles", "--seed", str(2**32), "--headless"], "seed must be"),
        (["run", "particles", "-n", "1e12", "--headless"], "needs about"),
    ],
)
def test_bad_input_exits_2_with_a_message(cli, args, message):
    out = cli(*args)
    assert out.returncode == 2, out.stderr
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_unwritable_screenshot_path_exits_2_and_writes_nothing(cli, tmp_path):
    target = tmp_path / "missing" / "shot.png"
    out = cli("run", "balls", "--headless", "--steps", "6", "--screenshot", str(target))
    assert out.returncode == 2 and "does not exist" in out.stderr
    assert not target.parent.exists()
    out = cli("run", "balls", "--headless", "--steps", "6", "--screenshot", str(tmp_path))
    assert out.returncode == 2 and "is a directory" in out.stderr


def test_unwritable_json_path_exits_2(cli, tmp_path):
    out = cli("bench", "balls", "--steps", "6", "--json", str(tmp_path / "no" / "r.json"))
    assert out.returncode == 2 and "does not exist" in out.stderr


def test_gpu_request_without_gpu_says_why(cli):
    from sim.gpu.backend import gpu_status

    if gpu_status().available:
        pytest.skip("this machine has a GPU")
    out = cli("run", "balls", "--headless", "--steps", "6", "--backend", "gpu")
    assert out.returncode == 1
    assert "GPU backend unavailable" in out.stderr and "Traceback" not in out.stderr


def test_counts_take_suffixes_and_exponents(cli):
    out = cli("run", "particles", "-n", "2k", "--steps", "10", "--headless")
    assert out.returncode == 0, out.stderr
    assert "particles 2,000" in out.stdout and "absmin" in out.stdout


@pytest.mark.parametrize("scene", ["balls", "heat", "durbin"])
def test_run_opens_the_preset_view_opens_and_help_says_which(cli, scene):
    from sim.registry import SCENES

    spec = SCENES[scene]
    out = cli("run", scene, "--steps", "1", "--headless")
    assert out.returncode == 0, out.stderr
    assert f"{scene} preset {spec.default_preset} on cpu: 1 steps" in out.stdout
    for command in ("run", "view"):
        helped = " ".join(cli(command, scene, "--help").stdout.split())
        assert f"initial state of {scene} (default {spec.default_preset}):" in helped
    helped = " ".join(cli("bench", scene, "--help").stdout.split())
    if "--preset" in helped:  # the timed-frames bench (heat and durbin have benchmarks of their own)
        assert f"initial state of {scene} (default {spec.start_preset}):" in helped


def test_headless_run_prints_a_summary(cli):
    out = cli("run", "balls", "--preset", "T", "--steps", "12", "--headless")
    assert out.returncode == 0, out.stderr
    assert "12 steps" in out.stdout and "balls 1,715" in out.stdout
    assert "last pass: tests 29,155" in out.stdout and "pairs 1,666" in out.stdout, "the scene's own statistics"


def test_bench_writes_the_json_shape(cli, tmp_path):
    path = tmp_path / "bench.json"
    out = cli("bench", "balls", "--preset", "T", "--steps", "12", "--warmup", "0", "--json", str(path))
    assert out.returncode == 0, out.stderr
    assert "proximity" in out.stdout and "steps/s" in out.stdout
    report = json.loads(path.read_text())
    assert {"device", "commit", "date", "workload", "results"} <= report.keys()
    assert report["workload"] == "balls"
    (record,) = report["results"]
    for key in (
        "preset",
        "n",
        "backend",
        "variant",
        "block",
        "stage_ms",
        "step_ms",
        "ball_steps_per_s",
        "tests_per_s",
        "passes",
    ):
        assert key in record
    assert record["preset"] == "T" and record["n"] == 1715 and record["backend"] == "cpu"
    assert set(record["stage_ms"]) == {"sort", "proximity", "forces+integrate"}
    assert record["passes"][0] == {"tests": 29155, "pairs": 1666}, "the lattice's first pass"
    # a pass per timed frame: the 12 steps asked for (2 frames), more until the median is known to 1%
    assert len(record["passes"]) == record["repeats"] == record["steps"] // 6 >= 2
    assert record["step_ms"] > 0 and record["ball_steps_per_s"] > 0


def test_bench_models_read_the_timed_passes_average(cli, tmp_path):
    """The stage times are medians over the timed frames, so the models read those passes' average tests and
    pairs, not the last pass's: the dripping balls' passes test more as they pile up."""
    from sim.registry import SCENES

    path = tmp_path / "bench.json"
    out = cli("bench", "balls", "--preset", "drip", "--steps", "48", "--warmup", "0", "--json", str(path))
    assert out.returncode == 0, out.stderr
    (record,) = json.loads(path.read_text())["results"]
    tests = [p["tests"] for p in record["passes"]]
    assert len(set(tests)) > 1 and record["stats"]["tests"] == tests[-1] != sum(tests) / len(tests)
    average = sum(tests) / len(tests) / record["n"]
    proximity = record["speed_of_light"]["proximity"]
    spec = SCENES["balls"]
    for tests_per_ball, same in ((average, True), (record["stats"]["tests_per_ball"], False)):
        stats = {**record["stats"], "tests_per_ball": tests_per_ball}
        setup = Setup(record["n"], 1.0, record["variant"], record["block"], {}, "drip", stats)
        model = models(spec, setup)["proximity"]
        rate = model.flops * model.units / (record["stage_ms"]["proximity"] * 1e-3) / 1e9
        assert (rate == pytest.approx(proximity["gflops"])) is same


def test_bench_json_to_stdout_keeps_the_table_on_stderr(cli):
    out = cli("bench", "balls", "--preset", "T", "--steps", "6", "--json", "-")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["results"][0]["n"] == 1715
    assert "proximity" in out.stderr


def test_viewer_without_display_says_so_and_how_to_run_headless():
    out = without_display()
    assert out.returncode == 1
    assert "display" in out.stderr.lower() and "--headless" in out.stderr
    assert "Traceback" not in out.stderr


def test_headless_screenshot_without_display(tmp_path):
    path = tmp_path / "balls.png"
    out = without_display(
        "run", "balls", "--preset", "T", "--steps", "60", "--headless", "--screenshot", str(path), "--size", "320x200"
    )
    assert out.returncode == 0, out.stderr
    from viewer.image import read_image

    pixels = read_image(path)
    assert pixels.shape[:2] == (200, 320)
    background = pixels[0, 0]
    differing = (pixels[..., :3] != background[:3]).any(axis=-1).mean()
    assert differing > 0.05, "balls and trough drawn over the background"


def test_bench_records_the_commit_named_for_a_copied_tree(monkeypatch):
    from sim.cmdline.bench_report import git_commit

    monkeypatch.setenv("KERNEL_LAB_COMMIT", "0123456789ab")
    assert git_commit() == "0123456789ab"
    monkeypatch.delenv("KERNEL_LAB_COMMIT")
    assert git_commit() != "0123456789ab" and git_commit()
