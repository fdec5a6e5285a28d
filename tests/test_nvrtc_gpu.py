"""GPU builds keep float32 subnormals as their CPU twins do (sim/gpu/nvrtc.py, sim.gpu.cuda.load_module): a loaded
module computes 1e-38f * 0.5f = 5e-39 bit for bit with numpy, the PTX of what is loaded has no .ftz.
instruction, and the heat plate, whose cold field decays into subnormals, verifies for 400 steps in
every GPU variant (CuPy's own compile flushed them: 344 of 400 passes mismatched)."""

import numpy as np
import pytest

from sim.gpu import cuda, nvrtc
from sim.heat import SPEC
from sim.registry import create_scene

pytestmark = pytest.mark.gpu

HALVE = (
    'extern "C" __global__ void halve(const float* x, float* y, int n) {\n'
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = x[i] * 0.5f;\n}\n"
)
OPTIONS = cuda.Build("sim/heat/stencil.cu", ("--fmad=false",)).all_options()


def test_a_loaded_module_keeps_float32_subnormals_bit_for_bit():
    import cupy

    module = cuda.load_module(HALVE, "halve.cu", OPTIONS, 0)
    x = np.array([1e-38, 3e-39, 1.17549435e-38, 1e-45, -2e-38, 1.5], np.float32)
    y = cupy.full(x.size, cupy.nan, cupy.float32)  # poisoned
    module.get_function("halve")((1,), (32,), (cupy.asarray(x), y, np.int32(x.size)))
    got, want = cupy.asnumpy(y), x * np.float32(0.5)
    assert want[0] == np.float32(5e-39) and want[0] != 0
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (got, want)


def test_the_ptx_of_what_is_loaded_has_no_ftz():
    import cupy

    arch = nvrtc.arch_for(cupy.cuda.Device(0).compute_capability)
    for build in (
        cuda.Build("sim/heat/stencil.cu", ("--fmad=false",)),
        cuda.Build("viewer/pick/raytest.cu", ("--fmad=false",)),
    ):
        text, options = cuda.source_text(build.source), build.all_options()
        ptx = nvrtc.compile(text, build.source, options, arch, ptx=True)
        assert ptx.ok and b".ftz." not in ptx.binary, build.source
    assert cuda.kernels(cuda.Build("sim/heat/stencil.cu", ("--fmad=false",), ("paint",)), 0)["paint"] is not None


@pytest.mark.parametrize("variant", SPEC.gpu.variants)
def test_the_heat_plate_verifies_for_400_steps(variant):
    """The default preset: the cold plate's far cells fall through the subnormals within 60 steps."""
    s = create_scene("heat", preset="plate", backend="gpu", variant=variant)
    assert s.backend == "gpu" and s.preset == "plate"
    s.checks.set_on(True)
    for _ in range(400):
        s.advance(1)
    report = s.checks.verification
    assert report.passes_checked == 400 and report.passes_mismatched == 0, (variant, report)
    field = s.host_field()
    tiny = (field != 0) & (np.abs(field) < np.finfo(np.float32).tiny)
    assert tiny.any(), "the run reached subnormal values"
