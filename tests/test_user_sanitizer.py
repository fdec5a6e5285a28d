"""Your kernel's compute-sanitizer report (sim.userkernel.sanitizer_report): the tool's text reports read
from recorded samples (tests/data/sanitizer/, in the shapes the Compute Sanitizer manual documents), each
finding placed at the user's file:line with the line's text and an address named by buffer, the tool's own
errors, and the lines of the CUDA 13 toolkit's release. No GPU needed: the tool found, ``check --sanitize``
and the bounded run are in test_user_sanitizer_tool.py, the real tool's runs in test_user_sanitizer_gpu.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_user_kernels import heat_source

from sim.userkernel import sanitizer, sanitizer_report
from sim.userkernel.sanitizer import SanitizerError
from sim.userkernel.sanitizer_report import Nearest, parse, placed

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")

SAMPLES = Path(__file__).parent / "data" / "sanitizer"
TOUT = 0x7F3C5E000200
BUFFERS = {"tin": (0x7F3C5E010000, 28_000), "tout": (TOUT, 28_000)}


def sample(name: str) -> str:
    return (SAMPLES / f"{name}.txt").read_text()


def lines_of(diagnostics) -> list[str]:
    return [str(d) for d in diagnostics]


# --- reading the report -----------------------------------------------------------------------------------
def test_a_race_is_read_with_both_sides_and_placed_at_the_lines_of_the_users_file():
    report = parse(sample("racecheck_tile_race"))
    assert report.summary == 3 and report.problems == []
    assert [(f.category, f.severity) for f in report.findings] == [
        ("race", "error"),
        ("race", "error"),
        ("race", "warning"),
    ]
    first = report.findings[0]
    assert [(s.file, s.line, s.access, s.hazards) for s in first.sites] == [
        ("heat_tile_race.cu", 18, "write", None),
        ("heat_tile_race.cu", 32, "read", 1344),
    ]
    src = heat_source("tile_race")  # the tool strips paths: the base name is the user's file
    shown = lines_of(placed(first, src))
    assert shown[0] == (
        f"{src.name}:18: error: racecheck: this write races with the read at line 32 (1,344 hazards): "
        "nothing orders them (a __syncthreads() between them, or __syncwarp() within a warp)\n"
        "    tile[ty + 1][tx + 1] = tin[at];"
    )
    assert shown[1] == (
        f"{src.name}:32: note: racecheck: the read racing with the write at line 18\n"
        "    const float d2tdy2 = tile[ty][tx + 1] - 2 * t + tile[ty + 2][tx + 1];"
    )


def test_an_older_report_with_full_paths_and_several_readers_is_the_users_file_at_that_path(tmp_path):
    kernel = tmp_path / "heat_tile_race.cu"
    kernel.write_text(heat_source("tile_race").text)
    report = parse(sample("racecheck_full_paths").replace("/home/ada/course/heat_tile_race.cu", str(kernel)))
    (race,) = report.findings
    assert [(s.line, s.access, s.hazards) for s in race.sites] == [
        (18, "write", None),
        (32, "read", 6144),
        (31, "read", 512),
    ]
    from sim.heat import SPEC
    from sim.userkernel import source

    shown = lines_of(placed(race, source.load(kernel, SPEC)))
    assert shown[0].startswith(
        f"{kernel}:18: error: racecheck: this write races with the read at line 32, the read at line 31 (6,656 hazards)"
    )
    assert shown[2] == (
        f"{kernel}:31: note: racecheck: the read racing with the write at line 18\n"
        "    const float d2tdx2 = tile[ty + 1][tx] - 2 * t + tile[ty + 1][tx + 2];"
    )


def test_a_write_past_the_end_names_the_buffer_it_missed_and_a_failed_call_is_no_hazard():
    report = parse(sample("memcheck_past_end"))
    assert report.summary == 3 and [f.category for f in report.findings] == ["memory", "memory", "api"]
    assert len(report.hazards) == 2
    first = report.findings[0]
    assert (first.thread, first.block, first.address, first.problem) == (
        "(1,4,0)",
        "(0,8,0)",
        0x7F3C5E006F64,
        "is out of bounds",
    )
    assert first.nearest == Nearest(5, "after", TOUT, 28_000)
    src = heat_source("past_end")
    assert lines_of(placed(first, src, BUFFERS)) == [
        f"{src.name}:39: error: memcheck: invalid __global__ write of size 4 bytes by thread (1,4,0) in block (0,8,0): "
        "address 0x7f3c5e006f64 is out of bounds, 5 bytes past the end of `tout` (28,000 bytes)\n"
        "    if (j == nj - 2 && i <= 12) tout[at + 2 * stride] = 0.0f;  // planted: 12 values past the end"
    ]
    assert placed(report.findings[2], src) == []
    assert sanitizer_report.described(report.findings[2], src).startswith("CUDA API: Program hit CUDA_ERROR_LAUNCH")


def test_an_allocation_that_is_none_of_the_kernels_buffers_is_said_in_the_tools_words():
    report = parse(sample("memcheck_past_end"))
    text = sanitizer_report.buffer_text(report.findings[1], {"tin": (0x1000, 64)})
    assert text == "9 bytes after an allocation of 28,000 bytes at 0x7f3c5e000200 (not one of the kernel's buffers)"


def test_an_address_far_from_every_allocation_is_placed_against_the_nearest_buffer():
    (finding,) = parse(sample("memcheck_illegal_address")).findings
    assert finding.nearest is None and finding.address == 0x7F7C5E000000
    src = heat_source("illegal_address")
    (shown,) = lines_of(placed(finding, src, {"tin": (0x7F3C5E000000, 28_000), "tout": (0x7F3C5E007000, 28_000)}))
    far = 0x7F7C5E000000 - (0x7F3C5E007000 + 28_000) + 1
    assert shown.startswith(
        f"{src.name}:31: error: memcheck: invalid __global__ read of size 4 bytes by thread "
        f"(0,0,0) in block (0,0,0): address 0x7f7c5e000000 is out of bounds, {far:,} bytes past "
        "the end of `tout`"
    )
    assert shown.endswith("const float t = tin[at + (1LL << 40)];  // planted: far outside any allocation")


def test_device_frames_are_the_callers_and_a_shared_address_is_not_named_by_a_global_buffer(tmp_path):
    report = parse(sample("memcheck_helper_frames"))
    helper, shared = report.findings
    assert [(s.file, s.line) for s in helper.sites] == [("/tmp/work/my_step.cu", 12)]
    assert [(s.file, s.line) for s in helper.frames] == [("/tmp/work/my_step.cu", 30)]
    assert helper.nearest == Nearest(4, "before", 0x7F3C5E000000, 28_000)
    src = heat_source("template")  # another file: the place is said as reported, without a line's text
    shown = lines_of(placed(helper, src, {"tin": (0x7F3C5E000000, 28_000)}))
    assert shown == [
        "/tmp/work/my_step.cu:12: error: memcheck: invalid __global__ read of size 4 bytes by thread "
        "(0,0,0) in block (0,0,0): address 0x7f3c5dfffffc is out of bounds, 4 bytes before the start "
        "of `tin` (28,000 bytes)",
        "/tmp/work/my_step.cu:30: note: memcheck: called from here",
    ]
    assert lines_of(placed(shared, src, BUFFERS))[0].endswith("address 0x580 is out of bounds")


def test_synccheck_and_initcheck_reports():
    (sync,) = parse(sample("synccheck_divergent")).findings
    (init,) = parse(sample("initcheck_unwritten")).findings
    src = heat_source("template")
    assert lines_of(placed(sync, src)) == [
        "my_step.cu:25: error: synccheck: barrier error detected. Divergent "
        "thread(s) in block; thread (0,0,0) in block (0,0,0)"
    ]
    assert (init.category, init.address, init.problem) == ("init", TOUT + 20, "")
    assert lines_of(placed(init, src, BUFFERS))[0].endswith("address 0x7f3c5e000214, byte 20 of `tout`")


@pytest.mark.parametrize("name", ["memcheck_clean", "racecheck_clean"])
def test_a_clean_report_has_a_zero_summary_and_no_findings(name):
    report = parse(sample(name))
    assert (report.summary, report.findings, report.problems) == (0, [], [])


def test_the_tools_own_error_is_a_problem_and_a_report_without_a_summary_did_not_finish():
    report = parse(sample("no_attach"))
    assert report.summary is None and report.findings == []
    assert report.problems == [
        "Error: No attachable process found. compute-sanitizer timed-out. Default timeout "
        "can be adjusted with --launch-timeout. Awaiting target completion."
    ]
    with pytest.raises(SanitizerError) as caught:
        sanitizer._outcome("memcheck", sample("no_attach"), {}, "", 0)
    assert caught.value.kind == "failed" and "No attachable process found" in str(caught.value)


def test_lines_in_the_applications_own_output_are_not_read():
    text = "x = 3\n" + sample("synccheck_divergent") + "done: Error: not the tool's\n"
    report = parse(text)
    assert len(report.findings) == 1 and report.problems == []


CUDA13_PAST_END = """========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at step+0x420 in heat_past_end.cu:39
=========     by thread (1,4,0) in block (0,8,0)
=========     Access to 0x7fd1aca1db64 is out of bounds
=========     and is 5 bytes after the nearest allocation at 0x7fd1aca16e00 of size 28,000 bytes
=========
========= ERROR SUMMARY: 1 error
"""  # as compute-sanitizer of the CUDA 13 toolkit wrote it on an H200


def test_cuda_13s_access_to_line_is_read_as_the_address():
    (finding,) = parse(CUDA13_PAST_END).findings
    assert (finding.address, finding.problem) == (0x7FD1ACA1DB64, "is out of bounds")
    assert finding.nearest == Nearest(5, "after", 0x7FD1ACA16E00, 28_000)


def test_an_older_releases_lines_read_alike():
    older = sample("memcheck_past_end")
    newer = older.replace("Address 0x", "Access to 0x")
    assert newer != older
    assert [(f.address, f.problem, f.nearest) for f in parse(newer).findings] == [
        (f.address, f.problem, f.nearest) for f in parse(older).findings
    ]
