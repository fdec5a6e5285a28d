"""Ranks: the communicator's operations over MPI, how a run on several ranks ends when one fails (no
hang, that rank's message, its exit code), and that one process never loads MPI.

Also the script the tests launch: python tests/test_mpi_launch.py comm | fail RANK PHASE CODE
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mpi_support import CLEAN_ENV, run  # noqa: E402


def mpirun(ranks: int, *args, timeout: int = 60, main: bool = False):
    target = str(ROOT / "main.py") if main else __file__
    return run([sys.executable, target, *args], ranks, timeout)


# --- one process -------------------------------------------------------------------------------------
def test_one_process_never_imports_mpi():
    code = (
        "import sys, main; rc = main.main(['sdh', '50', '500']); "
        "print('MPI LOADED' if 'mpi4py' in sys.modules else 'no mpi', rc)"
    )
    for env in (CLEAN_ENV, {**CLEAN_ENV, "PMI_SIZE": "1", "PMI_RANK": "0"}):
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().endswith("no mpi 0")


def test_one_rank_communicator_copies():
    from sim.mpi.comm import Comm

    c = Comm()
    a = np.arange(6.0).reshape(3, 2)
    assert np.array_equal(c.allreduce(a, "min"), a) and c.allreduce(a) is not a
    assert c.allgather(a).shape == (1, 3, 2) and np.array_equal(c.gatherv(a), a)
    got = np.empty(3)
    c.exchange([(0, np.array([1.0, 2.0, 3.0]))], [(0, got)])
    assert got.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError):
        c.exchange([(1, np.ones(2))], [])
    with pytest.raises(ValueError):
        c.allreduce(a, "mean")


def test_launcher_environment_is_read_without_mpi(monkeypatch):
    from sim.mpi import comm

    for name in (*comm.ENV_SIZE, *comm.ENV_RANK):
        monkeypatch.delenv(name, raising=False)
    assert comm.launched_size() == 1
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "2")
    assert (comm.launched_size(), comm.launched_rank()) == (4, 2)


# --- several ranks ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("ranks", [2, 3])
def test_communicator_operations(ranks):
    done = mpirun(ranks, "comm")
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    r = ranks
    assert got["sum"] == [sum(range(r)), r] and got["min"] == [0, 1] and got["max"] == [r - 1, 1]
    assert got["gather"] == [[q, q * 10] for q in range(r)]
    assert got["gatherv"] == [q for q in range(r) for _ in range(q + 1)], "uneven rows, rank order"
    assert got["alltoall_from"] == list(range(r)), "rank 0 gets q from rank q"
    assert got["ring"] == [[(r - 1) * 100, (r - 1) * 100 + 1], [r - 1] * 3], "two messages from one peer, in order"
    assert got["bcast"] == [7, 7, 7] and got["split"] == [1, 2] and got["local"] == [0, r, 1]


def test_a_bad_argument_on_every_rank_is_reported_once():
    done = mpirun(3, "sdh", "1", "500", main=True)
    assert done.returncode == 2
    assert done.stderr.count("atoms must be at least 2") == 1, done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(
    "failing, phase, code", [(1, "setup", 3), (0, "setup", 2), (2, "running", 1), (0, "running", 1), (1, "end", 4)]
)
def test_a_failure_on_one_rank_ends_the_job_with_its_message(failing, phase, code):
    start = time.monotonic()
    done = mpirun(3, "fail", str(failing), phase, str(code), timeout=60)
    assert time.monotonic() - start < 50, "no rank left waiting"
    assert done.returncode == code, (done.returncode, done.stderr)
    assert done.stderr.count(f"planted failure on rank {failing}") == 1, done.stderr
    if failing:
        assert f"rank {failing} of 3 failed" in done.stderr
    if phase == "setup":
        assert "finished" not in done.stdout, "nobody went on"
    if phase == "end":
        assert done.stdout.count("finished") == 1, "rank 0 finished and printed once"


def _fail(argv: list[str]) -> int:
    from sim.mpi import begin, end, ranks, world

    failing, phase, code = int(argv[0]), argv[1], int(argv[2])

    @ranks
    def main(_argv):
        comm = world()
        me = comm.rank == failing
        if phase == "setup" and me:
            print(f"planted failure on rank {failing}", file=sys.stderr)
            return code
        begin()
        if phase == "running" and me:
            raise RuntimeError(f"planted failure on rank {failing}")
        for _ in range(3):  # the others sit in collectives the failed rank never joins
            comm.allreduce(np.ones(4))
            time.sleep(0.2)
        end()
        if phase == "end" and me:
            print(f"planted failure on rank {failing}", file=sys.stderr)
            return code
        print("finished")
        return 0

    return main(None)


def _comm() -> int:
    from sim.mpi import world

    c = world()
    r, q = c.size, c.rank
    out = {
        "sum": c.allreduce(np.array([q, 1], np.int64)).tolist(),
        "min": c.allreduce(np.array([q, 1], np.int64), "min").tolist(),
        "max": c.allreduce(np.array([q, 1], np.int64), "max").tolist(),
        "gather": c.allgather(np.array([q, q * 10], np.int64)).tolist(),
    }
    gathered = c.gatherv(np.full(q + 1, q, np.int64))
    sent = c.alltoall(np.full(r, q, np.int64))
    ring = [np.empty(2, np.int64), np.empty(3, np.int64)]
    c.exchange(
        [((q + 1) % r, np.array([q * 100, q * 100 + 1])), ((q + 1) % r, np.full(3, q))],
        [((q - 1) % r, ring[0]), ((q - 1) % r, ring[1])],
    )
    shared = c.bcast(np.full(3, 7 if q == 0 else -1, np.int64))
    sub = c.split(2)
    split = [sub.rank, sub.size] if sub is not None and q == 1 else None
    split = c.allgather(np.array(split or [-1, -1], np.int64))[1].tolist()
    if c.is_root:
        out.update(
            gatherv=gathered.tolist(),
            alltoall_from=sent.tolist(),
            ring=[a.tolist() for a in ring],
            bcast=shared.tolist(),
            split=split,
            local=[c.local_rank, c.local_size, c.hosts],
        )
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(_comm() if sys.argv[1] == "comm" else _fail(sys.argv[2:]))


def test_an_abort_waits_until_the_launcher_has_read_the_message(tmp_path):
    # MPI_Abort tears the job down at once: what the failed rank wrote must have left its pipe first
    import threading

    from sim.mpi.launch import _wait_until_read

    r, w = os.pipe()
    with os.fdopen(w, "w") as writer:
        writer.write("kernel-lab: rank 1 of 3 failed\n")
        writer.flush()
        threading.Timer(0.3, os.read, args=(r, 64)).start()  # the launcher reads a moment later
        start = time.monotonic()
        _wait_until_read(writer)
        assert 0.25 < time.monotonic() - start < 1.5
        start = time.monotonic()
        _wait_until_read(writer)  # nothing unread: no wait
        assert time.monotonic() - start < 0.05
    os.close(r)
    with open(tmp_path / "log", "w") as log:  # a file: nothing to wait for
        log.write("x")
        start = time.monotonic()
        _wait_until_read(log, limit_s=1.0)
        assert time.monotonic() - start < 0.05
