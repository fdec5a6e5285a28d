"""Your own kernel in a stage (sim.userkernel): the file read as text, NVRTC's diagnostics with file:line,
guarded output buffers, the sandbox worker, the heat step stage and the template / check / bench
commands. GPU tests are marked ``gpu``; the rest runs on any machine (NVRTC compiles without a GPU)."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from sim.contract import SceneSpec, UserStage, Words
from sim.cuda import Build
from sim.userkernel import guard
from sim.userkernel import source as user_source
from sim.userkernel.guard import Guarded
from sim.userkernel.sandbox import RunResult, Sandbox, SandboxError

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")


class PlainStage:
    """The least an adapter needs for a compile check: the reference build whose options it shares."""

    reference = Build("sim/heat/stencil.cu", ("--fmad=false",))


PLAIN = UserStage(name="scale", summary="y = 2 x", entry="scale", signature="void scale(int n, float* y)",
                  params=(("n", "items"), ("y", "values")), launch="one thread per item", compare="exact",
                  template="", adapter="test_user_kernels:PlainStage")
PLAIN_SPEC = SceneSpec(name="plain", title="a test scene", words=Words("items", "item"), view="points", presets=(),
                       default_preset="", scene="", stages=("scale",), stats=(), user_stages=(PLAIN,))
GOOD = ('extern "C" __global__ void scale(int n, float* y) {\n'
        "    int i = threadIdx.x;\n"
        "    if (i < n) y[i] *= 2.0f;\n"
        "}\n")


def kernel_file(tmp_path, text: str, name: str = "my_scale.cu"):
    path = tmp_path / name
    path.write_text(text)
    return user_source.load(path, PLAIN_SPEC)


# --- the file and its diagnostics -------------------------------------------------------------------------
def test_a_good_file_compiles_without_diagnostics(tmp_path):
    source = kernel_file(tmp_path, GOOD)
    assert source.variant == "my_scale.cu"
    assert user_source.compile_check(source) == []


def test_a_syntax_error_names_file_line_and_the_offending_line(tmp_path):
    text = GOOD.replace("y[i] *= 2.0f;", "y[i] *= z;")
    source = kernel_file(tmp_path, text)
    found = user_source.compile_check(source)
    errors = [d for d in found if d.severity == "error"]
    assert len(errors) == 1
    error = errors[0]
    assert (error.file, error.line, error.text) == (str(source.path), 3, "if (i < n) y[i] *= z;")
    assert 'identifier "z" is undefined' in error.message
    assert str(error).startswith(f"{source.path}:3: error: identifier \"z\" is undefined\n    if (i < n)")


def test_a_warning_is_kept_as_a_warning(tmp_path):
    text = GOOD.replace("int i = threadIdx.x;", "int i = threadIdx.x;\n    int unused;")
    found = user_source.compile_check(kernel_file(tmp_path, text))
    assert [(d.severity, d.line, d.text) for d in found] == [("warning", 3, "int unused;")]
    assert 'variable "unused" was declared but never referenced' in found[0].message


def test_a_file_without_the_entry_kernel_is_an_error_naming_it(tmp_path):
    found = user_source.compile_check(kernel_file(tmp_path, GOOD.replace("void scale(", "void scaled(")))
    assert [d.severity for d in found] == ["error"]
    assert "no kernel named scale" in found[0].message and 'extern "C" __global__ void scale' in found[0].message


def test_a_kernel_without_extern_c_is_missing_too(tmp_path):
    found = user_source.compile_check(kernel_file(tmp_path, GOOD.replace('extern "C" ', "")))
    assert [d.severity for d in found] == ["error"] and "no kernel named scale" in found[0].message


def test_options_are_the_reference_builds_and_lineinfo(tmp_path):
    options = user_source.options(kernel_file(tmp_path, GOOD))
    assert options == (*PlainStage.reference.all_options(), "-lineinfo")


@pytest.mark.parametrize("make, words", [
    (lambda tmp: tmp / "absent.cu", "does not exist"),
    (lambda tmp: tmp, "a directory"),
    (lambda tmp: (tmp / "bin.cu").write_bytes(b"\x7fELF\0\0\x01") and tmp / "bin.cu", "not a text file"),
    (lambda tmp: (tmp / "latin.cu").write_bytes(b"// caf\xe9\n") and tmp / "latin.cu", "not UTF-8 text"),
    (lambda tmp: (tmp / "huge.cu").write_bytes(b"//" * user_source.MAX_BYTES) and tmp / "huge.cu", "larger than"),
])
def test_a_file_that_is_not_a_kernel_is_refused_in_one_line(tmp_path, make, words):
    with pytest.raises(ValueError) as caught:
        user_source.load(make(tmp_path), PLAIN_SPEC)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_stage_the_scene_does_not_have_is_refused_naming_the_choices(tmp_path):
    (tmp_path / "k.cu").write_text(GOOD)
    with pytest.raises(ValueError, match="no replaceable stage 'forces' \\(choose from scale\\)"):
        user_source.load(tmp_path / "k.cu", PLAIN_SPEC, "forces")


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
    flat[out.pad + 35: out.pad + 35 + 12] = 0.0  # 12 values past the end (a row too many, say)
    flat[out.pad - 3: out.pad] = 2.0  # 3 values before the start
    assert out.overflow() == ["wrote 12 values past the end of `tout`", "wrote 3 values before the start of `tout`"]


def test_a_write_over_the_whole_pad_is_a_lower_bound_and_one_value_is_singular():
    out = Guarded(np, "bins", (10,), np.int32, start="zero", pad=4)
    assert (out.body == 0).all()
    out.whole[-4:] = 7
    out.whole[3] = 1
    assert out.overflow() == ["wrote at least 4 values past the end of `bins`",
                              "wrote 1 value before the start of `bins`"]


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
    conn.send(("phase", "kernel"))
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
    from sim.backend import gpu_status

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


@pytest.mark.parametrize("inputs, words", [({"fault": True}, "the kernel faulted: cudaErrorIllegalAddress"),
                                           ({"crash": True}, "the worker running the kernel died (exit code 3)")])
def test_a_fault_costs_the_worker_and_the_next_run_starts_another(plain_source, inputs, words):
    with Sandbox(time_limit_s=5.0, job=napping_job) as box:
        first = int(box.run(plain_source, {}, 32).outputs["pid"])
        with pytest.raises(SandboxError) as caught:
            box.run(plain_source, inputs, 32)
        assert caught.value.kind == "fault" and str(caught.value).startswith(words)
        assert int(box.run(plain_source, {}, 32).outputs["pid"]) != first
