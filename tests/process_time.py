"""A run's own work after a signal, for the tests that hold it to stopping soon: its CPU time (every thread),
which tests beside it on a loaded machine do not stretch as they stretch the wall time."""

import os
import pathlib
import subprocess
import time

# The threads a numba run works on (numba's default): a parallel run's CPU time after a signal grows with them
CORES = os.cpu_count() or 1


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far (user and system, /proc/PID/stat)."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def signal_and_wait(proc: subprocess.Popen, sig: int, timeout: float = 30.0) -> float:
    """Send ``sig`` and wait for the process to end (``proc.returncode`` set): the CPU seconds it used after
    the signal. One still running after ``timeout`` seconds is killed and fails the test."""
    used = cpu_seconds(proc.pid)
    proc.send_signal(sig)
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise AssertionError(f"still running {timeout:.0f} s after signal {sig}")
        time.sleep(0.01)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime - used
