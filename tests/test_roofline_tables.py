"""Speed of light where users meet it: the viewer's section (its rows from a scene's timer, drawn in the window)
and the benches' columns, fingerprint and records."""

import pytest
from test_roofline import PEAKS

from sim.gpu.roofline import Setup, StageModel, analyse, bound, models
from sim.registry import SCENES


# --- the viewer's section ----------------------------------------------------------------------------------
def test_section_rows_from_a_scenes_timer():
    from sim.registry import create_scene
    from viewer.panel.speed_of_light import recent_ms, rows, scene_perf

    scene = create_scene("heat", preset="plate", n=64)
    for _ in range(3):
        scene.advance_frame()
    ms = recent_ms(scene.timer, "step")
    assert ms > 0
    (perf,) = scene_perf(scene, PEAKS)
    steps = scene.frame_steps
    model = models(scene.spec, Setup.of_scene(scene, steps))["step"]
    assert perf.gbs == pytest.approx(model.total_bytes / (ms * 1e-3) / 1e9)
    assert model.instructions > 0  # the temporal kernel at k = 8, as the plate starts: its issue slots too
    issue_pct = 100 * model.total_instructions / (ms * 1e-3) / 1e9 / PEAKS.issue_ginst
    assert perf.issue_pct == pytest.approx(issue_pct)
    assert rows([perf]) == [
        (
            "step",
            f"{perf.gbs:,.1f}",
            f"{perf.copy_pct:.0f}%",
            f"{perf.gflops:,.1f}",
            f"{perf.flop_pct:.0f}%",
            f"{issue_pct:.0f}%",
            perf.bound,
        )
    ]
    plain = analyse("step", StageModel(8.0, 8.0, 9.0, 1e9, "item"), 4.0, PEAKS)
    assert rows([plain])[0][5:] == ("-", "memory")  # a model without instructions: a dash in the issue column


@pytest.mark.window
def test_the_window_draws_the_speed_of_light_section(monkeypatch):
    """A heat window with a fake model (1e9 updates of 8 B, 9 FLOP and 0.5 warp instructions a step) and fake
    peaks: the section draws the figures of the stage's recent time; on the CPU it says it measures GPU stages."""
    from viewer.panel import style
    from viewer.panel.speed_of_light import recent_ms
    from viewer.window.app import Viewer
    from viewer.window.display import display_problem

    if display_problem() is not None:
        pytest.skip(f"needs a display: {display_problem()}")
    from sim.registry import create_scene

    fake = StageModel(
        bytes_min=8.0, bytes_actual=8.0, flops=9.0, units=1e9, per="item-step", note="fake", instructions=0.5
    )
    monkeypatch.setattr("sim.heat.kernels.models", lambda setup: {"step": fake})
    monkeypatch.setitem(style.layout, "Speed of light", True)
    v = Viewer(create_scene("heat", preset="plate", n=64), 900, 700, max_fps=None)
    try:
        section = v.panel.speed_of_light
        section.peaks_of = lambda device: PEAKS
        assert v.tick()
        assert section.rows is None and section.note == "measures the GPU's stages: switch the physics to the GPU (a)"
        monkeypatch.setattr(v.controller.gpu, "kernels_run", lambda: True)
        for _ in range(3):
            assert v.tick()
        ms = recent_ms(v.scene.timer, "step")
        gbs = 8e9 / (ms * 1e-3) / 1e9
        gflops = 9e9 / (ms * 1e-3) / 1e9
        issue_pct = 100 * 0.5e9 / (ms * 1e-3) / 937.5e9  # of 60 TFLOP/s / 64 warp instructions a second
        expected = (
            "step",
            f"{gbs:,.1f}",
            f"{100 * gbs / 3000:.0f}%",
            f"{gflops:,.1f}",
            f"{100 * gflops / 60_000:.0f}%",
            f"{issue_pct:.0f}%",
            bound(100 * gbs / 3000, 100 * gflops / 60_000, issue_pct),
        )
        assert section.rows == [expected] and section.note == ""
    finally:
        v.close()


# --- bench's columns and fingerprint ------------------------------------------------------------------------
def test_bench_on_the_cpu_has_rates_per_stage_and_a_cpu_fingerprint(tmp_path, capsys):
    import json

    import main
    from sim.balls.passes import PassFigures

    path = tmp_path / "bench.json"
    assert main.main(["bench", "balls", "--preset", "T", "--steps", "12", "--warmup", "0", "--json", str(path)]) == 0
    report = json.loads(path.read_text())
    assert report["fingerprint"]["kind"] == "cpu" and report["fingerprint"]["cores"] >= 1
    assert report["fingerprint"]["commit"] == report["commit"] and report["peaks"] is None
    (record,) = report["results"]
    assert {"stage_ms", "step_ms", "ball_steps_per_s", "passes"} <= record.keys()  # the fields the gate reads
    sol = record["speed_of_light"]
    assert set(sol) == {"sort", "proximity", "forces+integrate"}
    step = sol["forces+integrate"]
    stats = {**record["stats"], **PassFigures.model_stats(record)}  # the timed passes' average, as bench reads
    model = models(SCENES["balls"], Setup(record["n"], 1.0, record["variant"], None, {}, "T", stats))
    expected = model["forces+integrate"].total_bytes / (record["stage_ms"]["forces+integrate"] * 1e-3) / 1e9
    assert step["gbs"] == pytest.approx(expected) and step["gflops"] > 0
    assert step["copy_pct"] is None and step["flop_pct"] is None and step["bound"] == ""  # no GPU peaks
    out = capsys.readouterr().out
    assert "no GPU, so the speed-of-light columns give rates, not % of peaks" in out
    line = next(line for line in out.splitlines() if line.strip().startswith("forces+integrate"))
    assert f"{step['gbs']:.1f} GB/s" in line and line.endswith(f"{step['gflops']:.1f} GFLOP/s"), "rates, no dashes"
    head = next(line for line in out.splitlines() if line.strip().startswith("stage "))
    assert "memory" in head and "compute" in head and "no peaks on the CPU" in head
    assert head.index("memory") + len("memory") == line.index("GB/s") + len("GB/s"), "the head over its column"


def test_gpu_bench_table_prints_the_fingerprint_and_peaks():
    from sim.cmdline.bench_report import table

    rep = {
        "workload": "heat",
        "device": "NVIDIA H100 80GB HBM3",
        "commit": "abc",
        "date": "2026-11-25",
        "fingerprint": {
            "kind": "gpu",
            "name": "NVIDIA H100 80GB HBM3",
            "driver": "550.54.15",
            "sm_clock_mhz": 1980,
            "mem_clock_mhz": 2619,
            "ecc": "Enabled",
            "commit": "abc",
        },
        "peaks": {
            "copy_gbs": 3000.0,
            "fp32_gflops": 60_000.0,
            "fp64_gflops": 30_000.0,
            "link_gbs": 50.0,
            "sources": {"copy": "measured 2026-11-25 on NVIDIA H100 80GB HBM3"},
        },
        "results": [],
    }
    lines = table(rep).splitlines()
    assert lines[1] == (
        "device: NVIDIA H100 80GB HBM3, driver 550.54.15, SM 1980 MHz, memory 2619 MHz, ECC Enabled; "
        "peaks: copy 3,000 GB/s, FP32 60,000 GFLOP/s, FP64 30,000 GFLOP/s (measured 2026-11-25 on "
        "NVIDIA H100 80GB HBM3)"
    )


def test_sdh_bench_records_and_prints_the_histograms_speed_of_light(monkeypatch, tmp_path, capsys):
    """``bench sdh`` with the CPU standing in for the GPU (a kernel time of 2 ms) and fake peaks."""
    import argparse
    import json
    import sys
    import types

    from sim.cmdline.cli import parsed
    from sim.gpu import backend
    from sim.gpu import peaks as peaks_module
    from sim.gpu.measure import Timing
    from sim.sdh import bench, sdh_cpu
    from sim.sdh.kernels import KERNELS

    def histogram(points, width, buckets, kernel, block):
        return sdh_cpu.histogram(points, width, buckets), Timing(2.0, 0.01, 12)

    fake = types.SimpleNamespace(KERNELS=KERNELS, KernelError=ValueError, measured_histogram=histogram)
    monkeypatch.setitem(sys.modules, "sim.sdh.gpu", fake)
    monkeypatch.setattr("sim.sdh.gpu", fake, raising=False)
    monkeypatch.setattr(backend, "gpu_status", lambda: backend.GpuStatus(True, "stand-in"))
    monkeypatch.setattr("sim.cmdline.bench.release_memory", lambda: None)
    monkeypatch.setattr(peaks_module, "current", lambda device=0: PEAKS)
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    parser.add_argument("--json")
    out = tmp_path / "sdh.json"
    argv = ["-n", "3000", "--kernel", "tensor", "--block", "256", "--json", str(out)]
    assert bench.run(parsed(bench.SdhBenchRequest, parser.parse_args(argv), scene="sdh", baseline=None)) == 0
    report = json.loads(out.read_text())
    (record,) = report["results"]
    assert record["kernel_ms"] == 2.0 and report["peaks"]["copy_gbs"] == 3000.0
    fig = record["speed_of_light"]["histogram"]
    pairs = 3000 * 2999 / 2
    assert fig["gflops"] == pytest.approx(8 * pairs / 2e-3 / 1e9)  # 8 FLOP a pair on the FP64 tensor cores
    assert fig["flop_pct"] == pytest.approx(100 * fig["gflops"] / 60_000)  # 2 x the FP64 FMA peak
    assert fig["bound"] == "latency"
    table = capsys.readouterr().out
    assert "speed of light histogram" in table and f"{fig['gflops']:.1f} GFLOP/s" in table


def test_durbin_batch_and_single_records_get_the_recursions_figures(monkeypatch):
    from sim.durbin.bench import add_speed_of_light
    from sim.gpu import peaks as peaks_module

    monkeypatch.setattr(peaks_module, "current", lambda device=0: PEAKS)
    batch = {
        "kind": "batch",
        "backend": "gpu",
        "systems": 100_000,
        "order": 32,
        "method": "batched-register",
        "block": 128,
        "precision": "fp64",
        "s": 0.1e-3,
    }
    add_speed_of_light(batch)
    fig = batch["speed_of_light"]["recursion"]
    assert fig["gbs"] == pytest.approx(76.8e6 / 0.1e-3 / 1e9)  # 768 GB/s: 26% of the 3000 GB/s copy
    assert fig["copy_pct"] == pytest.approx(25.6) and fig["sol_ms"] == pytest.approx(76.8e6 / 3000e9 * 1e3)
    single = {
        "kind": "single",
        "backend": "gpu",
        "n": 200_000,
        "method": "persistent-grid",
        "block": 256,
        "precision": "fp64",
        "s": 0.5,
    }
    add_speed_of_light(single)
    assert single["speed_of_light"]["recursion"]["bound"] == "latency"
    single.pop("speed_of_light")
    batch.pop("speed_of_light")
    for skipped in (
        {**single, "skipped": "no cluster"},
        {**batch, "method": "cupy-vectorised"},
        {**single, "backend": "cpu", "method": "scipy"},
    ):
        add_speed_of_light(skipped)
        assert "speed_of_light" not in skipped
