"""Every .cu file of the product (sim/, viewer/) compiles with NVRTC for sm_90 (no GPU needed), per variant.

A .cu file lists its compile-option sets in a comment line, e.g.
    // nvrtc-variants: -DVARIANT=0 | -DVARIANT=1 -DUSE_SHARED
and is compiled once per set (once with no options when it has no such line).
"""

import pathlib
import re

import pytest

nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = sorted(p for folder in ("sim", "viewer") for p in (ROOT / folder).rglob("*.cu"))
ARCH = b"--gpu-architecture=sm_90"


def check(result):
    err, *rest = result
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
    return rest[0] if len(rest) == 1 else rest


def compile_cubin(source: str, name: str, options: list[str]) -> bytes:
    """Compile to a cubin (not PTX: a newer NVRTC's PTX may not load on an older driver)."""
    include = f"--include-path={ROOT / 'sim'}".encode()
    prog = check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []))
    try:
        opts = [ARCH, b"--std=c++17", include, *(o.encode() for o in options)]
        err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            size = check(nvrtc.nvrtcGetProgramLogSize(prog))
            log = bytearray(size)  # NVRTC writes in place
            check(nvrtc.nvrtcGetProgramLog(prog, log))
            pytest.fail(f"{name} {' '.join(options)}:\n{log.decode(errors='replace')}")
        size = check(nvrtc.nvrtcGetCUBINSize(prog))
        cubin = bytearray(size)
        check(nvrtc.nvrtcGetCUBIN(prog, cubin))
        return bytes(cubin)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def variants(path: pathlib.Path) -> list[list[str]]:
    match = re.search(r"//\s*nvrtc-variants:(.*)", path.read_text())
    if not match:
        return [[]]
    return [v.split() for v in match.group(1).split("|")]


CASES = [(p, v) for p in SOURCES for v in variants(p)]


def test_nvrtc_builds_a_cubin_for_sm_90():
    """The toolchain itself works here, so the per-file checks below mean something."""
    cubin = compile_cubin('extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }',
                          "twice.cu", [])
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("path, options", CASES,
                         ids=[f"{p.relative_to(ROOT)}[{' '.join(v)}]" for p, v in CASES])
def test_cuda_source_compiles(path, options):
    assert compile_cubin(path.read_text(), path.name, options)[:4] == b"\x7fELF"
