"""Your own kernel run in the sandbox (sim.userkernel): guarded output buffers that count writes past either
end, and the sandbox worker, stopped at its time limit, replaced after a fault or a crash, and closed cleanly
when it cannot start; here with a stand-in job, on any machine (heat's kernels on a GPU:
test_user_kernels_heat.py)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import numpy as np
import pytest
from test_user_kernels import GOOD, kernel_file

from sim.userkernel import guard
from sim.userkernel import source as user_source
from sim.userkernel.guard import Guarded
from sim.userkernel.sandbox import RunResult, Sandbox, SandboxError

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")


# --- guarded output buffers ---------------------------------------------------------------------------------
def test_a_guarded_buffer_hands_out_a_poisoned_body_and_sees_no_overflow_when_none():
    out = Guarded(np, "tout", (3, 4), np.float32, pad=8)
    assert out.body.shape == (3, 4) and np.isnan(out.body).all()
    assert out.body.view(np.uint32)[0, 0] == guard.SENTINEL_BITS[4]
    out.body[...] = 1.0  # a kernel that writes every item and nothing else
    assert out.overflow() == []


def test_writes_past_the_end_and_before_the_start_are_counted_by_name():
    out = Guarded(np, "tout", (5, 7), np.float32, pad=16)
    flat = out.whole  # what a kernel indexing from the body's start reaches
    flat[out.pad + 35 : out.pad + 35 + 12] = 0.0  # 12 values past the end (a row too many, say)
    flat[out.pad - 3 : out.pad] = 2.0  # 3 values before the start
    assert out.overflow() == ["wrote 12 values past the end of `tout`", "wrote 3 values before the start of `tout`"]


def test_a_write_over_the_whole_pad_is_a_lower_bound_and_one_value_is_singular():
    out = Guarded(np, "bins", (10,), np.int32, start="zero", pad=4)
    assert (out.body == 0).all()
    out.whole[-4:] = 7
    out.whole[3] = 1
    assert out.overflow() == [
        "wrote at least 4 values past the end of `bins`",
        "wrote 1 value before the start of `bins`",
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint32])
def test_the_sentinel_is_nan_for_floats_and_a_marked_value_for_integers(dtype):
    value = guard.sentinel(dtype)
    assert np.dtype(type(value)) == np.dtype(dtype)
    if np.issubdtype(dtype, np.floating):
        assert np.isnan(value)
    else:
        assert value not in (0, 1, -1)


# --- the sandbox worker -------------------------------------------------------------------------------------
def napping_job(conn, source, inputs, block, repeats, builtin):
    """A worker job for the tests: "runs a kernel" that takes ``inputs["nap"]`` seconds, or exits the worker
    (``inputs["crash"]``), or faults; answers with the worker's process id."""
    conn.send(("phase", "kernel", inputs.get("launches", 1)))
    time.sleep(float(inputs.get("nap", 0.0)))
    if inputs.get("crash"):
        os._exit(3)
    if inputs.get("fault"):
        raise SandboxError("fault", "the kernel faulted: cudaErrorIllegalAddress: an illegal memory access")
    return RunResult({"pid": np.array(os.getpid())})


@pytest.fixture
def plain_source(tmp_path):
    return kernel_file(tmp_path, GOOD)


def test_without_a_gpu_the_sandbox_says_so_and_does_not_hang(plain_source):
    from sim.gpu.backend import gpu_status

    if gpu_status().available:
        pytest.skip("this machine has a GPU")
    started = time.monotonic()
    with Sandbox(time_limit_s=5.0) as box, pytest.raises(SandboxError) as caught:
        box.run(plain_source, {}, 32)
    assert caught.value.kind == "no-gpu"
    assert str(caught.value).startswith("no GPU to run the kernel on: ") and "\n" not in str(caught.value)
    assert time.monotonic() - started < 60


def test_a_kernel_past_the_time_limit_is_stopped_and_the_next_run_gets_a_new_worker(plain_source):
    with Sandbox(time_limit_s=0.5, job=napping_job) as box:
        first = int(box.run(plain_source, {}, 32).outputs["pid"])
        started = time.monotonic()
        with pytest.raises(SandboxError) as caught:
            box.run(plain_source, {"nap": 60.0}, 32)
        assert caught.value.kind == "timeout"
        assert str(caught.value) == "the kernel did not return within 0.5 s; it was stopped"
        assert time.monotonic() - started < 20
        with pytest.raises(ProcessLookupError):
            os.kill(first, 0)  # killed, not left running
        assert int(box.run(plain_source, {}, 32).outputs["pid"]) != first


def test_launches_queued_back_to_back_get_the_limit_once_each(plain_source):
    with Sandbox(time_limit_s=0.5, job=napping_job) as box:
        box.run(plain_source, {"nap": 1.0, "launches": 3}, 32)  # within 3 x 0.5 s
        with pytest.raises(SandboxError) as caught:
            box.run(plain_source, {"nap": 60.0, "launches": 3}, 32)
        assert str(caught.value) == "3 launches of the kernel did not return within 1.5 s; it was stopped"


@pytest.mark.parametrize(
    "inputs, words",
    [
        ({"fault": True}, "the kernel faulted: cudaErrorIllegalAddress"),
        ({"crash": True}, "the worker running the kernel died (exit code 3)"),
    ],
)
def test_a_fault_costs_the_worker_and_the_next_run_starts_another(plain_source, inputs, words):
    with Sandbox(time_limit_s=5.0, job=napping_job) as box:
        first = int(box.run(plain_source, {}, 32).outputs["pid"])
        with pytest.raises(SandboxError) as caught:
            box.run(plain_source, inputs, 32)
        assert caught.value.kind == "fault" and str(caught.value).startswith(words)
        assert int(box.run(plain_source, {}, 32).outputs["pid"]) != first


def test_a_run_interrupted_in_the_caller_leaves_no_stale_answer_for_the_next(plain_source):
    ctrl_c = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))  # Ctrl-C (pytest-timeout owns SIGALRM)
    try:
        with Sandbox(time_limit_s=30.0, job=napping_job) as box:
            first = int(box.run(plain_source, {}, 32).outputs["pid"])
            ctrl_c.start()
            with pytest.raises(KeyboardInterrupt):
                box.run(plain_source, {"nap": 60.0}, 32)
            started = time.monotonic()
            assert int(box.run(plain_source, {}, 32).outputs["pid"]) != first
            assert time.monotonic() - started < 20
    finally:
        ctrl_c.cancel()


def test_a_worker_that_cannot_start_says_why_and_the_sandbox_closes_cleanly(plain_source, monkeypatch):
    def no_processes(self):
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.context.SpawnProcess, "start", no_processes)
    box = Sandbox(time_limit_s=5.0, job=napping_job)
    with pytest.raises(SandboxError) as caught:
        box.run(plain_source, {}, 32)
    assert caught.value.kind == "fault"
    assert str(caught.value) == "could not start the sandbox worker: [Errno 11] Resource temporarily unavailable"
    box.close()  # nothing to stop
    monkeypatch.undo()
    assert int(box.run(plain_source, {}, 32).outputs["pid"]) != os.getpid(), "the next run starts a worker"
    box.close()


def test_a_job_that_cannot_reach_the_worker_raises_its_own_error(plain_source):
    with Sandbox(time_limit_s=5.0, job=lambda *args: None) as box, pytest.raises(Exception) as caught:
        box.run(plain_source, {}, 32)
    assert "pickle" in f"{type(caught.value).__name__} {caught.value}".lower()


def test_the_compiled_text_names_the_shared_headers_digest(plain_source, monkeypatch):
    text = plain_source.compiled_text()
    assert text.startswith(f'#line 1 "{plain_source.name}"\n{GOOD}')
    assert text.endswith(f"// headers {user_source.headers_digest()}\n")
    monkeypatch.setattr(user_source, "headers_digest", lambda: "edited")
    assert plain_source.compiled_text() != text, "a header edited since must not find the old build in CuPy's cache"
