"""Speed of light: every stage of every scene has a model that scales with its size; the roofline's figures
(GB/s, % of the copy peak, GFLOP/s, % of the FLOP peak, the bound) from a model, a time and the peaks."""

from dataclasses import replace

import pytest

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
    assert graph.wavefronts == stage_models["forces+move"].wavefronts > 0
    (perf,) = analyse_stages(spec, setup, {"bin": 0.0, "forces+move": 0.0, GRAPH_STAGE: 5.0}, PEAKS)
    assert perf.stage == GRAPH_STAGE and perf.gbs == pytest.approx(graph.total_bytes / 5e-3 / 1e9)
    # the stages run one after the other: the frame's limit is the binning's and the forces' added
    bin_alone = analyse("bin", stage_models["bin"], 1.0, PEAKS).min_ms
    forces_alone = analyse("forces+move", stage_models["forces+move"], 1.0, PEAKS).min_ms
    assert bin_alone > 0 and forces_alone > 0
    assert perf.min_ms == pytest.approx(bin_alone + forces_alone)
    assert perf.min_ms > analyse("one", replace(graph, parts=()), 5.0, PEAKS).min_ms  # the max of summed counts


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
