"""Your kernel under compute-sanitizer (sim.userkernel.sanitizer, sanitize_check): the tool found or not and
its command line; ``check --sanitize`` end to end with a stand-in compute-sanitizer that writes a recorded
report (tests/data/sanitizer/); the bound and the stop leaving nothing running; the background run the
viewer starts; the sanitized run's outputs. No GPU needed: the reports' reading is in
test_user_sanitizer.py, the real tool's runs in test_user_sanitizer_gpu.py."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from pathlib import Path

import pytest
from test_user_kernels import heat_source
from test_user_sanitizer import SAMPLES, sample

import main
from sim.userkernel import sanitizer
from sim.userkernel.sanitizer import Background, Outcome, SanitizerError
from sim.userkernel.sanitizer_report import parse

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")

SYSTEM_PATH = os.environ.get("PATH", "/usr/bin:/bin")  # for the stand-in tool's own commands


# --- finding the tool and its command line --------------------------------------------------------------------
def fake_tool(folder: Path, body: str) -> Path:
    """An executable named compute-sanitizer in ``folder``: a shell script whose --log-file is $log."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "compute-sanitizer"
    path.write_text(
        f'#!/bin/sh\nPATH="{SYSTEM_PATH}"\n'
        'while [ $# -gt 0 ]; do case "$1" in --log-file) log="$2"; shift;; esac; shift; done\n' + body
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def no_toolkit(monkeypatch, tmp_path):
    """No compute-sanitizer anywhere find() looks."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(sanitizer, "TOOLKIT_BIN", str(tmp_path / "no-cuda" / "bin"))


def test_the_tool_is_found_on_path_in_cuda_home_or_in_the_toolkits_folder(no_toolkit, monkeypatch, tmp_path):
    assert sanitizer.find() is None
    home = fake_tool(tmp_path / "cuda" / "bin", "exit 0\n")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    assert sanitizer.find() == str(home)
    on_path = fake_tool(tmp_path / "path", "exit 0\n")
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    assert sanitizer.find() == str(on_path)


def test_the_command_line_has_the_tool_the_log_the_bound_and_memcheck_pads_allocations():
    memcheck = sanitizer.arguments("/cuda/bin/compute-sanitizer", "memcheck", "/tmp/log", 180, 20)
    assert memcheck == [
        "/cuda/bin/compute-sanitizer",
        "--tool",
        "memcheck",
        "--print-limit",
        "20",
        "--show-backtrace",
        "device",
        "--log-file",
        "/tmp/log",
        "--launch-timeout",
        "180",
        "--target-processes",
        "application-only",
        "--destroy-on-device-error",
        "kernel",
        "--padding",
        str(sanitizer.PADDING),
    ]
    racecheck = sanitizer.arguments("cs", "racecheck", "/tmp/log")
    assert "--padding" not in racecheck and racecheck[1:3] == ["--tool", "racecheck"]
    with pytest.raises(ValueError, match="memcheck, racecheck, synccheck, initcheck"):
        sanitizer.arguments("cs", "leakcheck", "/tmp/log")


# --- check --sanitize end to end, with a stand-in tool ----------------------------------------------------------
def check(argv, capsys):
    try:
        code = main.main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr()


def test_check_sanitize_without_the_tool_says_how_to_get_it_in_one_line_and_exits_2(no_toolkit, capsys):
    path = heat_source("tile_race").path
    code, printed = check(["check", "heat", "--kernel-file", str(path), "--sanitize"], capsys)
    assert code == 2 and printed.out == ""
    assert printed.err == f"kernel-lab check: {sanitizer.MISSING}\n"
    assert "CUDA toolkit" in printed.err and "CUDA_HOME" in printed.err


def test_check_sanitize_refuses_a_tool_it_does_not_know(capsys):
    path = heat_source("tile_race").path
    code, printed = check(["check", "heat", "--kernel-file", str(path), "--sanitize", "leakcheck"], capsys)
    assert code == 2 and "invalid choice: 'leakcheck'" in printed.err


def test_check_sanitize_prints_each_race_at_the_users_lines_and_exits_1(no_toolkit, monkeypatch, tmp_path, capsys):
    fake_tool(tmp_path / "bin", f'cat "{SAMPLES / "racecheck_tile_race.txt"}" > "$log"\n')
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    src = heat_source("tile_race")
    out = tmp_path / "sanitize.json"
    code, printed = check(
        ["check", "heat", "--kernel-file", str(src.path), "--sanitize", "racecheck", "--json", str(out)], capsys
    )
    assert code == 1, printed.err
    assert printed.err.startswith(
        f"check --sanitize racecheck: {src.name} once under compute-sanitizer on one "
        "small case (7,000 cells, seed 0, block 32x8; up to 180 s)"
    )
    assert f"{src.name}:18: error: racecheck: this write races with the read at line 32 (1,344 hazards)" in printed.out
    assert "    const float d2tdy2 = tile[ty][tx + 1] - 2 * t + tile[ty + 2][tx + 1];" in printed.out
    assert printed.out.rstrip().endswith("3 hazards found")
    record = json.loads(out.read_text())
    assert (record["tool"], record["size"], record["seed"], record["block"], record["clean"]) == (
        "racecheck",
        7000,
        0,
        [32, 8],
        False,
    )
    assert [a["line"] for a in record["findings"][0]["at"]] == [18, 32]


def test_check_sanitize_on_a_clean_report_says_none_found_and_exits_0(no_toolkit, monkeypatch, tmp_path, capsys):
    fake_tool(tmp_path / "bin", f'cat "{SAMPLES / "memcheck_clean.txt"}" > "$log"\n')
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    path = heat_source("template").path
    code, printed = check(["check", "heat", "--kernel-file", str(path), "--sanitize", "--sizes", "1073,9"], capsys)
    assert code == 0, printed.err
    assert "on one small case (9 cells, seed 0, block 32x8" in printed.err
    assert printed.out.rstrip().endswith("none found (out-of-bounds and misaligned accesses)")


def test_a_kernel_that_does_not_compile_is_not_run_under_the_tool(no_toolkit, monkeypatch, tmp_path, capsys):
    ran = tmp_path / "ran"
    fake_tool(tmp_path / "bin", f'touch "{ran}"\n')
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    broken = tmp_path / "broken.cu"
    broken.write_text(heat_source("template").text.replace("tout[at] = t + tfac *", "tout[at] = t + tfacc *"))
    code, printed = check(["check", "heat", "--kernel-file", str(broken), "--sanitize"], capsys)
    assert code == 2 and "does not compile" in printed.err and not ran.exists()


# --- bounded, and nothing left running ----------------------------------------------------------------------------
def gone(pid: int, wait_s: float = 5.0) -> bool:
    """No such process, or one killed and not yet reaped (an orphan's zombie waits for init), within
    ``wait_s`` (a SIGKILL takes effect when the process is next scheduled)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


@pytest.mark.parametrize("how", ["limit", "stop"])
def test_a_run_past_its_limit_or_stopped_is_killed_with_everything_it_started(tmp_path, how):
    pids = tmp_path / "pids"
    tool = fake_tool(tmp_path / "bin", f'echo $$ > "{pids}"\nsleep 60 &\necho $! >> "{pids}"\nwait\n')
    stop = threading.Event()
    if how == "stop":
        threading.Timer(1.0, stop.set).start()
    started = time.monotonic()
    with pytest.raises(SanitizerError) as caught:
        sanitizer.run(
            heat_source("template"),
            {},
            (32, 8),
            "memcheck",
            limit_s=1.0 if how == "limit" else 30,
            stop=stop,
            exe=str(tool),
        )
    assert caught.value.kind == ("timeout" if how == "limit" else "stopped")
    assert time.monotonic() - started < 10
    if how == "limit":
        assert "did not finish within 1 s; it was stopped" in str(caught.value)
    assert all(gone(int(pid)) for pid in pids.read_text().split())


def test_the_background_run_hands_over_its_outcome_or_its_error():
    report = parse(sample("memcheck_clean"))
    release = threading.Event()

    def runner(source, inputs, block, tool, stop):
        release.wait(10)
        if tool == "racecheck":
            raise SanitizerError("no-gpu", "no GPU to run the kernel on: none here")
        return Outcome(tool, report)

    box, src = Background(runner), heat_source("tile_race")
    assert box.start(src, {}, (32, 8), "memcheck", size=7000) and box.running
    assert not box.start(src, {}, (32, 8), "racecheck"), "one run at a time"
    release.set()
    box._thread.join(10)
    assert box.outcome.tool == "memcheck" and box.error == "" and box.size == 7000
    assert box.start(src, {}, (32, 8), "racecheck")
    box._thread.join(10)
    assert box.outcome is None and box.error == "no GPU to run the kernel on: none here"
    report = parse(sample("racecheck_tile_race"))
    box = Background(lambda *args, stop: Outcome("racecheck", report))
    box.start(src, {}, (32, 8), "racecheck")
    box._thread.join(10)
    assert [kind for kind, _ in box.lines] == ["error", "error", "warning"]
    assert box.lines[0][1].startswith(f"{src.name}:18: error: racecheck: this write races")


def test_a_cancelled_background_run_reports_nothing():
    def runner(source, inputs, block, tool, stop):
        stop.wait(10)
        raise SanitizerError("stopped", "the sanitized run was stopped")

    box = Background(runner)
    box.start("src", {}, (32, 8), "memcheck")
    box.cancel()
    assert not box.running and box.error == "" and box.outcome is None


def test_the_sanitized_runs_outputs_have_no_pads_and_initcheck_leaves_them_unwritten():
    import numpy as np

    from sim.userkernel.guard import Guarded, sentinel

    poisoned = Guarded(np, "tout", (2, 3), np.float32, "poison", pad=0)
    assert poisoned.whole.size == 6 and np.isnan(poisoned.body).all() and poisoned.overflow() == []
    assert np.array_equal(poisoned.body.view(np.uint32), np.full((2, 3), sentinel(np.float32)).view(np.uint32))
    assert Guarded(np, "tout", (2, 3), np.float32, "unset", pad=0).whole.size == 6
    with pytest.raises(ValueError, match="an unset output has no pads"):
        Guarded(np, "tout", (2, 3), np.float32, "unset")
