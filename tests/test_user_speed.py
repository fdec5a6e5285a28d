"""Your kernel against the speed of light and what the compiler made of it, without a GPU: ptxas's report
from a real NVRTC build, the occupancy arithmetic, --ptx and --sass, and check's and bench's GB/s and % of
the limit from a stand-in sandbox with made-up peaks."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_user_commands import TwinBox

import main
from sim.gpu import nvrtc
from sim.gpu.cuda import source_path
from sim.gpu.peaks import Peaks
from sim.gpu.roofline import models
from sim.heat import SPEC as HEAT
from sim.registry import SCENES
from sim.userkernel import codegen, footprint, speed
from sim.userkernel import commands as user_commands
from sim.userkernel import source as user_source
from sim.userkernel.footprint import Footprint, occupancy
from sim.userkernel.sandbox import RunResult

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")

PEAKS = Peaks("Test GPU", copy_gbs=3000.0, fp32_gflops=60_000.0, fp64_gflops=30_000.0, link_gbs=50.0)
TEMPLATE = source_path("sim/heat/templates/step.cu").read_text()
# the template with a local array the compiler cannot keep in registers (indexed by a runtime value)
LOCAL_ARRAY = TEMPLATE.replace(
    "    const float t = tin[at];\n",
    "    float scratch[256];\n"
    "    for (int k = 0; k < 256; ++k) scratch[k] = tin[(at + k) % (ni * nj)];\n"
    "    const float t = tin[at] + 0.0f * scratch[(i * 7 + j) & 255];\n",
)


@pytest.fixture
def my_step(tmp_path):
    path = tmp_path / "my_step.cu"
    path.write_text(TEMPLATE)
    return path


def heat(tmp_path, text: str):
    path = tmp_path / "my_step.cu"
    path.write_text(text)
    return user_source.load(path, HEAT)


# --- ptxas's report ----------------------------------------------------------------------------------------
def test_the_heat_templates_registers_and_no_local_memory_come_from_a_real_nvrtc_log(tmp_path):
    src = heat(tmp_path, TEMPLATE)
    log = nvrtc.run_here(
        src.compiled_text(), src.name, (*user_source.options(src), *user_source.REPORT_OPTIONS), "sm_90"
    ).log
    said = next(line for line in log.splitlines() if "Used" in line and "registers" in line)
    registers = int(said.split("Used")[1].split()[0])
    assert 8 <= registers <= 64
    checked = user_source.check_build(src)
    assert checked.compiles and checked.diagnostics == []
    assert checked.footprint == Footprint(registers, 0, 0, 0, 0, 0)
    assert not checked.footprint.uses_local


def test_a_big_local_array_reports_local_memory(tmp_path):
    fp = user_source.check_build(heat(tmp_path, LOCAL_ARRAY)).footprint
    assert fp.stack_frame >= 1024 and fp.uses_local
    text = "\n".join(codegen.lines(fp, (32, 8), 0, codegen.Target("sm_90", footprint.LIMITS["sm_90"], "sm_90")))
    assert f"local memory {fp.stack_frame:,} B stack frame a thread" in text and "local array or spills" in text


def test_the_report_of_the_entry_is_read_among_other_functions():
    log = (
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'helper' for 'sm_90'\n"
        "ptxas info    : Function properties for helper\n"
        "ptxas         .     64 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
        "ptxas info    : Used 40 registers, used 0 barriers, 64 bytes cumulative stack size\n"
        "ptxas info    : Compiling entry function 'step' for 'sm_90'\n"
        "ptxas info    : Function properties for step\n"
        "ptxas         .     16 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers, 16 bytes cumulative stack size, 4096 bytes smem\n"
    )
    assert footprint.parse(log, "step") == Footprint(255, 4096, 16, 4, 4, 1)
    assert footprint.parse(log, "helper") == Footprint(40, 0, 64, 8, 12, 0)
    assert footprint.parse(log, "other") is None and footprint.parse("", "step") is None


# --- occupancy: the calculator's arithmetic on sm_90 ------------------------------------------------------------
SM90 = footprint.LIMITS["sm_90"]


@pytest.mark.parametrize(
    "registers, shared, threads, dynamic, blocks, warps, limiter",
    [
        # 18 registers: 3 units of 256 a warp, 85 warps' worth; 8 blocks of 8 warps fill the 64 warps
        (18, 0, 256, 0, 8, 64, "threads"),
        # 64 registers: 2048 a warp, 32 warps: 4 blocks of 8
        (64, 0, 256, 0, 4, 32, "registers"),
        # 40 registers: 1280 a warp, 51 warps: 6 blocks of 8 (48 warps)
        (40, 0, 256, 0, 6, 48, "registers"),
        # 48 KB static + 1 KB reserved = 50176 B a block: 233472 // 50176 = 4 blocks of 4 warps
        (16, 48 * 1024, 128, 0, 4, 16, "shared memory"),
        # the same through dynamic shared memory
        (16, 0, 128, 48 * 1024, 4, 16, "shared memory"),
        # one warp a block: 32 block slots hold 32 warps
        (16, 0, 32, 0, 32, 32, "blocks"),
        # 96 threads = 3 warps: 21 blocks, 63 warps
        (16, 0, 96, 0, 21, 63, "threads"),
        # 1024 threads at 32 registers: 1024 a warp, 64 warps: 2 blocks
        (32, 0, 1024, 0, 2, 64, "registers"),
    ],
)
def test_occupancy_on_sm90_matches_hand_computed_cases(registers, shared, threads, dynamic, blocks, warps, limiter):
    occ = occupancy(Footprint(registers, shared, 0, 0, 0), threads, dynamic, SM90)
    assert (occ.blocks, occ.warps, occ.limiter) == (blocks, warps, limiter)
    assert occ.fraction == pytest.approx(warps / 64)


def test_a_block_that_cannot_fit_says_why():
    too_many = occupancy(Footprint(255, 0, 0, 0, 0), 1024, 0, SM90)  # 255 x 1024 > 65536 registers
    assert too_many.blocks == 0 and "registers a thread" in too_many.limiter and too_many.text().startswith("none")
    too_big = occupancy(Footprint(16, 200 * 1024, 0, 0, 0), 128, 40 * 1024, SM90)
    assert too_big.blocks == 0 and "past 232,448" in too_big.limiter


def test_the_devices_properties_replace_the_tables_figures():
    props = {
        "regsPerMultiprocessor": 65536,
        "maxThreadsPerMultiProcessor": 1536,
        "maxBlocksPerMultiProcessor": 16,
        "sharedMemPerMultiprocessor": 102400,
        "sharedMemPerBlockOptin": 101376,
        "reservedSharedMemPerBlock": 1024,
    }
    limits = footprint.limits_of("sm_86", props)
    assert (limits.threads, limits.blocks, limits.shared) == (1536, 16, 102400)
    assert occupancy(Footprint(18, 0, 0, 0, 0), 256, 0, limits).blocks == 6  # 48 warps of 256-thread blocks
    assert footprint.limits_of("sm_70") is None and footprint.limits_of("sm_100", props).threads == 1536


# --- check: the compiled block, --ptx and --sass ------------------------------------------------------------
def test_check_without_a_gpu_prints_what_the_compiler_made_and_writes_the_ptx(my_step, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(codegen, "sass_tool", lambda: None)
    ptx, sass = tmp_path / "my_step.ptx", tmp_path / "my_step.sass"
    code = main.main(["check", "heat", "--kernel-file", str(my_step), "--ptx", str(ptx), "--sass", str(sass)])
    out, err = capsys.readouterr()
    assert code in (0, 3)  # 3: no GPU here (the compiled block comes first either way)
    assert "compiled for sm_90:" in out and "registers " in out and "occupancy on sm_90: 100% (8 blocks of 256" in out
    assert ".entry step" in ptx.read_text() and f"wrote the PTX for sm_90 to {ptx}" in err
    assert not sass.exists() and "neither cuobjdump nor nvdisasm is on PATH (they come with the CUDA toolkit)" in err


def test_check_refuses_a_ptx_target_that_is_a_folder_before_compiling(my_step, tmp_path, capsys):
    assert main.main(["check", "heat", "--kernel-file", str(my_step), "--ptx", str(tmp_path)]) == 2
    assert "PTX file" in capsys.readouterr().err


# --- check and bench: GB/s and % of the limit ------------------------------------------------------------------
class RatedBox(TwinBox):
    """TwinBox with times that make round rates on 3,000,000 cells: 8 B a cell in 0.016 ms is 1,500 GB/s."""

    def run(self, source, inputs, block, repeats=0, builtin=()):
        result = super().run(source, inputs, block, repeats, builtin)
        return RunResult(
            result.outputs, [0.016] * repeats, result.overflow, {v: [0.01] * repeats for v in builtin}, result.device
        )


CELLS = 3_000_000  # the heat stage's largest default size: a 2000 x 1500 grid


def test_check_gives_the_kernels_gbs_and_percent_of_the_limit_beside_the_builtins(
    my_step, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(user_commands, "Sandbox", RatedBox())
    monkeypatch.setattr(speed, "device_peaks", lambda device=0: PEAKS)
    out = tmp_path / "check.json"
    assert (
        main.main(
            [
                "check",
                "heat",
                "--kernel-file",
                str(my_step),
                "--sizes",
                str(CELLS),
                "--seeds",
                "1",
                "--json",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    head = next(line for line in text.splitlines() if line.split()[:1] == ["size"])
    assert head.split()[-3:] == ["GB/s", "%", "limit"]
    row = next(line for line in text.splitlines() if line.split()[:1] == ["3,000,000"]).split()
    assert row[-2:] == ["1,500.0", "50%"]  # 24 MB in 0.016 ms; the least 8 B a cell at 3,000 GB/s takes 0.008 ms
    block = text.split("speed of light at 3,000,000 cells, seed 0 (* yours):\n")[1].splitlines()
    mine = next(line for line in block if line.startswith("* my_step.cu"))
    assert "1500.0 GB/s   50%" in mine and "GFLOP/s" in mine and mine.rstrip().endswith("50%")
    builtin = next(line for line in block if line.strip().startswith("global"))
    assert "2400.0 GB/s   80%" in builtin and "memory" in builtin  # 8 B a cell in 0.01 ms: 80% of the copy peak
    temporal = next(line for line in block if line.strip().startswith("temporal"))
    assert f"{CELLS * 8 / 8 / 0.01e-3 / 1e9:.1f} GB/s" in temporal  # k = 8 steps a launch: 1 B a cell
    record = json.loads(out.read_text())
    figures = record["cases"][0]["speed_of_light"]
    assert figures["my_step.cu"]["gbs"] == pytest.approx(1500.0) and figures["my_step.cu"]["copy_pct"] == 50.0
    assert figures["my_step.cu"]["sol_pct"] == pytest.approx(50.0) and figures["global"]["gbs"] == pytest.approx(2400)
    assert record["compiled"]["registers"] > 0 and record["compiled"]["occupancy"]["fraction"] == 1.0


def test_without_peaks_check_gives_rates_only(my_step, capsys, monkeypatch):
    monkeypatch.setattr(user_commands, "Sandbox", RatedBox())
    monkeypatch.setattr(speed, "device_peaks", lambda device=0: None)
    assert (
        main.main(["check", "heat", "--kernel-file", str(my_step), "--sizes", str(CELLS), "--seeds", "1", "--quiet"])
        == 0
    )
    text = capsys.readouterr().out
    head = next(line for line in text.splitlines() if line.split()[:1] == ["size"])
    assert head.split()[-1] == "GB/s" and "limit" not in head
    row = next(line for line in text.splitlines() if line.split()[:1] == ["3,000,000"]).split()
    assert row[-1] == "1,500.0"
    assert "rates only (no peaks on the CPU: no % or bound)" in text and "% of limit" not in text


def test_bench_gives_the_figures_of_every_variant(my_step, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(user_commands, "Sandbox", RatedBox())
    monkeypatch.setattr(speed, "device_peaks", lambda device=0: PEAKS)
    out = tmp_path / "bench.json"
    assert main.main(["bench", "heat", "--kernel-file", str(my_step), "--json", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "speed of light (* yours):" in text and "compiled for sm_90:" in text
    mine = next(line for line in text.splitlines() if line.strip().startswith("* my_step.cu"))
    assert "1500.0 GB/s   50%" in mine
    results = {r["variant"]: r for r in json.loads(out.read_text())["results"]}
    assert results["my_step.cu"]["speed_of_light"]["sol_pct"] == pytest.approx(50.0)
    assert results["shared"]["speed_of_light"]["copy_pct"] == pytest.approx(80.0)


# --- every replaceable stage has a model the speed of light reads ------------------------------------------------
EVERY_STAGE = [(s, stage) for s in SCENES.values() for stage in s.user_stages]


@pytest.mark.parametrize("spec, stage", EVERY_STAGE, ids=[f"{s.name} {st.name}" for s, st in EVERY_STAGE])
def test_every_user_stage_has_a_model_under_its_name(spec, stage):
    adapter = user_source.load_object(stage.adapter)()
    size = adapter.sizes()[-2]
    inputs = adapter.inputs(size, 0)
    expected = adapter.expected(inputs)
    for variant in ("my_kernel.cu", *adapter.builtin):
        model = models(spec, adapter.model_setup(inputs, variant, adapter.default_block(), expected))[stage.name]
        assert model.bytes_actual > 0 and model.units > 0 and model.flops >= 0
    found = speed.perfs(
        spec, stage, adapter, inputs, adapter.default_block(), {"my_kernel.cu": 0.5, "x": None}, PEAKS, expected
    )
    assert list(found) == ["my_kernel.cu"] and found["my_kernel.cu"].gbs > 0
    assert np.isfinite(speed.sol_pct(found["my_kernel.cu"]))


# --- on the GPU ------------------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_check_on_the_gpu_gives_percentages_and_the_devices_occupancy(my_step, tmp_path, capsys):
    out, sass = tmp_path / "check.json", tmp_path / "my_step.sass"
    code = main.main(
        [
            "check",
            "heat",
            "--kernel-file",
            str(my_step),
            "--sizes",
            str(CELLS),
            "--seeds",
            "1",
            "--json",
            str(out),
            "--sass",
            str(sass),
            "--quiet",
        ]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    record = json.loads(out.read_text())
    figures = record["cases"][0]["speed_of_light"]
    assert set(figures) >= {"my_step.cu", "global", "shared", "temporal"}
    mine = figures["my_step.cu"]
    # 24 MB fits the H200's L2: repeats back to back may pass the DRAM copy peak, so no upper bound here
    assert mine["gbs"] > 0 and mine["copy_pct"] > 0 and mine["sol_pct"] > 0
    assert record["compiled"]["occupancy"]["limits"].startswith("this GPU (")
    assert "% limit" in printed.out and "compiled for sm_" in printed.out
    if codegen.sass_tool() is not None:
        assert sass.exists() and "step" in sass.read_text()
    else:
        assert "neither cuobjdump nor nvdisasm" in printed.err


@pytest.mark.gpu
@pytest.mark.parametrize("spec, stage", EVERY_STAGE, ids=[f"{s.name} {st.name}" for s, st in EVERY_STAGE])
def test_bench_of_every_template_on_the_gpu_has_figures_for_every_timed_variant(spec, stage, tmp_path, capsys):
    path = tmp_path / f"my_{stage.name}.cu"
    path.write_text(source_path(stage.template).read_text())
    out = tmp_path / "bench.json"
    assert (
        main.main(
            [
                "bench",
                spec.name,
                "--kernel-file",
                str(path),
                "--stage",
                stage.name,
                "--repeats",
                "5",
                "--json",
                str(out),
                "--quiet",
            ]
        )
        == 0
    ), capsys.readouterr().err
    results = json.loads(out.read_text())["results"]
    timed = [r for r in results if r["median_ms"]]
    assert timed and all(r["speed_of_light"]["gbs"] > 0 and r["speed_of_light"]["copy_pct"] is not None for r in timed)
