"""The course-compatible particles command and checker: output format, exit codes."""

import os
import re

import pytest


@pytest.fixture(scope="module")
def run_1000(cli, tmp_path_factory):
    path = tmp_path_factory.mktemp("particles") / "cpu.out"
    out = cli("particles", "-n", "1000", "-s", "1", "-o", str(path))
    assert out.returncode == 0, out.stderr
    return out, path


def test_summary_line_like_the_starter(run_1000):
    out, _ = run_1000
    line = out.stdout.splitlines()[0]
    match = re.fullmatch(
        r"n = 1000, simulation time = [0-9.e+-]+ seconds, absmin = (\d\.\d{6}), "
        r"absavg = (\d\.\d{6})",
        line,
    )
    assert match, line
    assert 0.6 < float(match[1]) < 0.9 and 0.9 < float(match[2]) < 1.0
    assert len(out.stdout.splitlines()) == 1, "no warnings for a correct run"


def test_output_file_format(run_1000):
    _, path = run_1000
    lines = path.read_text().split("\n")
    n, size = lines[0].split()
    assert n == "1000" and size == "0.707107"  # sqrt(0.0005 * 1000), %g
    frames = (len(lines) - 2) // 1001
    assert frames == 100, "a frame after steps 0, 10, ..., 990"
    for f in range(100):
        block = lines[1 + f * 1001 : 1 + (f + 1) * 1001]
        assert block[-1] == "", "an empty line closes each frame"
        for ln in block[:-1]:
            x, y = ln.split(" ")
            assert x == f"{float(x):g}" and y == f"{float(y):g}", ln
    assert lines[-1] == ""


def test_checker_passes_identical_and_fails_perturbed(cli, run_1000, tmp_path):
    _, path = run_1000
    same = cli("particles-check", str(path), str(path))
    assert same.returncode == 0 and "PASS" in same.stdout
    lines = path.read_text().split("\n")
    for i in range(1, 1 + 1000 * 60, 7):  # nudge particles in the early frames
        if lines[i]:
            x, y = lines[i].split()
            lines[i] = f"{float(x) + 1e-4:g} {y}"
    moved = tmp_path / "moved.out"
    moved.write_text("\n".join(lines))
    out = cli("particles-check", str(path), str(moved))
    assert out.returncode == 1 and "FAIL" in out.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["particles", "-n", "0"], "must be positive"),
        (["particles", "-n", "-5"], "must be positive"),
        (["particles", "--init", "2019"], "unknown init"),
        (["particles-check", "/nonexistent/a.out", "/nonexistent/b.out"], "does not exist"),
    ],
)
def test_bad_input_exits_2(cli, args, message):
    out = cli(*args)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_malformed_files_exit_2(cli, run_1000, tmp_path):
    _, good = run_1000
    for text, message in (
        ("hello\n", "expected 'n size'"),
        ("3 0.1\n0 0\n1 1\n", "ends after"),
        ("2 0.1\n0 0\nx y\n\n", "not numbers"),
    ):
        bad = tmp_path / "bad.out"
        bad.write_text(text)
        out = cli("particles-check", str(good), str(bad))
        assert out.returncode == 2 and message in out.stderr, (text, out.stderr)
    short = tmp_path / "short.out"
    short.write_text("1000 0.707107\n" + "0 0\n" * 1000 + "\n")
    out = cli("particles-check", str(good), str(short))
    assert out.returncode == 2 and "differ in shape" in out.stderr


def test_unwritable_output_writes_nothing(cli, tmp_path):
    target = tmp_path / "missing" / "out.txt"
    out = cli("particles", "-n", "100", "-o", str(target))
    assert out.returncode == 2 and not target.parent.exists()
    assert not any(name.endswith(".partial") for name in os.listdir(tmp_path))
