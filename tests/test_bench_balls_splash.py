"""bench/balls_splash.py's lines: a line every EVERY frames and the last, each with the pass's figures."""

from __future__ import annotations

import re

import bench_scripts

splash = bench_scripts.load("balls_splash")

LINE = re.compile(r"frame +(\d+) step +(\d+) n +(\d+) ms +[\d.]+ max +[\d.]+ proximity +([\d.]+) tests/ball +([\d.]+)$")


def test_a_line_every_few_frames_and_the_last():
    found = [LINE.match(line) for line in splash.lines(frames=12, n=3000, every=5, backend="cpu")]
    assert all(found)
    assert [int(m.group(1)) for m in found] == [0, 5, 10, 11]
    assert [int(m.group(2)) for m in found] == [6, 36, 66, 72], "six steps a frame"
    assert all(int(m.group(3)) <= 3000 for m in found) and all(float(m.group(5)) > 1 for m in found)
    assert all(float(m.group(4)) > 0 for m in found), "the proximity stage's own time"


def test_without_a_tree_it_says_how_to_run_it(capsys):
    assert splash.main([]) == 2
    assert "TREE [FRAMES] [N] [EVERY] [BACKEND]" in capsys.readouterr().err
