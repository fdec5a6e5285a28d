"""The CUDA layer without a GPU (sim/gpu/cuda.py): a fake module loader stands in for CuPy's RawModule.

A launcher asks for its kernels every frame: once compiled, asking again must be a dictionary lookup
(no file read, no header digest); a test's planted options or replaced source must still reach the
next compile; a failed compile caches nothing. ``sim`` lists every build without importing the viewer.
"""

import builtins
import hashlib
import os
import pathlib
import subprocess
import sys

import pytest

from sim.gpu import cuda

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONTACT = cuda.Build("sim/balls/contact.cu", ("--fmad=false",), ("step",))
HEAT = cuda.Build("sim/heat/stencil.cu", ("--fmad=false",), ("step_global", "step_shared", "paint"))


class FakeModule:
    def __init__(self, text, options, device):
        self.text, self.options, self.device = text, options, device

    def get_function(self, name):
        return (name, self)


@pytest.fixture
def loader(monkeypatch):
    """Compiles nothing: records each (text, options, device) it is asked to compile; ``fail`` makes
    the next one fail as a compiler would."""
    calls, fail = [], []

    def module(text, options, device):
        calls.append((text, options, device))
        if fail:
            raise cuda.GpuCompileError(fail.pop())
        return FakeModule(text, options, device)

    monkeypatch.setattr(cuda, "_module", module)
    monkeypatch.setattr(cuda, "_compiled", {})
    cuda.headers_digest.cache_clear()
    yield calls, fail
    cuda.headers_digest.cache_clear()


def refuse(*args, **kwargs):
    raise AssertionError("file I/O on a compiled build")


def no_file_io(monkeypatch):
    for owner, name in (
        (builtins, "open"),
        (pathlib.Path, "read_text"),
        (pathlib.Path, "read_bytes"),
        (pathlib.Path, "open"),
        (pathlib.Path, "rglob"),
        (pathlib.Path, "glob"),
        (os, "walk"),
        (os, "scandir"),
        (os, "stat"),
        (hashlib, "sha1"),
    ):
        monkeypatch.setattr(owner, name, refuse)


def test_a_compiled_build_comes_back_without_reading_a_file(loader, monkeypatch):
    calls, _ = loader
    first = cuda.kernels(HEAT, 0)
    assert len(calls) == 1 and first["paint"][0] == "paint"
    assert calls[0][0].startswith('#line 1 "sim/heat/stencil.cu"\n') and "--fmad=false" in calls[0][1]
    with monkeypatch.context() as m:
        no_file_io(m)
        again = cuda.kernels(HEAT, 0)
        paint = cuda.kernel(HEAT, 0, "paint")
        first_kernel = cuda.kernel(HEAT, 0)
        equal = cuda.kernels(cuda.Build(HEAT.source, HEAT.options, HEAT.kernels), 0)  # an equal build, made anew
    assert again is first and equal is first
    assert paint is first["paint"] and first_kernel is first["step_global"]
    assert len(calls) == 1, "compiled once"


def test_each_device_compiles_its_own(loader):
    calls, _ = loader
    assert cuda.kernels(HEAT, 0) is not cuda.kernels(HEAT, 1)
    assert [device for _, _, device in calls] == [0, 1]
    assert cuda.kernels(HEAT, 1) is cuda.kernels(HEAT, 1) and len(calls) == 2


def test_the_headers_are_digested_once_a_process(loader, monkeypatch):
    calls, _ = loader
    cuda.kernels(HEAT, 0)
    monkeypatch.setattr(pathlib.Path, "rglob", refuse)
    monkeypatch.setattr(pathlib.Path, "read_bytes", refuse)
    cuda.kernels(CONTACT, 0)  # another source: its .cu is read, the headers are not walked again
    assert len(calls) == 2 and calls[0][0].splitlines()[-1] == calls[1][0].splitlines()[-1]
    assert calls[1][0].startswith('#line 1 "sim/balls/contact.cu"\n')


def test_planted_options_reach_the_next_compile_and_leave_with_the_block(loader):
    calls, _ = loader
    plain = cuda.kernels(CONTACT, 0)
    with cuda.planted(CONTACT.source, "-DPLANT_X=1"):
        planted = cuda.kernels(CONTACT, 0)
        assert planted is not plain and calls[-1][1][-1] == "-DPLANT_X=1"
        assert cuda.kernels(CONTACT, 0) is planted
        assert cuda.kernels(HEAT, 0)["paint"][1].options[-1] == "--fmad=false", "other sources: no plant"
    after = cuda.kernels(CONTACT, 0)
    assert after is not planted and "-DPLANT_X=1" not in calls[-1][1]


def test_a_replaced_source_is_compiled_in_the_block_only(loader, tmp_path):
    calls, _ = loader
    broken = tmp_path / "contact.cu"
    broken.write_text("not CUDA\n")
    cuda.kernels(CONTACT, 0)
    with cuda.replaced_source(CONTACT.source, broken):
        cuda.kernels(CONTACT, 0)
        assert "not CUDA" in calls[-1][0] and calls[-1][0].startswith(f'#line 1 "{broken.as_posix()}"')
    cuda.kernels(CONTACT, 0)
    assert "not CUDA" not in calls[-1][0] and len(calls) == 3


def test_a_failed_compile_caches_nothing(loader):
    calls, fail = loader
    fail.append("contact.cu(12): error: expected a ;")
    with pytest.raises(cuda.GpuCompileError, match=r"kernel compile failed \(--fmad=false\):\ncontact\.cu\(12\)"):
        cuda.kernels(CONTACT, 0)
    assert cuda.kernels(CONTACT, 0)["step"][0] == "step" and len(calls) == 2, "the next ask compiles again"


def test_ceil_div_rounds_up():
    assert [cuda.ceil_div(a, 4) for a in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]
    assert cuda.grid_for(0, 128) == ((1,), (128,)) and cuda.grid_for(257, 128) == ((3,), (128,))


def test_sim_lists_and_finds_every_build_without_the_viewer():
    """A fresh interpreter: other tests import the viewer into this one."""
    code = (
        "import sys\n"
        "from sim import registry\nfrom sim.gpu import cuda\n"
        "builds = registry.all_builds()\n"
        "sources = {b.source for b in builds}\n"
        "assert 'viewer/render/points/splat.cu' in sources and set(cuda.all_sources()) <= sources\n"
        "assert cuda.source_path('viewer/render/points/splat.cu').is_file()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('viewer', 'pyglet', 'moderngl', 'cupy')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# --- the GPU scenes' small defects, on the CPU ------------------------------------------------------


def test_the_pass_count_and_bench_figures_outlive_the_bounded_history():
    """The balls' history keeps the latest passes only (a scene runs for hours): the count keeps
    counting, and a benchmark marked after the history filled still sees its own passes."""
    from sim.balls.passes import PassLog
    from sim.cmdline import bench
    from sim.registry import create_scene

    scene = create_scene("balls", preset="T")
    scene.pass_log = PassLog(history=3)
    for _ in range(5):  # a pass every six steps: five passes, the history full
        scene.advance_frame()
    assert scene.stats()["passes"] == 5
    record = bench.run(scene, steps=30, warmup=0, progress=lambda done, total: None, budget_s=0.0)  # five more passes
    assert scene.stats()["passes"] == 10 and record["pass_count"] == 5
    assert len(record["passes"]) == 3 and record["passes"][-1] == {"tests": scene.last_tests, "pairs": scene.last_pairs}
    assert record["tests_per_s"] * record["wall_s"] >= 5 * min(p["tests"] for p in record["passes"])
    line = " ".join(scene.bench_type.lines(record))
    assert "5 passes" in line and "oldest kept pass" in line


class FakeHeatGpu:
    """Stands in for HeatGpu: any knob but the first ones fails as ``failure`` says."""

    def __init__(self, field, tfac, failure):
        self.field, self.tfac, self.failure = field, tfac, failure
        self.kernel, self.fma = "global", False

    def configure(self, kernel=None, block=None, k=None, fma=None):
        if self.failure == "refused" and (fma or kernel not in (None, "global")):
            raise cuda.KernelError("this device refuses that")  # checked first: nothing changed
        self.kernel, self.fma = kernel or self.kernel, self.fma if fma is None else bool(fma)

    def launch_info(self):
        if self.failure == "compile" and (self.fma or self.kernel != "global"):
            raise cuda.GpuCompileError("kernel compile failed:\nsim/heat/stencil.cu(40): error: expected a ;")
        return {}

    def get(self):
        return self.field.copy()


def heat_on_fake_gpu(failure):
    from sim.registry import create_scene

    scene = create_scene("heat", preset="seed", n=64 * 48, variant="global")
    scene.gpu, scene.cpu, scene.backend = FakeHeatGpu(scene.cpu.field.copy(), scene.cpu.tfac, failure), None, "gpu"
    return scene


KNOBS = {
    "fma on": lambda scene: scene.knobs.set_option("fma", "on"),
    "variant temporal": lambda scene: scene.knobs.set_variant("temporal"),
}


@pytest.mark.parametrize("knob", KNOBS)
def test_a_knob_whose_kernel_does_not_compile_takes_the_gpu_off_whichever_knob(knob):
    from sim.gpu.backend import BackendUnavailable

    scene = heat_on_fake_gpu("compile")
    field = scene.host_field().copy()
    with pytest.raises(BackendUnavailable, match=r"stencil\.cu\(40\)"):
        KNOBS[knob](scene)
    assert scene.backend == "cpu" and scene.gpu is None and "stencil.cu(40)" in scene.gpu_reason
    assert "gpu" not in scene.supported_backends
    scene.advance_frame()  # the next frame runs, on the CPU, from the same field
    assert scene.steps == scene.frame_steps and scene.cpu.field.shape == field.shape


@pytest.mark.parametrize("knob", KNOBS)
def test_a_knob_the_gpu_refuses_is_put_back_on_the_scene_and_the_gpu_alike(knob):
    scene = heat_on_fake_gpu("refused")
    with pytest.raises(cuda.KernelError, match="refuses"):
        KNOBS[knob](scene)
    assert scene.backend == "gpu" and (scene.knobs.options["fma"], scene.knobs.variant) == ("off", "global")
    assert (scene.gpu.fma, scene.gpu.kernel) == (False, "global")
