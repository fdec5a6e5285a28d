"""The one NVRTC driver (sim/gpu/nvrtc.py) and its cubin cache (sim/gpu/cubins.py), without a GPU: the float mode
(no FTZ in what the GPU builds get), the cache, a compile bounded in time and stopped by a signal, and a
user's file whose include, name, encoding or inline asm used to defeat the compile or its messages."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")

from sim.gpu import cubins, cuda, nvrtc  # noqa: E402
from sim.heat import SPEC as HEAT  # noqa: E402
from sim.userkernel import source as user_source  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HALVE = 'extern "C" __global__ void halve(float* x) { x[threadIdx.x] = x[threadIdx.x] * 0.5f; }\n'
HEAT_OPTIONS = cuda.Build("sim/heat/stencil.cu", ("--fmad=false",)).all_options()  # the built-ins' options
BOMB = (
    "#define A0 y[0] +\n"
    + "".join(f"#define A{i} A{i - 1} A{i - 1}\n" for i in range(1, 21))
    + 'extern "C" __global__ void step(float* y) { y[0] = A20 1; }\n'
)


def heat_kernel(tmp_path, text: str, name: str = "my_step.cu"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return user_source.load(path, HEAT)


@pytest.fixture(scope="module")
def heat_template():
    """The heat step template, a correct kernel (its NVRTC build is reused by the tests that change it)."""
    return (ROOT / "sim/heat/templates/step.cu").read_text()


# --- the float mode ----------------------------------------------------------------------------------------
def test_a_cubin_is_built_with_the_callers_options_alone_and_no_ftz():
    out = nvrtc.compile(HALVE, "halve.cu", HEAT_OPTIONS, "sm_90")
    assert out.ok and out.binary[:4] == b"\x7fELF" and b"\0halve\0" in out.binary
    sent = nvrtc.arguments(HEAT_OPTIONS, "sm_90")
    assert sent[0] == b"--gpu-architecture=sm_90" and not [o for o in sent if b"ftz" in o]


def test_the_ptx_of_the_products_options_keeps_subnormals_and_ftz_would_show():
    """What the GPU loads has no .ftz. instruction; the same check sees CuPy's -ftz=true."""
    ours = nvrtc.run_here(HALVE, "halve.cu", HEAT_OPTIONS, "sm_90", ptx=True)
    flushed = nvrtc.run_here(HALVE, "halve.cu", (*HEAT_OPTIONS, "-ftz=true"), "sm_90", ptx=True)
    assert b"mul.rn.f32" in ours.binary and b".ftz." not in ours.binary
    assert b".ftz." in flushed.binary


def test_arch_for_a_compute_capability():
    assert nvrtc.arch_for("90") == "sm_90" and nvrtc.arch_for("120") == "sm_120"


# --- the cubin cache --------------------------------------------------------------------------------------
@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cubins"
    monkeypatch.setattr(cubins, "cache_dir", lambda: folder)
    calls = []
    real = nvrtc.compile

    def counted(*args, **kwargs):
        calls.append(args[2])
        return real(*args, **kwargs)

    monkeypatch.setattr(nvrtc, "compile", counted)
    return folder, calls


def test_a_cubin_is_compiled_once_and_found_on_disk_after(cache):
    folder, calls = cache
    first = cubins.cubin_file(HALVE, "halve.cu", ("--fmad=false",), "sm_90")
    again = cubins.cubin_file(HALVE, "halve.cu", ("--fmad=false",), "sm_90")
    assert first == again and first.parent == folder and len(calls) == 1
    assert cubins.whole_elf(first.read_bytes())
    other = cubins.cubin_file(HALVE, "halve.cu", (), "sm_90")  # other options: another entry
    assert other != first and len(calls) == 2 and not [p for p in folder.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_a_damaged_cache_entry_is_compiled_again(cache, damage):
    folder, calls = cache
    path = cubins.cubin_file(HALVE, "halve.cu", (), "sm_90")
    good = path.read_bytes()
    path.write_bytes(
        {"truncated": good[: len(good) // 2], "garbage": b"\x7fELF\x02" + b"\xff" * 200, "empty": b""}[damage]
    )
    assert cubins.cubin_file(HALVE, "halve.cu", (), "sm_90") == path and len(calls) == 2
    assert path.read_bytes() == good


def test_a_build_that_does_not_compile_raises_with_nvrtcs_log(cache):
    with pytest.raises(cubins.BuildFailed, match=r'bad\.cu\(1\): error: expected a ";"'):
        cubins.cubin_file('#line 1 "bad.cu"\nextern "C" __global__ void k() { int a = 1 }\n', "bad.cu", (), "sm_90")
    assert not cache[0].exists() or not list(cache[0].iterdir())


# --- bounded and interruptible ----------------------------------------------------------------------------
def test_a_compile_past_its_limit_is_stopped_and_named():
    started = time.monotonic()
    with pytest.raises(nvrtc.CompileStopped, match=r"the compile of bomb\.cu did not finish within 2 s"):
        nvrtc.compile(BOMB, "bomb.cu", (), "sm_90", limit_s=2)
    assert time.monotonic() - started < 4


def test_a_stop_event_ends_a_compile_at_once():
    import threading

    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    started = time.monotonic()
    with pytest.raises(nvrtc.CompileStopped, match="was stopped"):
        nvrtc.compile(BOMB, "bomb.cu", (), "sm_90", stop=stop)
    assert time.monotonic() - started < 1.5


def test_the_check_says_a_compile_went_over_its_limit_at_line_1(tmp_path, monkeypatch):
    monkeypatch.setattr(nvrtc, "COMPILE_LIMIT_S", 1.0)
    found = user_source.compile_check(heat_kernel(tmp_path, BOMB))
    assert len(found) == 1 and found[0].severity == "error" and found[0].line == 1
    assert "did not finish within 1 s" in found[0].message


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_check_stops_within_a_second_of_a_signal_during_a_compile(tmp_path, sig, code):
    kernel = tmp_path / "bomb.cu"
    kernel.write_text(BOMB)
    proc = subprocess.Popen(
        [sys.executable, "main.py", "check", "heat", "--kernel-file", str(kernel)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        time.sleep(4)  # imports done, the compile under way
        assert proc.poll() is None
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=10)
        assert time.monotonic() - sent < 1.0, err
        assert proc.returncode == code, err
    finally:
        proc.kill()
        proc.wait()
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout
    assert children == ""


# --- a user's file: includes, names, encoding, ptxas -------------------------------------------------------
def test_an_include_of_a_fifo_is_refused_naming_it(tmp_path, heat_template):
    os.mkfifo(tmp_path / "pipe.cuh")
    source = heat_kernel(tmp_path, '// a header that never ends\n#include "pipe.cuh"\n' + heat_template)
    started = time.monotonic()
    found = user_source.compile_check(source)
    assert time.monotonic() - started < 2
    assert [(d.line, d.severity) for d in found] == [(2, "error")]
    assert '#include "pipe.cuh" is a FIFO' in found[0].message and found[0].text == '#include "pipe.cuh"'


def test_an_include_of_a_fifo_through_a_header_is_refused_at_the_users_line(tmp_path, heat_template):
    os.mkfifo(tmp_path / "pipe.cuh")
    (tmp_path / "mine.cuh").write_text('#include "pipe.cuh"\n')
    found = user_source.compile_check(heat_kernel(tmp_path, '#include "mine.cuh"\n' + heat_template))
    assert [d.line for d in found] == [1] and "pipe.cuh" in found[0].message


@pytest.mark.parametrize("name", ['my "step".cu', "my\nstep.cu", "back\\slash.cu"])
def test_a_correct_kernel_compiles_whatever_its_files_name(tmp_path, heat_template, name):
    source = heat_kernel(tmp_path, heat_template, name)
    assert user_source.compile_check(source) == []
    found = user_source.compile_check(heat_kernel(tmp_path, heat_template + "\nint broken = ;\n", name))
    assert found and found[0].line == len(heat_template.splitlines()) + 2
    assert found[0].file == user_source.shown(str(tmp_path / name), 4096) and "\n" not in found[0].file


def test_a_byte_order_mark_is_not_source(tmp_path, heat_template):
    source = heat_kernel(tmp_path, b"\xef\xbb\xbf" + heat_template.encode())
    assert not source.text.startswith("\ufeff") and user_source.compile_check(source) == []


ASM = """extern "C" __global__ void step(int ni, int nj, long long stride, float tfac, const float* in, float* out) {
    float y = in[0];
    asm("bogus.instr %0;" : "+f"(y));
    out[0] = y;
}
"""


def test_ptxas_errors_name_the_asm_line_one_error_each(tmp_path):
    found = user_source.compile_check(heat_kernel(tmp_path, "\n" * 35 + ASM, "asm.cu"))
    errors = [d for d in found if d.severity == "error"]
    assert errors and {d.line for d in errors} == {38}, found
    assert all(d.file.endswith("asm.cu") and d.message.startswith("ptxas: ") for d in errors)
    assert not [d for d in errors if "aborted" in d.message] and 'asm("bogus.instr' in errors[0].text


def test_ptxas_warnings_stay_warnings():
    log = (
        "ptxas application ptx input, line 30; warning : Something to know\n"
        "ptxas application ptx input, line 31; error   : Unknown symbol '%r9'\n"
        "ptxas fatal   : Ptx assembly aborted due to errors\n"
    )
    ptx = '\t.file\t1 "/w/k.cu"\n' + "\n" * 27 + "\t.loc\t1 7 3\n\tadd\n\tmov\n"
    found = nvrtc.ptxas_messages(log, ptx)
    assert found == [
        nvrtc.PtxasMessage("/w/k.cu", 7, "warning", "Something to know"),
        nvrtc.PtxasMessage("/w/k.cu", 7, "error", "Unknown symbol '%r9'"),
    ]


def test_a_huge_offending_line_is_cut_to_a_sane_width(tmp_path, heat_template):
    found = user_source.compile_check(
        heat_kernel(tmp_path, heat_template + 'const char* s = "' + "a" * 900_000 + '" int broken;\n')
    )
    assert found and found[0].line == len(heat_template.splitlines()) + 1 and found[0].text.startswith("const char")
    assert all(len(d.text) <= user_source.SHOWN_WIDTH for d in found)
    assert all(len(str(d)) < 6 * user_source.SHOWN_WIDTH for d in found)
