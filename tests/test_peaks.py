"""The device's peaks: measured once per device (name, driver, clocks) and cached, the datasheet's where no
measurement can be made, each figure saying where it came from; the benchmark's device fingerprint."""

import json

import pytest

from sim.gpu import peaks
from sim.gpu.peaks import Peaks

H100 = {
    "name": "NVIDIA H100 80GB HBM3",
    "driver": "550.54.15",
    "sm_clock_mhz": 1980,
    "mem_clock_mhz": 2619,
    "ecc": "Enabled",
}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(peaks, "cache_dir", lambda: tmp_path / "peaks")
    return tmp_path / "peaks"


def measured(device, facts):
    measured.calls += 1
    return Peaks(
        facts["name"],
        2900.0,
        60_000.0,
        30_000.0,
        52.0,
        {name: f"measured on {facts['name']}" for name in ("copy", "fp32", "fp64", "link")},
    )


def test_measured_once_then_read_from_the_cache(cache):
    measured.calls = 0
    first = peaks.device_peaks(0, H100, measured)
    again = peaks.device_peaks(0, H100, measured)
    assert measured.calls == 1 and again == first and again.copy_gbs == 2900.0
    files = list(cache.iterdir())
    assert [f.name for f in files] == ["NVIDIA-H100-80GB-HBM3_550.54.15_sm1980_mem2619.json"]
    assert json.loads(files[0].read_text())["sources"]["copy"] == "measured on NVIDIA H100 80GB HBM3"


def test_a_new_driver_or_clock_measures_again(cache):
    measured.calls = 0
    peaks.device_peaks(0, H100, measured)
    peaks.device_peaks(0, {**H100, "driver": "560.28.03"}, measured)
    peaks.device_peaks(0, {**H100, "sm_clock_mhz": 1755}, measured)
    assert measured.calls == 3 and len(list(cache.iterdir())) == 3


def test_a_damaged_cache_file_measures_again(cache):
    measured.calls = 0
    cache.mkdir()
    (cache / f"{peaks.device_key(H100)}.json").write_text('{"device": "cut')
    assert peaks.device_peaks(0, H100, measured).copy_gbs == 2900.0 and measured.calls == 1
    assert peaks.device_peaks(0, H100, measured).copy_gbs == 2900.0 and measured.calls == 1  # now cached


def failing(device, facts):
    raise RuntimeError("out of memory")


def test_no_measurement_falls_back_to_the_datasheet_uncached(cache, capsys):
    found = peaks.device_peaks(0, H100, failing)
    assert (found.copy_gbs, found.fp32_gflops, found.fp64_gflops) == (3350.0, 67_000.0, 34_000.0)
    assert found.sources["copy"] == "documented: H100 SXM datasheet"
    assert "measuring failed (RuntimeError: out of memory)" in capsys.readouterr().err
    assert not cache.exists()  # the next process measures again
    h200 = peaks.device_peaks(0, {**H100, "name": "NVIDIA H200"}, failing)
    assert h200.copy_gbs == 4800.0 and h200.sources["fp64"] == "documented: H200 datasheet"
    assert peaks.device_peaks(0, {**H100, "name": "NVIDIA H100 PCIe"}, failing).copy_gbs == 2000.0
    assert peaks.device_peaks(0, {**H100, "name": "NVIDIA A100-SXM4-40GB"}, failing) is None


def test_a_cache_that_cannot_be_written_still_gives_the_figures(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setattr(peaks, "cache_dir", lambda: blocker / "peaks")
    measured.calls = 0
    assert peaks.device_peaks(0, H100, measured).copy_gbs == 2900.0
    assert "peaks: not cached" in capsys.readouterr().err


def test_flop_peaks_per_kind_and_source_lines():
    found = Peaks("x", 3000.0, 60_000.0, 30_000.0, 50.0, {"copy": "measured here"})
    assert found.flop_peak("fp32") == 60_000.0 and found.flop_peak("fp64") == 30_000.0
    assert found.flop_peak("fp64-tensor") == 60_000.0 and found.flop_peak("int") == 15_000.0
    lines = found.source_lines()
    assert lines[0] == "copy 3,000 GB/s: measured here" and lines[1] == "fp32 60.0 TFLOP/s: unknown"
    # the schedulers' issue rate, from the FP32 FMA rate: 60 TFLOP/s / (2 FLOP x 32 lanes) = 937.5 G warp
    # instructions a second (an H200 at 1980 MHz: 132 SMs x 4 x 1.98 GHz = 1045 G, 66.9 TFLOP/s)
    assert found.issue_ginst == 937.5
    assert lines[-2] == "issue 937.5 G warp instructions/s: the fp32 figure / 64"
    # L1's data pipes, one wavefront an SM and clock against 128 FMAs: 60 TFLOP/s / 256 = 234.4 G a second
    assert found.l1_gwave == 234.375
    assert lines[-1] == "L1 234.4 G wavefronts/s: the fp32 figure / 256"


def test_nvidia_smi_line_and_device_key():
    facts = peaks.parse_smi("NVIDIA H100 80GB HBM3, 550.54.15, 1980, 2619, Enabled")
    assert facts == H100
    assert peaks.parse_smi("NVIDIA H200, 560.1, [N/A], 3201, Disabled")["sm_clock_mhz"] is None
    assert peaks.device_key({"name": "a/b c", "driver": "1.2"}) == "a-b-c_1.2_smNone_memNone"


def test_fingerprint_without_a_gpu_names_the_processor():
    found = peaks.fingerprint("cpu", "abc123")
    assert found["kind"] == "cpu" and found["name"].startswith("CPU: ") and found["cores"] >= 1
    assert found["commit"] == "abc123"


def test_a_gpu_fingerprint_that_cannot_be_read_says_so(monkeypatch):
    import subprocess
    import sys

    def no_smi(*args, **kwargs):
        raise FileNotFoundError("nvidia-smi")

    monkeypatch.setattr(subprocess, "run", no_smi)
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    found = peaks.fingerprint("gpu", "abc")
    assert found["kind"] == "gpu" and found["name"] == "unknown GPU" and found["driver"] == "unknown"
    assert "import of cupy halted" in found["unread"] and found["commit"] == "abc"
    assert found["host_cpu"], "the host's processor is named even so"


# --- on a GPU --------------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_measured_peaks_are_plausible_for_the_device():
    facts = peaks.gpu_facts(0)
    found = peaks.measure_peaks(0, facts)
    assert found.device == facts["name"] and all(s.startswith("measured ") for s in found.sources.values())
    assert found.fp64_gflops < found.fp32_gflops
    if "H100" in facts["name"] or "H200" in facts["name"]:
        assert 1000.0 < found.copy_gbs < 5000.0
        assert 30_000.0 < found.fp32_gflops < 80_000.0
        assert 15_000.0 < found.fp64_gflops < 40_000.0
        assert 10.0 < found.link_gbs < 80.0


@pytest.mark.gpu
def test_device_facts_and_fingerprint_on_a_gpu():
    facts = peaks.gpu_facts(0)
    assert facts["name"] and facts["driver"] and facts["ecc"] in ("Enabled", "Disabled", "N/A")
    found = peaks.fingerprint("gpu", "abc")
    assert found["kind"] == "gpu" and found["name"] == facts["name"] and found["commit"] == "abc"
