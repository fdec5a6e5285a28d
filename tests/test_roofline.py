"""Speed of light: every stage of every scene has a model that scales with its size; the roofline's figures
(GB/s, % of the copy peak, GFLOP/s, % of the FLOP peak, the bound) from a model, a time and the peaks."""

import pytest

from sim.contract import load
from sim.gpu.peaks import Peaks
from sim.gpu.roofline import (
    Setup,
    StageModel,
    analyse,
    analyse_stages,
    bound,
    figure_header,
    figure_text,
    figures,
    model_lines,
    models,
    record_lines,
)
from sim.registry import SCENES

PEAKS = Peaks(
    "test GPU",
    copy_gbs=3000.0,
    fp32_gflops=60_000.0,
    fp64_gflops=30_000.0,
    link_gbs=50.0,
    sources={"copy": "measured", "fp32": "measured", "fp64": "measured", "link": "measured"},
)
STATS = {"pairs": 3, "tests_per_ball": 20.0, "buckets": 100, "frames": 10}


def setup_for(spec, n: int, variant: str | None = None, **stats) -> Setup:
    knobs = spec.gpu
    return Setup(
        n,
        steps=spec.steps_per_frame,
        variant=variant or knobs.default_variant,
        block=knobs.default_block,
        options={o.name: o.default for o in spec.options},
        preset=spec.start_preset,
        stats={**STATS, "pairs": 3 * n, "entries": n, **stats},
    )


@pytest.mark.parametrize("name", list(SCENES))
def test_every_stage_of_every_scene_has_a_model_that_scales_with_its_items(name):
    spec = SCENES[name]
    for variant in spec.gpu.variants:
        small, large = (models(spec, setup_for(spec, n, variant)) for n in (1000, 8000))
        assert set(small) >= set(spec.stages), f"{name} {variant}: models for {sorted(small)}"
        for stage in small:
            a, b = small[stage], large[stage]
            assert a.bytes_min > 0 and a.bytes_actual > 0 and a.flops >= 0 and a.units > 0, (name, stage)
            assert a.note and a.per
            # work grows with the items: at least linearly (SDH's pairs quadratically), never less
            assert b.total_bytes > a.total_bytes and b.units >= 8 * a.units * 0.99, (name, variant, stage)


@pytest.mark.parametrize("name", list(SCENES))
def test_every_scene_models_its_own_state_after_a_few_frames(name):
    """The models read what the scenes' statistics really hold (numbers, not the panel's text)."""
    from viewer.panel.speed_of_light import scene_perf

    spec = SCENES[name]
    preset = spec.preset(spec.default_preset)
    scene = spec.create(n=min(preset.count, 300)) if preset.count else spec.create()
    for _ in range(2):
        scene.advance_frame()
    stage_models = models(spec, Setup.of_scene(scene, max(scene.frame_steps, 1.0)))
    assert set(stage_models) >= set(spec.stages)
    assert all(m.units > 0 and m.bytes_actual > 0 for m in stage_models.values())
    assert {p.stage for p in scene_perf(scene, PEAKS)} <= set(stage_models)


def test_durbin_recursion_of_a_frame_counts_the_entries_its_steps_touch():
    scene = SCENES["durbin"].create(preset="large", n=3000)
    scene.controls.set_param("speed", 100)
    for _ in range(3):
        scene.advance_frame()
    k = scene.stats()["entries"]
    assert k == scene.solver.k
    model = models(scene.spec, Setup.of_scene(scene, 100))["recursion"]
    assert model.units == pytest.approx(100 * (k - 101 / 2))  # steps k-100 .. k-1, each over its entries


def test_sdh_counts_pairs_and_durbin_entry_steps():
    sdh = models(SCENES["sdh"], setup_for(SCENES["sdh"], 1000))["histogram"]
    assert sdh.per == "pair" and sdh.units == 1000 * 999 / 2
    assert sdh.flop_kind == "fp64-tensor" and sdh.flops == 8.0
    durbin = SCENES["durbin"]
    setup = Setup(4000, steps=4000, variant="persistent", preset="ar", stats={"entries": 4000})
    whole = models(durbin, setup)["recursion"]
    assert whole.units == pytest.approx(4000 * 3999 / 2)
    assert whole.bytes_min * whole.units == pytest.approx(24 * 4000)  # r in, y in and out once: 24 B an entry
    lpc = models(durbin, Setup(100_000 * 32, preset="lpc", stats={"frames": 100_000}))["recursion"]
    assert lpc.per == "system" and lpc.units == 100_000
    assert lpc.total_bytes == pytest.approx(76.8e6)  # r in, y and alphas out: the issue's 77 MB


def test_heat_temporal_moves_eight_bytes_per_k_steps():
    heat = SCENES["heat"]
    for k, width in ((1, 120), (4, 120), (8, 112)):  # a warp writes width of its 128 columns, bands 96 + 2k rows
        model = models(heat, Setup(1000, variant="temporal", options={"k": str(k)}))["step"]
        assert model.bytes_min == 8.0 and model.bytes_actual == pytest.approx(8.0 / k)
        assert model.flops == pytest.approx(9.0 * 128 / width * (96 + 2 * k) / 96)  # the cells computed
    plain = models(heat, Setup(1000, variant="global", options={"k": "8"}))["step"]
    assert plain.bytes_actual == 8.0 and plain.flops == 9.0


# Nsight Compute on an H200, one window of each issue-bound headline: the warp instructions counted (heat's for
# its kernel with bands of 96 rows), the window's units and the model's instructions per unit
ISSUE_READINGS = {
    "balls.proximity": (0.4673e9, 10e6, 46.73),  # a pass over 10M balls
    "particles.forces+move": (0.2696e9, 10e6, 26.96),  # one step of 10M particles
    "heat.step": (0.2936e9, 8 * 10_000**2, 0.367),  # 8 steps over 10000^2 cells
    "sdh.histogram": (46.39e9, 512_000 * 511_999 / 2, 0.353928),  # one histogram of 512,000 atoms
}


@pytest.mark.parametrize("stage_id", list(ISSUE_READINGS))
def test_each_issue_bound_headline_counts_the_instructions_ncu_read(stage_id):
    """The stage's model at its Nsight Compute case (built as bench/ncu_models.py builds it, without a GPU)
    counts the warp instructions of the reading, per unit and for the window."""
    ncu = ncu_models()
    spec, case = ncu.HEADLINES[stage_id]
    setup = Setup(case.count, case.window, case.variant, case.block, dict(case.options), case.preset, {})
    model = models(spec, setup)[case.stage]
    counted, units, per_unit = ISSUE_READINGS[stage_id]
    assert model.units == units and model.instructions == pytest.approx(per_unit)
    assert model.total_instructions == pytest.approx(counted)
    assert "instructions" in model.note and "as measured" in model.note


def test_the_histogram_counts_the_l1_wavefronts_ncu_read_and_they_bound_it():
    """Nsight Compute on an H200, one histogram of 512,000 atoms (tensor, block 256): 17.99 G wavefronts of L1's
    data pipe, 94% of its peak; the model carries them, and at the gate's 73.18 ms they are its limit."""
    ncu = ncu_models()
    spec, case = ncu.HEADLINES["sdh.histogram"]
    setup = Setup(case.count, case.window, case.variant, case.block, dict(case.options), case.preset, {})
    model = models(spec, setup)[case.stage]
    assert model.total_wavefronts == pytest.approx(17.99e9) and "L1 wavefronts" in model.note
    # H200 peaks: FP32 65.2 TFLOP/s -> 1019 G warp instructions, 254.7 G wavefronts a second
    h200 = Peaks("H200", 4267.0, 65_200.0, 33_400.0, 55.0)
    assert h200.l1_gwave == pytest.approx(65_200.0 / 256)
    perf = analyse(case.stage, model, 73.18, h200)
    assert perf.bound == "l1" and perf.l1_pct == pytest.approx(100 * 17.99e9 / 73.18e-3 / 254.6875e9)
    assert perf.min_ms == pytest.approx(17.99e9 / 254.6875e9 * 1e3) and perf.as_json()["l1_pct"] == perf.l1_pct
    assert perf.issue_pct == pytest.approx(100 * 46.39e9 / 73.18e-3 / (65_200e9 / 64))
    assert "97% of L1's data pipe (its wavefronts)" in model_lines(perf)
    # the other kernels count no wavefronts: no L1 figure, no L1 limit
    fast = models(spec, Setup(case.count, 1, "fast", 256, {}, case.preset, {}))[case.stage]
    assert fast.wavefronts == 0.0 and analyse(case.stage, fast, 100.0, h200).l1_pct is None


def test_other_variants_count_no_instructions_and_say_so():
    balls, particles, heat = SCENES["balls"], SCENES["particles"], SCENES["heat"]
    unmeasured = [
        models(balls, setup_for(balls, 1000, "sweep"))["proximity"],
        models(particles, setup_for(particles, 1000, "tiled"))["forces+move"],
        models(particles, Setup(1000, variant="plain", options={"precision": "fp32"}))["forces+move"],
        models(heat, Setup(1000, variant="temporal", options={"k": "4"}))["step"],
        models(heat, Setup(1000, variant="temporal", options={"k": "8", "fma": "on"}))["step"],
        models(heat, Setup(1000, variant="global", options={"k": "8"}))["step"],
    ]
    for model in unmeasured:
        assert model.instructions == 0.0 and "no instruction count: no issue limit" in model.note, model.note
    assert models(balls, setup_for(balls, 1000, "grid"))["sort"].instructions == 0.0  # not issue-bound: uncounted
    perf = analyse("step", unmeasured[-1], 4.0, PEAKS)
    assert perf.issue_pct is None and perf.min_ms == pytest.approx(8 * 1000 / 3000e9 * 1e3)


def test_a_particles_frame_replayed_as_one_cuda_graph_is_one_stage_of_both():
    from sim.particles.kernels import GRAPH_STAGE

    spec = SCENES["particles"]
    setup = setup_for(spec, 1_000_000)
    stage_models = models(spec, setup)
    graph = stage_models[GRAPH_STAGE]
    assert graph.total_bytes == pytest.approx(stage_models["bin"].total_bytes + stage_models["forces+move"].total_bytes)
    assert graph.instructions == stage_models["forces+move"].instructions > 0  # bin's uncounted: a lower bound
    (perf,) = analyse_stages(spec, setup, {"bin": 0.0, "forces+move": 0.0, GRAPH_STAGE: 5.0}, PEAKS)
    assert perf.stage == GRAPH_STAGE and perf.gbs == pytest.approx(graph.total_bytes / 5e-3 / 1e9)


def test_bound_is_the_peak_reached_past_60_percent_else_latency():
    assert bound(75.0, 10.0) == "memory"
    assert bound(10.0, 61.0) == "arithmetic"
    assert bound(59.0, 59.0) == "latency"
    assert bound(70.0, 90.0) == "arithmetic"
    assert bound(None, None) == ""
    # the issue slots where a model counts instructions: the nearest limit again, else latency
    assert bound(70.0, 10.0, 80.0) == "issue"
    assert bound(70.0, 10.0, 50.0) == "memory" and bound(10.0, 75.0, 61.0) == "arithmetic"
    assert bound(59.0, 20.0, 59.5) == "latency"
    assert bound(80.0, 10.0, 80.0) == "memory"  # equals: memory, then arithmetic, then issue
    assert bound(None, None, 90.0) == ""
    # L1's data pipe where a model counts wavefronts, likewise
    assert bound(70.0, 10.0, 60.0, 95.0) == "l1" and bound(70.0, 10.0, 80.0, 75.0) == "issue"
    assert bound(50.0, 10.0, None, 59.0) == "latency" and bound(20.0, 10.0, None, 61.0) == "l1"


def test_analyse_gives_rates_and_shares_of_the_peaks():
    # 1e9 units of 8 B and 9 FLOP in 4 ms: 2000 GB/s (67% of 3000), 2250 GFLOP/s (3.75% of 60000)
    model = StageModel(bytes_min=8.0, bytes_actual=8.0, flops=9.0, units=1e9, per="item-step")
    perf = analyse("step", model, 4.0, PEAKS)
    assert perf.gbs == pytest.approx(2000.0) and perf.copy_pct == pytest.approx(66.667, rel=1e-4)
    assert perf.gflops == pytest.approx(2250.0) and perf.flop_pct == pytest.approx(3.75)
    assert perf.bound == "memory" and perf.intensity == pytest.approx(9 / 8)
    assert perf.min_ms == pytest.approx(8e9 / 3000e9 * 1e3)  # the bytes at the copy peak: 2.667 ms
    fp64 = analyse("s", StageModel(1.0, 1.0, 100.0, 1e9, "item", "fp64"), 5.0, PEAKS)
    assert fp64.gflops == pytest.approx(20_000.0) and fp64.flop_pct == pytest.approx(66.667, rel=1e-4)
    assert fp64.bound == "arithmetic"
    slow = analyse("s", model, 400.0, PEAKS)
    assert slow.copy_pct == pytest.approx(0.6667, rel=1e-3) and slow.bound == "latency"
    # no instruction count: no issue figure, the JSON says so and the text line is the one it always was
    assert model.instructions == 0.0 and perf.issue_pct is None and perf.as_json()["issue_pct"] is None
    assert figure_text(perf.as_json()).split() == ["2000.0", "GB/s", "67%", "2250.0", "GFLOP/s", "4%", "memory"]


ISSUE_BOUND = StageModel(bytes_min=1.0, bytes_actual=1.0, flops=1.0, units=1e9, per="item", instructions=2.0)


def test_a_stage_whose_instructions_take_most_issue_slots_is_issue_bound():
    # 2e9 warp instructions at 60 TFLOP/s / 64 = 937.5 G a second: 2.133 ms, against 0.333 ms for the bytes
    # and 0.017 ms for the FLOPs; timed at 3 ms the issue slots are 71% busy, DRAM 11%, the FP32 pipes 0.6%
    assert PEAKS.issue_ginst == pytest.approx(937.5)
    perf = analyse("pass", ISSUE_BOUND, 3.0, PEAKS)
    assert perf.min_ms == pytest.approx(2.0 * 1e9 / (60_000e9 / 64) * 1e3)
    assert perf.issue_pct == pytest.approx(100 * 2e9 / 3e-3 / 937.5e9)
    assert perf.copy_pct == pytest.approx(100 * 1e9 / 3e-3 / 3000e9) and perf.bound == "issue"
    assert perf.as_json()["issue_pct"] == perf.issue_pct and perf.as_json()["sol_ms"] == perf.min_ms
    # where the instructions are the lesser limit they change neither the time nor the bound
    light = analyse("pass", StageModel(8.0, 8.0, 9.0, 1e9, "item-step", instructions=0.1), 4.0, PEAKS)
    assert light.min_ms == pytest.approx(8e9 / 3000e9 * 1e3) and light.bound == "memory"
    assert light.issue_pct == pytest.approx(100 * 0.1e9 / 4e-3 / 937.5e9)
    # no peaks or host work: no issue figure
    assert analyse("pass", ISSUE_BOUND, 3.0, None).issue_pct is None
    host = analyse("pass", StageModel(1.0, 1.0, 1.0, 1e9, "item", where="host", instructions=2.0), 3.0, PEAKS)
    assert host.issue_pct is None and host.min_ms is None


def test_the_text_line_and_the_tooltip_give_the_issue_slots():
    perf = analyse("pass", ISSUE_BOUND, 3.0, PEAKS)
    fig = perf.as_json()
    assert figure_text(fig).split() == ["333.3", "GB/s", "11%", "333.3", "GFLOP/s", "1%", "71%", "issue"]
    head, line = figure_header(issue=True), figure_text(fig, issue=True)
    assert head.index("%issue") + len("%issue") == line.index("71%") + len("71%"), "the head over its column"
    # in a table with an issue column, a figure without one (an older record) shows a dash there
    old = analyse("s", StageModel(8.0, 8.0, 9.0, 1e9, "item"), 4.0, PEAKS).as_json()
    del old["issue_pct"]
    assert figure_text(old, issue=True).split()[-2:] == ["-", "memory"]
    assert figure_text(old) == figure_text({**old, "issue_pct": None})  # no column of its own either way
    lines = record_lines({"speed_of_light": {"pass": fig, "s": old}})
    assert [line.split()[-2:] for line in lines] == [["71%", "issue"], ["-", "memory"]]
    assert model_lines(perf)[1:4] == [
        "per item: 1 B through DRAM (1 B the least), 1 FP32 FLOP, 2 warp instructions",
        "1,000,000,000 items in the timed steps",
        "71% of the schedulers' issue slots",
    ]


def test_a_stage_tells_the_model_behind_its_figures():
    model = StageModel(bytes_min=6.0, bytes_actual=8.0, flops=9.0, units=1e9, per="item-step", note="one sweep")
    assert model_lines(analyse("step", model, 4.0, PEAKS)) == [
        "4 ms now, 2 ms at the speed of light",  # the least bytes, 6e9 B, at the copy peak's 3000 GB/s
        "per item-step: 8 B through DRAM (6 B the least), 9 FP32 FLOP",
        "1,000,000,000 item-steps in the timed steps",
        "one sweep",
    ]
    host = analyse("plots", StageModel(8.0, 8.0, 1.0, 1e6, "item", "fp64", where="host"), 1.5, PEAKS)
    assert model_lines(host)[:2] == ["1.5 ms now", "per item: 8 B on the host (8 B the least), 1 FP64 FLOP"]


def test_link_and_host_stages():
    link = analyse("read back", StageModel(8.0, 8.0, 0.0, 1e9, "item", where="link"), 400.0, PEAKS)
    assert link.gbs == pytest.approx(20.0) and link.copy_pct == pytest.approx(40.0)  # of the 50 GB/s link
    host = analyse("plots", StageModel(8.0, 8.0, 1.0, 1e6, "item", where="host"), 1.0, PEAKS)
    assert host.copy_pct is None and host.flop_pct is None and host.bound == "" and host.min_ms is None
    no_peaks = analyse("step", StageModel(8.0, 8.0, 9.0, 1e9, "item"), 4.0, None)
    assert no_peaks.gbs == pytest.approx(2000.0) and no_peaks.copy_pct is None and no_peaks.bound == ""


def test_stages_without_time_are_left_out_and_figures_are_json():
    heat = SCENES["heat"]
    setup = Setup(10_000 * 10_000, variant="temporal", options={"k": "8"})
    assert analyse_stages(heat, setup, {"step": 0.0}, PEAKS) == []
    fig = figures(heat, setup, {"step": 0.5, "unknown": 3.0}, PEAKS)
    assert list(fig) == ["step"]
    assert fig["step"]["gbs"] == pytest.approx(1e8 * 1.0 / 0.5e-3 / 1e9)  # 1 B an update (8 B / 8 steps)
    # 9 FLOP an update kept, 12 computed (1.33 at k = 8): 2400 GFLOP/s, 4% of the 60 TFLOP/s peak; 0.367 warp
    # instructions an update: 73.4 G a second, 8% of the 937.5 G issue slots
    assert fig["step"]["bound"] == "latency" and fig["step"]["flop_pct"] == pytest.approx(4.0)
    assert fig["step"]["issue_pct"] == pytest.approx(100 * 0.367e8 / 0.5e-3 / 937.5e9)
    lines = record_lines({"speed_of_light": fig})
    assert [line.split() for line in lines] == [
        ["speed", "of", "light", "step", "200.0", "GB/s", "7%", "2400.0", "GFLOP/s", "4%", "8%", "latency"]
    ]


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
    from viewer.window.app import Viewer, display_problem

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
    model = models(SCENES["balls"], Setup(record["n"], 1.0, record["variant"], None, {}, "T", record["stats"]))
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
    from sim.cmdline.bench import table

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


# --- bench/ncu_models.py: the model against Nsight Compute's counts -------------------------------------------
def ncu_models():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "bench" / "ncu_models.py"
    spec = importlib.util.spec_from_file_location("ncu_models", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ncu_covers_every_gpu_stage_of_every_scene():
    ncu = ncu_models()
    profiled = {tuple(stage_id.split(".", 1)) for stage_id in ncu.HEADLINES}
    for name, spec in SCENES.items():
        if name == "density":  # the particles' kernels
            continue
        stage_models = models(spec, setup_for(spec, 1000))
        kernel_stages = {stage for stage in spec.stages if stage_models[stage].where == "device"}
        assert {(name, stage) for stage in kernel_stages} <= profiled, name


def test_ncu_cases_are_the_scenes_own_and_the_same_as_when_they_were_listed_in_the_script():
    """(scene, stage, preset, count, variant, block, options, toggles, params, steps a frame, steps a window, whole
    frame) of each case, in the registry's order; the batched Durbin solve profiles its own window."""
    m = 1_000_000
    ncu = ncu_models()
    cases = {
        stage_id: (
            spec.name,
            c.stage,
            c.preset,
            c.count,
            c.variant,
            c.block,
            dict(c.options),
            dict(c.toggles),
            dict(c.params),
            c.steps,
            c.window,
            c.whole_frame,
        )
        for stage_id, (spec, c) in ncu.HEADLINES.items()
        if not c.profile
    }
    assert cases == {
        "balls.sort": ("balls", "sort", "block", 10 * m, "grid", 128, {}, {}, {}, 6, 6, False),
        "balls.proximity": ("balls", "proximity", "block", 10 * m, "grid", 128, {}, {}, {}, 6, 6, False),
        "balls.forces+integrate": ("balls", "forces+integrate", "block", 10 * m, "grid", 128, {}, {}, {}, 6, 1, False),
        "particles.bin": (
            "particles",
            "bin",
            "2020",
            10 * m,
            "plain",
            128,
            {},
            {"statistics": False},
            {},
            10,
            1,
            False,
        ),
        "particles.forces+move": (
            "particles",
            "forces+move",
            "2020",
            10 * m,
            "plain",
            128,
            {},
            {"statistics": False},
            {},
            10,
            1,
            False,
        ),
        "sdh.histogram": ("sdh", "histogram", "course", 512_000, "tensor", 256, {}, {}, {}, 1, 1, False),
        "heat.step": ("heat", "step", "large", 100 * m, "temporal", (32, 4), {"k": "8"}, {}, {}, 8, 8, False),
        "durbin.recursion": (
            "durbin",
            "recursion",
            "large",
            200_000,
            "persistent",
            256,
            {},
            {},
            {"speed": 1000},
            1000,
            1000,
            True,
        ),
    }
    assert list(ncu.HEADLINES) == [*cases, "durbin.batched"]
    spec, batched = ncu.HEADLINES["durbin.batched"]
    assert batched.stage == "recursion" and callable(load(batched.profile))
    for spec, case in ncu.HEADLINES.values():
        assert case.stage in spec.stages and not (case.profile and case.whole_frame)
        for name, _ in case.options:
            assert name in {o.name for o in spec.options}


def test_ncu_model_file_has_the_windows_instructions(tmp_path):
    import json

    ncu = ncu_models()
    model = StageModel(8.0, 1.0, 12.0, 8e8, "item-step", instructions=0.4675, note="k = 8")
    ncu.write_model(tmp_path, "heat.step", model)
    written = json.loads((tmp_path / "heat.step.model.json").read_text())
    assert written["instructions"] == pytest.approx(0.374e9) and written["bytes"] == pytest.approx(8e8)
    assert written["flops"] == pytest.approx(9.6e9) and written["note"] == "k = 8"


def test_ncu_table_sums_the_kernels_and_prints_model_over_ncu(tmp_path):
    import json

    ncu = ncu_models()
    names = [
        "dram__bytes_read.sum",
        "dram__bytes_write.sum",
        "smsp__inst_executed.sum",
        ncu.SASS.format("fadd"),
        ncu.SASS.format("fmul"),
        ncu.SASS.format("ffma"),
        ncu.DURATION,
        *ncu.BUSY.values(),
        *ncu.WAVEFRONTS,
    ]
    head = ",".join(f'"{n}"' for n in ["ID", "Process ID", "Kernel Name", *names])
    units = ",".join(['""'] * 3 + ['"byte"', '"byte"'] + ['"inst"'] * 4 + ['"ns"'] + ['"%"'] * 3 + ['"wavefront"'] * 2)
    # the second kernel takes a third of the time: issue (90 x 3 + 30) / 4 = 75%, DRAM (20 x 3 + 60) / 4 = 30%,
    # L1 (40 x 3 + 0) / 4 = 30%; wavefronts summed: 0.5 G + 0.1 G, none of them atomics
    kernels = [
        '"0","7","step_temporal_8","400,000,000","380,000,000","2,000,000","0","100,000,000","400,000,000",'
        '"300,000","90","20","40","500,000,000","0"',
        '"1","7","step_temporal_8","10,000,000","10,000,000","1,000,000","0","0","0","100,000","30","60","0",'
        '"100,000,000","0"',
    ]
    page = "==PROF== Connected\n" + "\n".join([head, units, *kernels]) + "\n"
    (tmp_path / "heat.step.csv").write_text(page)
    model = {"bytes": 1.0e9, "bytes_min": 8e9, "flops": 0.9e9, "flop_kind": "fp32", "note": "k = 8"}
    (tmp_path / "heat.step.model.json").write_text(json.dumps({**model, "instructions": 2.4e6}))
    # a model without instructions (or a file written before they were): dashes in their columns
    (tmp_path / "particles.bin.csv").write_text(page)
    (tmp_path / "particles.bin.model.json").write_text(json.dumps(model))
    totals = ncu.ncu_totals(tmp_path / "heat.step.csv")
    assert totals["kernels"] == 2 and totals["dram__bytes_read.sum"] == 410e6
    lines = ncu.table(tmp_path).splitlines()
    heat_line = next(line for line in lines if line.startswith("heat.step"))
    heat = heat_line.split()
    # 2 kernels; model 1 GB vs ncu 0.8 GB: 1.25; 0.9 GFLOP vs 100 M FMUL + 2 x 400 M FFMA = 0.9 GFLOP: 1.00;
    # model 2.4 M warp instructions vs ncu 3 M: 0.80
    assert lines[0].split()[12:18] == ["model", "Ginst", "ratio", "ncu", "Ginst", "issue"]
    assert lines[0].index("model Ginst") + 11 == heat_line.index("0.0024") + 6, "the head over its column"
    assert heat == [
        "heat.step",
        "2",
        "1.0000",
        "0.8000",
        "1.25",
        "0.900",
        "0.900",
        "1.00",
        "0.0024",
        "0.80",
        "0.0030",
        "75%",
        "30%",
        "30%",
        "0.6000",
        "0.0000",
        "fp32",
    ]
    particles = next(line for line in lines if line.startswith("particles.bin")).split()
    assert particles[7:11] == ["1.00", "-", "-", "0.0030"]
    assert any(line.startswith("sdh.histogram") and "not profiled" in line for line in lines)
    assert "sm__inst_executed_pipe_tensor_op_dmma.sum" in ncu.metrics()
    assert "dmma" not in ncu.metrics(tensor=False)


# --- on a GPU: the models against the measured peaks ---------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize(
    "name, preset, n, variant, options",
    [
        ("balls", "block", 1_000_000, "grid", {}),
        ("particles", "2020", 1_000_000, "plain", {}),
        ("sdh", "course", 100_000, "tensor", {}),
        ("heat", "large", 4096 * 4096, "temporal", {"k": "8"}),
        ("durbin", "large", 200_000, "persistent", {}),
    ],
)
def test_no_gpu_stage_claims_more_than_the_device_can_do(name, preset, n, variant, options):
    """A model that puts a stage above the measured copy, FLOP or issue peak counts bytes, FLOP or instructions
    that never happen."""
    from sim.gpu import peaks
    from sim.registry import create_scene
    from viewer.panel.speed_of_light import scene_perf

    found = peaks.current(0)
    scene = create_scene(name, preset=preset, n=n, backend="gpu", variant=variant, **options)
    for _ in range(12):
        scene.advance_frame()
    scene.finish()
    scene.timer.flush()
    perfs = [p for p in scene_perf(scene, found) if p.copy_pct is not None]
    assert perfs, "no GPU stage timed"
    for perf in perfs:
        assert 0 < perf.copy_pct < 110 and perf.flop_pct < 110, perf
        assert perf.issue_pct is None or 0 < perf.issue_pct < 110, perf
        assert perf.bound in ("memory", "arithmetic", "issue", "l1", "latency")
