"""Your kernel under the real compute-sanitizer (needs a GPU and the CUDA toolkit's compute-sanitizer;
skipped without them): racecheck names the planted tile race at its lines, memcheck a write past the end
of `tout` and a read far outside any allocation at theirs (reported before the GPU faults: the access is
never made), and heat's template is clean under each tool."""

from __future__ import annotations

import json

import pytest
from test_user_kernels import heat_source

import main
from sim.userkernel import faults, sanitizer

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(sanitizer.find() is None, reason="needs compute-sanitizer (the CUDA toolkit)"),
]


def sanitized(tmp_path, capsys, name: str, tool: str, *extra: str):
    out = tmp_path / "sanitize.json"
    path = heat_source(name).path
    code = main.main(["check", "heat", "--kernel-file", str(path), "--sanitize", tool, "--json", str(out), *extra])
    return code, capsys.readouterr(), json.loads(out.read_text())


def places(record) -> set[tuple[int, str]]:
    return {(at["line"], at["severity"]) for finding in record["findings"] for at in finding["at"]}


def test_racecheck_names_the_tile_race_at_the_write_and_the_read(tmp_path, capsys):
    code, printed, record = sanitized(tmp_path, capsys, "tile_race", "racecheck")
    assert code == 1, printed.err
    races = [f for f in record["findings"] if f["category"] == "race"]
    assert races, printed.out
    lines = {at["line"] for f in races for at in f["at"]}
    assert lines & {18, 19, 20, 21, 22}, "a write into the tile"
    assert lines & {31, 32}, "a read of the neighbours from the tile"
    assert "heat_tile_race.cu:32" in printed.out or "heat_tile_race.cu:31" in printed.out
    assert "tile[ty][tx + 1]" in printed.out or "tile[ty + 1][tx]" in printed.out


def test_memcheck_names_the_write_past_the_end_of_tout_at_its_line(tmp_path, capsys):
    code, printed, record = sanitized(tmp_path, capsys, "past_end", "memcheck")
    assert code == 1, printed.err
    assert (39, "error") in places(record), printed.out
    assert "past the end of `tout`" in printed.out and "tout[at + 2 * stride] = 0.0f;" in printed.out


@pytest.mark.gpu_fault  # should memcheck not stop it first, this read faults the GPU: run it last
def test_memcheck_reports_a_read_far_outside_any_allocation_instead_of_a_fault(tmp_path, capsys):
    earlier = faults.seen()  # a fault test before this one in the same process
    faults.forget()
    try:
        code, printed, record = sanitized(tmp_path, capsys, "illegal_address", "memcheck")
        assert code == 1, printed.err
        assert (31, "error") in places(record), printed.out
        assert "is out of bounds" in printed.out and faults.seen() is None, "the check itself saw no fault"
    finally:
        if earlier is not None:
            faults.report(earlier)


@pytest.mark.parametrize("tool", sanitizer.TOOLS)
def test_the_template_is_clean_under_every_tool(tmp_path, capsys, tool):
    code, printed, record = sanitized(tmp_path, capsys, "template", tool)
    assert code == 0, printed.out + printed.err
    assert record["clean"] and record["findings"] == [] and record["size"] == 7000
    assert printed.out.rstrip().endswith(f"none found ({sanitizer.WHAT[tool]})")
