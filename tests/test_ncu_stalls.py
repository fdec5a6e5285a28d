"""bench/ncu_stalls.py: the summary of Nsight Compute's full set over a stage window (bench/ncu_stalls.sh)."""

from __future__ import annotations

import bench_scripts

READING = bench_scripts.BENCH / "results/ncu-h200-f30d428/particles.forces_move.raw.csv"  # ncu 2025.3.1, an H200


def stalls():
    return bench_scripts.load("ncu_stalls")


def test_the_summary_of_a_real_raw_page_names_the_limits_and_the_stalls(capsys):
    assert stalls().main([str(READING)]) == 0
    lines = capsys.readouterr().out.splitlines()
    figures = {line[:36].strip(): line[36:].strip() for line in lines if line.startswith("  ") and "  " in line[2:]}
    assert lines[:2] == ["== particles.forces_move", "kernel step"]
    assert figures["issue slots busy, %"] == "65" and figures["L1 data pipe busy, %"] == "73"
    assert figures["DRAM busy, %"] == "36" and figures["occupancy, % of warps"] == "93"
    assert figures["registers a thread"] == "32" and figures["active lanes a warp instruction"] == "19.0"
    stalled = [line.split() for line in lines if line.startswith("    ") and line.strip().endswith("%")]
    reasons = [row[0] for row in stalled]
    assert reasons[0] == "long_scoreboard" and stalled[0][1:] == ["13.69", "61%"]
    assert len(reasons) == 8 and len(set(reasons)) == 8  # the eight largest, largest first
    assert [float(row[1]) for row in stalled] == sorted((float(row[1]) for row in stalled), reverse=True)


def test_the_hot_instructions_come_from_the_source_page_by_stall_samples(tmp_path):
    page = tmp_path / "k.sass.csv"
    header = '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed"'
    page.write_text(
        '"Kernel Name","step",\n'
        + header
        + "\n"
        + '"0x10","  LDG.E R2, desc[UR4][R2.64]","30","5"\n'
        + '"0x20","  DADD R4, -R2, R6","60","5"\n'
        + '"0x30","  EXIT","10","5"\n'
    )
    lines = stalls().hot_instructions(page, count=2)
    assert lines[0] == "instructions with the most stall samples (of 100):"
    assert "60.0%" in lines[1] and "DADD" in lines[1] and "30.0%" in lines[2] and "LDG" in lines[2]
    assert len(lines) == 3
    empty = tmp_path / "none.sass.csv"
    empty.write_text("")
    assert stalls().hot_instructions(empty) == ["(no SASS rows in none.sass.csv)"]
