"""Your own kernel in a stage (sim.userkernel): the file read as text, NVRTC's diagnostics with file:line,
guarded output buffers, the sandbox worker and the heat step stage (the commands: test_user_commands.py).
GPU tests are marked ``gpu``; the rest runs on any machine (NVRTC compiles without a GPU)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from sim.cmdline.cli import UsageError
from sim.contract import SceneSpec, UserStage, Words
from sim.gpu.cuda import Build, source_path
from sim.heat import SPEC as HEAT
from sim.heat import user_stage as heat_stage
from sim.heat.scene import HeatScene
from sim.heat.user_stage import StepStage
from sim.userkernel import guard
from sim.userkernel import source as user_source
from sim.userkernel.guard import Guarded
from sim.userkernel.sandbox import RunResult, Sandbox, SandboxError

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")


class PlainStage:
    """The least an adapter needs for a compile check: the reference build whose options it shares."""

    reference = Build("sim/heat/stencil.cu", ("--fmad=false",))


PLAIN = UserStage(
    name="scale",
    summary="y = 2 x",
    entry="scale",
    signature="void scale(int n, float* y)",
    params=(("n", "items"), ("y", "values")),
    launch="one thread per item",
    compare="exact",
    template="",
    adapter="test_user_kernels:PlainStage",
)
PLAIN_SPEC = SceneSpec(
    name="plain",
    title="a test scene",
    words=Words("items", "item"),
    view="points",
    presets=(),
    default_preset="",
    scene="",
    stages=("scale",),
    stats=(),
    user_stages=(PLAIN,),
)
GOOD = (
    'extern "C" __global__ void scale(int n, float* y) {\n    int i = threadIdx.x;\n    if (i < n) y[i] *= 2.0f;\n}\n'
)


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
    assert str(error).startswith(f'{source.path}:3: error: identifier "z" is undefined\n    if (i < n)')


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


def test_compiled_raises_with_every_diagnostic_or_hands_back_the_warnings(tmp_path):
    warned = kernel_file(tmp_path, GOOD.replace("int i = threadIdx.x;", "int i = threadIdx.x;\n    int unused;"))
    assert [d.severity for d in user_source.compiled(warned)] == ["warning"]
    broken = kernel_file(tmp_path, GOOD.replace("int unused;", "").replace("2.0f;", "z;"), "broken.cu")
    with pytest.raises(user_source.CompileFailed) as caught:
        user_source.compiled(broken)
    assert [d.line for d in caught.value.diagnostics] == [3]
    assert str(caught.value) == f'{broken.path}:3: error: identifier "z" is undefined'


def test_options_are_the_reference_builds_and_lineinfo(tmp_path):
    options = user_source.options(kernel_file(tmp_path, GOOD))
    assert options == (*PlainStage.reference.all_options(), "-lineinfo")


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda tmp: tmp / "absent.cu", "does not exist"),
        (lambda tmp: tmp, "a directory"),
        (lambda tmp: (tmp / "bin.cu").write_bytes(b"\x7fELF\0\0\x01") and tmp / "bin.cu", "not a text file"),
        (lambda tmp: (tmp / "latin.cu").write_bytes(b"// caf\xe9\n") and tmp / "latin.cu", "not UTF-8 text"),
        (lambda tmp: (tmp / "huge.cu").write_bytes(b"//" * user_source.MAX_BYTES) and tmp / "huge.cu", "larger than"),
    ],
)
def test_a_file_that_is_not_a_kernel_is_refused_in_one_line(tmp_path, make, words):
    with pytest.raises(UsageError) as caught:
        user_source.load(make(tmp_path), PLAIN_SPEC)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_stage_the_scene_does_not_have_is_refused_naming_the_choices(tmp_path):
    (tmp_path / "k.cu").write_text(GOOD)
    with pytest.raises(UsageError, match="no replaceable stage 'forces' \\(choose from scale\\)"):
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


# --- the heat step stage --------------------------------------------------------------------------------------
KERNELS = Path(__file__).parent / "data" / "user_kernels"


def heat_source(name: str):
    """A planted heat kernel under tests/data/user_kernels, or the template itself ("template")."""
    path = source_path(HEAT.user_stage("step").template) if name == "template" else KERNELS / f"heat_{name}.cu"
    return user_source.load(path, HEAT, "step")


@pytest.mark.parametrize(
    "size, grid",
    [
        (9, (3, 3)),
        (37 * 29, (37, 29)),
        (100 * 70, (100, 70)),
        (2000 * 1500, (2000, 1500)),
        (12, (4, 3)),
        (1009, (36, 28)),
    ],
)
def test_a_cell_count_is_laid_out_nearest_4_3(size, grid):
    assert heat_stage.shape(size) == grid


def test_fewer_than_3x3_cells_are_refused():
    with pytest.raises(ValueError, match="at least 3x3 = 9 cells, got 8"):
        StepStage().inputs(8, 0)


def test_the_default_sizes_are_the_edge_cases_and_a_large_grid():
    assert [heat_stage.shape(s) for s in StepStage().sizes()] == [(3, 3), (37, 29), (100, 70), (2000, 1500)]


def test_inputs_are_fresh_random_fields_reproducible_from_the_seed():
    stage = StepStage()
    a, b, c = stage.inputs(1073, 1), stage.inputs(1073, 1), stage.inputs(1073, 2)
    assert a["tin"].shape == (29, 37) and a["tin"].dtype == np.float32 and (a["tin"] > 0).all()
    assert np.array_equal(a["tin"], b["tin"]) and a["tfac"] == b["tfac"]
    assert not np.array_equal(a["tin"], c["tin"])
    assert 0 < a["tfac"] < 0.25 and isinstance(a["tfac"], np.float32)


def test_expected_is_the_course_step_in_float32_with_the_ring_held():
    stage = StepStage()
    inputs = stage.inputs(37 * 29, 3)
    t, f = inputs["tin"], inputs["tfac"]
    want = t.copy()
    c = t[1:-1, 1:-1]
    want[1:-1, 1:-1] = c + f * (
        (t[1:-1, :-2] - np.float32(2) * c + t[1:-1, 2:]) + (t[:-2, 1:-1] - np.float32(2) * c + t[2:, 1:-1])
    )
    got = stage.expected(inputs)["tout"]
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def test_the_launch_covers_every_cell_one_thread_each():
    stage = StepStage()
    grid, block, shared = stage.launch(stage.inputs(100 * 70, 0), (32, 8))
    assert (grid, block, shared) == ((4, 9), (32, 8, 1), 0)
    inputs = stage.inputs(100 * 70, 0)
    args = stage.args(inputs, {"tin": "tin", "tout": "tout"})
    assert args == (100, 70, 100, inputs["tfac"], "tin", "tout")
    assert [type(a) for a in args[:4]] == [np.int32, np.int32, np.int64, np.float32]


def test_compare_is_bit_for_bit_and_names_the_worst_cells():
    stage = StepStage()
    inputs = stage.inputs(37 * 29, 0)
    expected = stage.expected(inputs)
    assert stage.compare(inputs, expected, expected).correct
    got = {"tout": expected["tout"].copy()}
    got["tout"][5, 7] = np.nextafter(got["tout"][5, 7], np.float32(np.inf))  # one ulp
    got["tout"][0, 36] += 3.0
    got["tout"][28, 0] = guard.sentinel(np.float32)  # never written
    comparison = stage.compare(inputs, expected, got)
    assert comparison.mismatches == 3 and comparison.max_abs == np.inf
    assert [w.label for w in comparison.worst] == ["cell (0, 28)", "cell (36, 0)", "cell (7, 5)"]
    assert [w.index for w in comparison.worst] == [28 * 37, 36, 5 * 37 + 7]
    assert comparison.worst[1].difference == pytest.approx(3.0, abs=1e-4)
    assert np.flatnonzero(comparison.mismatch).tolist() == [36, 5 * 37 + 7, 28 * 37]


def test_the_template_and_every_planted_heat_kernel_compile(tmp_path):
    for name in (
        "template",
        "edge_column",
        "no_boundary",
        "wrong_factor",
        "past_end",
        "never_returns",
        "illegal_address",
        "tile_race",
    ):
        assert user_source.compile_check(heat_source(name)) == [], name


def test_the_scene_takes_a_step_from_outside_and_marks_the_cells_it_got_wrong():
    scene = HeatScene(preset="seed", n=37 * 29, backend="cpu")
    stage = StepStage()
    inputs = scene.user_stage_inputs("step")
    assert np.array_equal(inputs["tin"], scene.cpu.field) and inputs["tfac"] == scene.cpu.tfac
    expected = stage.expected(inputs)
    got = {"tout": expected["tout"].copy()}
    got["tout"][3, 4] += 1.0
    scene.checks.on = True  # what the viewer turns on for a user's kernel
    scene.apply_user_stage("step", inputs, got, stage.compare(inputs, expected, got))
    assert np.array_equal(scene.cpu.field, got["tout"])
    assert scene.checks.verification.differing == 1 and scene.inspector.is_marked(3 * scene.ni + 4)
    shown = scene.host_field()
    assert np.isnan(shown[3, 4]) and np.isnan(shown).sum() == 1
    scene.advance(1)  # the twin carries on from the user's field, both buffers (the ring) alike
    assert scene.cpu.field[0, 0] == got["tout"][0, 0]


# --- on the GPU: the sandbox with heat's template and planted kernels ---------------------------------------
@pytest.fixture(scope="module")
def gpu_box():
    pytest.importorskip("cupy")
    with Sandbox(time_limit_s=2.0) as box:
        yield box


def run_heat(box, name: str, size: int = 100 * 70, **kwargs):
    stage = StepStage()
    inputs = stage.inputs(size, 0)
    result = box.run(heat_source(name), inputs, (32, 8), **kwargs)
    return result, stage.compare(inputs, stage.expected(inputs), result.outputs)


@pytest.mark.gpu
def test_the_template_runs_correct_in_the_sandbox_and_is_timed_beside_the_builtins(gpu_box):
    result, comparison = run_heat(gpu_box, "template", repeats=5, builtin=StepStage.builtin)
    assert comparison.correct and result.overflow == []
    assert len(result.ms) == 5 and all(ms > 0 for ms in result.ms) and result.checked_ms > 0
    assert set(result.builtin_ms) == {"global", "shared", "temporal"}
    assert all(len(ms) == 5 for ms in result.builtin_ms.values())
    assert result.device


@pytest.mark.gpu
def test_a_kernel_that_never_returns_is_stopped_within_the_limit_and_the_next_run_works(gpu_box):
    started = time.monotonic()
    with pytest.raises(SandboxError) as caught:
        run_heat(gpu_box, "never_returns")
    assert caught.value.kind == "timeout" and "did not return within 2 s" in str(caught.value)
    assert time.monotonic() - started < 60  # the worker's start and compile, then 2 s
    assert run_heat(gpu_box, "template")[1].correct


@pytest.mark.gpu
def test_a_write_past_the_end_is_reported_with_the_buffer_and_the_count(gpu_box):
    result, _ = run_heat(gpu_box, "past_end")
    assert result.overflow == ["wrote 12 values past the end of `tout`"]


@pytest.mark.gpu
@pytest.mark.gpu_fault
def test_an_illegal_address_is_a_fault_and_the_next_run_works(gpu_box):
    with pytest.raises(SandboxError) as caught:
        run_heat(gpu_box, "illegal_address")
    assert caught.value.kind == "fault" and "illegal" in str(caught.value).lower()
    assert run_heat(gpu_box, "template")[1].correct
