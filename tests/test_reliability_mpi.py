"""Signals and launches over MPI ranks: a signal to an MPI job (Ctrl-C, to mpiexec or its group) or a hang-up
keeps the previous output and leaves no temporary file, a rank stopped between its own chunks ends the job in
one line, ranks started with other arguments stop before any work (with the same ones they run), and a
launcher's variables without the launcher end in one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import test_reliability_signals as signals
from mpi_support import CLEAN_ENV, MPIEXEC, run
from test_reliability_signals import EXIT, ROOT, leftovers, start

no_process_left = signals.no_process_left  # autouse: a test that fails half-way leaves no process running


# --- MPI ---------------------------------------------------------------------------------------------------
def wait_for_partial(folder, proc, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not leftovers(folder):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else "slow"
        time.sleep(0.05)


def start_mpi_particles(target):
    """Two MPI ranks of a long particles run writing ``target``, in a process group of their own."""
    return start(
        [
            MPIEXEC,
            "-n",
            "2",
            sys.executable,
            "main.py",
            "particles",
            "-n",
            "100000",
            "--steps",
            "100000",
            "-o",
            str(target),
        ],
        start_new_session=True,
    )


def signalled_mpi_job(tmp_path, send):
    """An MPI particles job writing over a previous ``out.txt``, signalled by ``send(proc)`` a second into its
    steps: (its output file, the process, its exit code)."""
    if MPIEXEC is None:
        pytest.skip("no mpiexec here (install the [mpi] extra)")
    target = tmp_path / "out.txt"
    target.write_text("previous")
    proc = start_mpi_particles(target)
    try:
        wait_for_partial(tmp_path, proc)
        time.sleep(1.0)  # into the steps
        send(proc)
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return target, proc, code


@pytest.mark.parametrize(
    "sig, group",
    [(signal.SIGINT, True), (signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGTERM, True)],
    ids=["ctrl-c", "int-to-mpiexec", "term-to-mpiexec", "term-to-group"],
)
def test_a_signal_to_an_mpi_job_keeps_the_previous_output_and_leaves_no_temporary(tmp_path, sig, group):
    def send(proc):
        os.killpg(proc.pid, sig) if group else proc.send_signal(sig)

    target, proc, code = signalled_mpi_job(tmp_path, send)
    assert code == EXIT[sig]
    assert leftovers(tmp_path) == [] and target.read_text() == "previous"
    err = proc.stderr.read()
    assert "Traceback" not in err and "Abort" not in err, err


def test_a_hung_up_mpi_job_leaves_no_temporary(tmp_path):
    """SIGHUP to the terminal's process group: mpiexec (Hydra) dies of it and its proxy kills the ranks with
    SIGKILL, which no handler sees; rank 0's watcher removes the temporary file all the same."""
    target, _, code = signalled_mpi_job(tmp_path, lambda proc: os.killpg(proc.pid, signal.SIGHUP))
    assert code in (-signal.SIGHUP, 129)
    deadline = time.monotonic() + 10
    while leftovers(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftovers(tmp_path) == [] and target.read_text() == "previous"


def test_a_rank_stopped_between_its_own_chunks_says_so_in_one_line():
    """The histogram's chunks differ between ranks (no step to agree on): the first rank to stop ends the job."""
    if MPIEXEC is None:
        pytest.skip("no mpiexec here (install the [mpi] extra)")
    proc = start([MPIEXEC, "-n", "2", sys.executable, "main.py", "sdh", "3000000", "500"], start_new_session=True)
    try:
        assert "Ctrl-C stops it" in proc.stderr.readline()
        assert "ranks on" in proc.stderr.readline()  # the atoms are drawn: the histogram starts
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    err = proc.stderr.read()
    assert "stopped by a signal (exit 130); stopping every rank" in err and "Traceback" not in err, err
    assert "Running time" not in proc.stdout.read()  # mpiexec says it forwarded Ctrl-C; no result follows


def test_ranks_started_with_other_arguments_stop_before_any_work():
    if MPIEXEC is None:
        pytest.skip("no mpiexec here (install the [mpi] extra)")
    common = [sys.executable, "main.py", "particles", "--steps", "10", "-n"]
    done = subprocess.run(
        [MPIEXEC, "-n", "1", *common, "1000", ":", "-n", "1", *common, "2000"],
        cwd=ROOT,
        env=CLEAN_ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "rank 1 of 2" in lines[0], done.stderr
    assert "particles --steps 10 -n 2000" in lines[0] and "particles --steps 10 -n 1000" in lines[0]


def test_ranks_with_the_same_arguments_run():
    done = run([sys.executable, "main.py", "particles", "-n", "1000", "--steps", "10"], ranks=2, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("n = 1000, "), done.stderr


@pytest.mark.parametrize("variable", ["PMI_SIZE", "OMPI_COMM_WORLD_SIZE"])
@pytest.mark.parametrize("args", [["--help"], ["particles", "-n", "100", "--steps", "1"]])
def test_a_launcher_variable_without_the_launcher_is_one_line_and_exit_2(variable, args):
    done = subprocess.run(
        [sys.executable, "main.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**CLEAN_ENV, variable: "2"},
    )
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{variable}=2" in lines[0] and "mpiexec -n 2" in lines[0], done.stderr
