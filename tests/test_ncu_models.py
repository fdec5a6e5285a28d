"""The speed-of-light models against Nsight Compute: bench/ncu_models.py's cases, files and table, and the
readings the models carry (the warp instructions of the issue-bound headlines, the histogram's L1 wavefronts)."""

from pathlib import Path

import bench_scripts
import pytest
from test_roofline import setup_for

from sim.contract import load
from sim.gpu.peaks import Peaks
from sim.gpu.roofline import Setup, StageModel, analyse, model_lines, models
from sim.registry import SCENES

ROOT = Path(__file__).resolve().parent.parent


# --- bench/ncu_models.py: the model against Nsight Compute's counts -------------------------------------------
def ncu_models():
    return bench_scripts.load("ncu_models")


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

    def particles(stage: str) -> tuple:  # both particles cases: one step of 10M, statistics off
        return ("particles", stage, "2020", 10 * m, "plain", 128, {}, {"statistics": False}, {}, 10, 1, False)

    assert cases == {
        "balls.sort": ("balls", "sort", "block", 10 * m, "grid", 128, {}, {}, {}, 6, 6, False),
        "balls.proximity": ("balls", "proximity", "block", 10 * m, "grid", 128, {}, {}, {}, 6, 6, False),
        "balls.forces+integrate": ("balls", "forces+integrate", "block", 10 * m, "grid", 128, {}, {}, {}, 6, 1, False),
        "particles.bin": particles("bin"),
        "particles.forces+move": particles("forces+move"),
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


def headline_model(stage_id: str):
    """The scene, the Nsight Compute case and the stage's model at that case (as bench/ncu_models.py builds it,
    without a GPU)."""
    spec, case = ncu_models().HEADLINES[stage_id]
    setup = Setup(case.count, case.window, case.variant, case.block, dict(case.options), case.preset, {})
    return spec, case, models(spec, setup)[case.stage]


# Nsight Compute on an H200, one window of each issue-bound headline (the balls' proximity: every pass, below):
# the warp instructions counted (heat's for its kernel with bands of 96 rows), the window's units and the model's
# instructions per unit
ISSUE_READINGS = {
    "particles.forces+move": (0.1932e9, 10e6, 19.32),  # one step of 10M particles (by row)
    "heat.step": (0.2936e9, 8 * 10_000**2, 0.367),  # 8 steps over 10000^2 cells
    "sdh.histogram": (46.39e9, 512_000 * 511_999 / 2, 0.353928),  # one histogram of 512,000 atoms
}


@pytest.mark.parametrize("stage_id", list(ISSUE_READINGS))
def test_each_issue_bound_headline_counts_the_instructions_ncu_read(stage_id):
    """The stage's model at its Nsight Compute case (built as bench/ncu_models.py builds it, without a GPU)
    counts the warp instructions of the reading, per unit and for the window."""
    spec, case, model = headline_model(stage_id)
    counted, units, per_unit = ISSUE_READINGS[stage_id]
    assert model.units == units and model.instructions == pytest.approx(per_unit)
    assert model.total_instructions == pytest.approx(counted)
    assert "instructions" in model.note and "as measured" in model.note


PASSES = ROOT / "bench" / "results" / "ncu-h200-61ad354-passes"  # bench/ncu_passes.sh at 61ad354, an H200


def test_the_balls_count_is_the_line_through_every_timed_pass_ncu_read():
    """Every grid search of the headline bench counted (2 warm-up passes, then 40 timed). The model's instructions
    a ball are the least-squares line through the timed passes against their tests a ball: at the bench's average
    tests the passes' average count, and at each pass within 4.1% of its own, the first timed pass's (the one
    window bench/ncu_models.sh profiles) and the last's among them."""
    from sim.balls.kernels import GRID_INSTRUCTIONS_A_BALL, GRID_INSTRUCTIONS_A_TEST

    ncu_passes = bench_scripts.load("ncu_passes")
    rows, record = ncu_passes.passes(PASSES)
    assert len(rows) == record["pass_count"] == 40
    a, b, worst = ncu_passes.fit(rows)
    assert a == pytest.approx(GRID_INSTRUCTIONS_A_BALL, abs=5e-4)
    assert b == pytest.approx(GRID_INSTRUCTIONS_A_TEST, abs=5e-5)
    assert worst < 0.042
    spec = SCENES["balls"]

    def counted(tests_a_ball):
        stats = {"tests_per_ball": tests_a_ball}
        return models(spec, Setup(record["n"], 1.0, "grid", 128, {}, "block", stats))["proximity"].instructions

    average = ncu_passes.average(rows, "tests_a_ball")
    assert counted(average) == pytest.approx(ncu_passes.average(rows, "instructions_a_ball"), rel=1e-4)  # 47.67
    for row in (rows[0], rows[-1]):  # 42.07 at 22.92 tests a ball, 51.28 at 29.28
        assert counted(row["tests_a_ball"]) == pytest.approx(row["instructions_a_ball"], rel=0.042)


def test_the_passes_table_ends_with_the_average_and_refuses_unpaired_launches(tmp_path, capsys):
    ncu_passes = bench_scripts.load("ncu_passes")
    assert ncu_passes.main([str(PASSES)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 + 40 + 2 and out[-2].startswith("timed passes' average: 25.88 tests a ball, 47.67 warp")
    assert out[-1] == "fit: 11.07 + 1.4146 x tests a ball warp instructions a ball (each pass within 4.1%)"
    # a pass that searched again adds a launch: the launches no longer pair with the passes
    lines = (PASSES / "sweeps.csv").read_text().splitlines()
    extra = [line.replace('"41"', '"42"', 1) for line in lines if line.startswith('"41"')]
    (tmp_path / "sweeps.csv").write_text("\n".join(lines + extra) + "\n")
    (tmp_path / "bench.json").write_text((PASSES / "bench.json").read_text())
    assert ncu_passes.main([str(tmp_path)]) == 1
    assert "do not pair" in capsys.readouterr().err
    assert ncu_passes.main([]) == 2


def test_the_histogram_counts_the_l1_wavefronts_ncu_read_and_they_bound_it():
    """Nsight Compute on an H200, one histogram of 512,000 atoms (tensor, block 256): 17.99 G wavefronts of L1's
    data pipe, 94% of its peak; the model carries them, and at the gate's 73.18 ms they are its limit."""
    spec, case, model = headline_model("sdh.histogram")
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


def test_the_particles_step_counts_the_l1_wavefronts_ncu_read_and_they_bound_it():
    """Nsight Compute on an H200, one step of 10M particles reading by row (plain fp64, block 128): 58.1 M
    wavefronts of L1's data pipe, 85% of its peak, against 71% of the issue slots: the wavefronts are the step's
    limit, not the instructions. At the gate's 0.3428 ms a step it reaches 66% of it: bound by L1 (ncu: most
    stalls wait on the neighbours' loads). The fp32 kernel counts neither."""
    spec, case, model = headline_model("particles.forces+move")
    assert model.total_wavefronts == pytest.approx(58.1e6) and "L1 wavefronts as measured" in model.note
    h200 = Peaks("H200", 4267.0, 65_200.0, 33_400.0, 55.0)
    perf = analyse(case.stage, model, 0.3428, h200)
    assert perf.bound == "l1" and perf.min_ms == pytest.approx(58.1e6 / 254.6875e9 * 1e3)
    assert perf.issue_pct < perf.l1_pct == pytest.approx(100 * 58.1e6 / 0.3428e-3 / 254.6875e9)
    fp32 = models(spec, Setup(case.count, 1, "plain", 128, {"precision": "fp32"}, case.preset, {}))[case.stage]
    assert fp32.wavefronts == 0.0 and analyse(case.stage, fp32, 0.3, h200).l1_pct is None
