"""Every CUDA build the product's launchers make compiles with NVRTC for sm_90 (no GPU needed), and
every .cu file of the product is reached by at least one build.

The builds come from the launchers themselves (each package's CuPy-free ``kernels.builds()``), so
this list cannot drift from what runs on a GPU. NVRTC releases the GIL while it compiles, so the
builds compile on a thread per core, each test waiting for its own.
"""

import functools
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")

from sim.gpu import cuda  # noqa: E402
from sim.gpu import nvrtc as sim_nvrtc  # noqa: E402
from sim.registry import all_builds  # noqa: E402

BUILDS = all_builds()


class CompileError(Exception):
    """NVRTC's log of a build that did not compile."""


@functools.cache
def compile_cubin(source: str, name: str, options: tuple[str, ...]) -> bytes:
    """Compile to a cubin with the product's NVRTC driver (in this process, on the pool's threads: NVRTC
    releases the GIL); CompileError with NVRTC's log if it does not compile. Once a run for each text and
    options: the other test files that build a product kernel (a planted fault beside the plain build) reuse
    the cubin built here."""
    out = sim_nvrtc.run_here(source, name, options, "sm_90")
    if not out.ok:
        raise CompileError(f"{name} {' '.join(options)}:\n{out.log}")
    return out.binary


def test_nvrtc_builds_a_cubin_for_sm_90():
    """The toolchain itself works here, so the per-build checks below mean something."""
    cubin = compile_cubin('extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }', "twice.cu", ())
    assert cubin[:4] == b"\x7fELF"


def test_every_source_is_built_by_a_launcher():
    assert set(cuda.all_sources()) <= {b.source for b in BUILDS}


@pytest.fixture(scope="module")
def cubins(request):
    """The cubin of every build selected in this run, compiling in the background from the first use."""
    selected = [
        item.callspec.params["build"]
        for item in request.session.items
        if getattr(item, "originalname", None) == "test_cuda_build_compiles"
    ]
    with ThreadPoolExecutor(max_workers=len(os.sched_getaffinity(0))) as pool:
        futures = {
            build: pool.submit(compile_cubin, cuda.source_text(build.source), build.source, build.all_options())
            for build in selected
        }
        yield futures
        for future in futures.values():
            future.cancel()  # an interrupted run does not wait for the rest


@pytest.mark.parametrize("build", BUILDS, ids=[f"{b.source}[{' '.join(b.options)}]" for b in BUILDS])
def test_cuda_build_compiles(build, cubins):
    """... and defines every kernel the build names: the launcher's first use loads them all."""
    try:
        cubin = cubins[build].result()
    except CompileError as exc:
        pytest.fail(str(exc))
    assert cubin[:4] == b"\x7fELF"
    assert [name for name in build.kernels if b"\0" + name.encode() + b"\0" not in cubin] == []


@pytest.fixture
def fresh_digest():
    """The headers' digest is taken once a process: taken again here, and after the test."""
    cuda.headers_digest.cache_clear()
    yield cuda.headers_digest.cache_clear
    cuda.headers_digest.cache_clear()


def test_a_header_edit_changes_the_text_the_kernel_cache_keys_on(tmp_path, monkeypatch, fresh_digest):
    """The cubin cache (sim.gpu.cubins) keys on the source text it is given; a .cu that includes an edited header
    must hand it a different text (in the next process), or the kernel compiled from the old header
    comes back."""
    (tmp_path / "common").mkdir()
    header = tmp_path / "common" / "shared.cuh"
    header.write_text("#define WIDTH 4\n")
    monkeypatch.setattr(cuda, "INCLUDE_DIR", tmp_path)
    before = cuda.source_text("sim/balls/contact.cu")
    assert before == cuda.source_text("sim/balls/contact.cu"), "the same headers: the same text"
    header.write_text("#define WIDTH 8\n")
    fresh_digest()  # a new process
    after = cuda.source_text("sim/balls/contact.cu")
    assert after != before
    assert after.splitlines()[:-1] == before.splitlines()[:-1], "only the last (comment) line differs"
    assert cuda.source_text("sim/balls/contact.cu").startswith('#line 1 "sim/balls/contact.cu"\n')
