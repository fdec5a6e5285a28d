"""particles and particles-check against hostile outputs, options, signals and input files."""

import os
import pathlib
import signal
import stat
import subprocess
import sys
import time

import pytest
from process_time import CORES, signal_and_wait

ROOT = pathlib.Path(__file__).resolve().parent.parent
SMALL = ("particles", "-n", "100", "--steps", "10")


def leftovers(folder) -> list[str]:
    return [name for name in os.listdir(folder) if name.endswith(".partial")]


@pytest.fixture(scope="module")
def good(cli, tmp_path_factory):
    path = tmp_path_factory.mktemp("good") / "good.out"
    out = cli("particles", "-n", "200", "--steps", "100", "-o", str(path))
    assert out.returncode == 0, out.stderr
    return path


# --- outputs ------------------------------------------------------------------------------------------
def test_special_files_are_never_replaced(cli, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    targets = {"FIFO": fifo}
    try:
        os.mknod(tmp_path / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
        targets["character device"] = tmp_path / "null"
    except PermissionError:
        pass
    for kind, path in targets.items():
        mode = os.lstat(path).st_mode
        out = cli(*SMALL, "-o", str(path))
        assert out.returncode == 2 and kind in out.stderr and "Traceback" not in out.stderr
        assert os.lstat(path).st_mode == mode and out.stdout == "", "refused before the run"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("path, message", [("", "empty"), ("/proc/version", "cannot create")])
def test_unwritable_paths_exit_2(cli, path, message):
    out = cli(*SMALL, "-o", path)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr and out.stdout == ""


def test_planted_partial_names_are_not_followed(cli, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("secret")
    (tmp_path / "out.txt.partial").symlink_to(victim)
    (tmp_path / ".out.txt.partial").mkdir()
    out = cli(*SMALL, "-o", str(tmp_path / "out.txt"))
    assert out.returncode == 0 and "Traceback" not in out.stderr
    assert victim.read_text() == "secret" and (tmp_path / "out.txt").read_text().startswith("100 0.223607\n")
    assert sorted(leftovers(tmp_path)) == [".out.txt.partial", "out.txt.partial"]  # the planted ones, untouched
    assert (tmp_path / "out.txt.partial").is_symlink() and (tmp_path / ".out.txt.partial").is_dir()


def test_names_too_long_exit_2(cli, tmp_path):
    name_max = os.pathconf(tmp_path, "PC_NAME_MAX")
    longest = tmp_path / ("p" * name_max)
    assert cli(*SMALL, "-o", str(longest)).returncode == 0 and longest.is_file()
    out = cli(*SMALL, "-o", str(tmp_path / ("p" * (name_max + 1))))
    assert out.returncode == 2 and "too long" in out.stderr
    assert leftovers(tmp_path) == []


def test_output_larger_than_the_disk_is_refused_before_the_run(cli, small_disk):
    target = small_disk / "out.txt"
    target.write_text("previous")
    out = cli("particles", "-n", "1000", "--steps", "1000", "-o", str(target))
    assert out.returncode == 2 and "writes about" in out.stderr and out.stdout == ""
    assert target.read_text() == "previous"


def test_disk_full_during_the_run_exits_1_and_keeps_the_previous_file(cli, small_disk):
    target = small_disk / "out.txt"
    target.write_text("previous")
    filler = small_disk / "filler"
    filler.write_bytes(b"x" * 40_000)  # 20 kB left: the estimate (19.6 kB) fits, the file (about 25 kB) does not
    out = cli("particles", "-n", "140", "--steps", "100", "-o", str(target))
    assert out.returncode == 1 and "No space left" in out.stderr and "Traceback" not in out.stderr
    assert target.read_text() == "previous" and leftovers(small_disk) == []


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_signals_stop_the_run_and_keep_the_previous_file(tmp_path, sig, code):
    target = tmp_path / "out.txt"
    target.write_text("previous")
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), "particles", "-n", "2000000", "--steps", "1000", "-o", str(target)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGHUP)],
    )
    notice = proc.stderr.readline()
    assert "about" in notice and "Ctrl-C" in notice, notice
    deadline = time.time() + 60
    while not leftovers(tmp_path) and time.time() < deadline:  # wait for the run to start writing
        time.sleep(0.1)
    time.sleep(1.0)
    sent = time.perf_counter()
    after = signal_and_wait(proc, sig)
    assert proc.returncode == code
    assert after < CORES and time.perf_counter() - sent < 10.0
    assert target.read_text() == "previous" and leftovers(tmp_path) == []
    assert proc.stdout.read() == "" and "Traceback" not in proc.stderr.read()


# --- options --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, message",
    [
        (["--precision", "fp32"], "--precision applies to the GPU backend only"),
        (["--precision", "fp64"], "--precision applies to the GPU backend only"),
        (["--variant", "tiled"], "--variant applies to the GPU backend only"),
        (["--variant", "foo", "--precision", "fp32"], "--variant and --precision apply to the GPU backend only"),
        (["-s", "-1"], "-s/--seed"),
        (["-s", str(2**32)], "-s/--seed"),
        (["--seed", "99999999999999999999999"], "-s/--seed"),
        (["--init", "2019"], "unknown init"),
        (["-n", "1e13"], "of memory"),
    ],
)
def test_bad_options_exit_2(cli, args, message):
    out = cli(*SMALL, *args)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
    assert "Warning" not in out.stderr and out.stdout == ""


def test_largest_seed_runs(cli):
    out = cli(*SMALL, "-s", str(2**32 - 1))
    assert out.returncode == 0 and out.stdout.startswith("n = 100, ") and "Warning" not in out.stderr


# --- checker ------------------------------------------------------------------------------------------------
def test_checker_refuses_non_regular_files(cli, good, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for other in ("/dev/zero", str(fifo), str(tmp_path)):
        out = cli("particles-check", str(good), other)
        assert out.returncode == 2 and "not a regular file" in out.stderr and "Traceback" not in out.stderr


def edited(good, tmp_path, change) -> pathlib.Path:
    path = tmp_path / "edited.out"
    path.write_bytes(change(good.read_bytes()))
    return path


@pytest.mark.parametrize(
    "change, message, line",
    [
        (lambda t: t + b"\n", "an extra empty line after frame 9", 2012),
        (lambda t: t + b"junk\n", "junk after the last frame (9)", 2012),
        (lambda t: t + b"0.1 0.2\n", "frame 10 ends after 1 of 200 particles", 2012),
        (lambda t: t[:-1], "without the empty line after frame 9", 2010),
        (lambda t: t.replace(b"\n\n", b"\n\n\n", 1), "an extra empty line after frame 0", 203),
        (lambda t: b"200000000 0.1\n" + t.split(b"\n", 1)[1], "declares 200,000,000 particles", 1),
        (
            lambda t: b"\n".join(b"1e999 0" if i == 2 else ln for i, ln in enumerate(t.split(b"\n"))),
            "not a finite position",
            3,
        ),
        (lambda t: t[:30] + b"x" * 5000 + t[30:], "longer than 4096 bytes", 2),
    ],
)
def test_checker_errors_name_the_line(cli, good, tmp_path, change, message, line):
    out = cli("particles-check", str(good), str(edited(good, tmp_path, change)))
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert f"edited.out:{line}:" in out.stderr, out.stderr


def test_checker_streams_in_constant_memory(good, tmp_path):
    """Peak memory of the checker on a 48 MB file: about what it takes on a tiny one."""
    big = tmp_path / "big.out"
    n = 500_000
    line = b"1.23456 6.54321\n"
    with open(big, "wb") as f:
        f.write(b"%d 15.8114\n" % n)
        for _ in range(6):
            f.write(line * n + b"\n")

    def peak(path) -> int:
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "main.py"), "particles-check", str(path), str(path)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, proc.stderr.read()
        assert b"PASS" in proc.stdout.read()
        return usage.ru_maxrss * 1024

    assert peak(big) - peak(good) < 30_000_000  # ru_maxrss is in kB on Linux; the file alone is 48 MB


def test_checker_refuses_a_file_that_grows_while_read(good, tmp_path):
    from sim.particles.output import FormatError, TrajectoryReader

    path = tmp_path / "growing.out"
    path.write_bytes(good.read_bytes())
    with TrajectoryReader(str(path)) as reader:
        with open(path, "ab") as f:
            f.write(b"0.1 0.2\n" * 100_000)
        with pytest.raises(FormatError, match="grew past its size"):
            while reader.next_frame():
                while reader.left:
                    reader.particles(64)
                reader.end_frame()
