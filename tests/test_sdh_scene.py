"""The histogram scene on a stand-in GPU: the tensor kernel by default, and a width its counters cannot
take hands the step to the next fastest kernel with the reason in the panel's note, never a failed step."""

import contextlib
import sys
import types

import numpy as np
import pytest

from sim.gpu import backend
from sim.sdh import SPEC, data, kernels, sdh_cpu

SHARED = 232_448  # an H100's or H200's opt-in shared memory per block


@pytest.fixture
def stand_in(monkeypatch):
    """sim.sdh.gpu and CuPy stood in by the CPU; the tensor kernel refuses widths kernels.tensor_min_width
    refuses, with launch_shape's message."""
    launched = []

    class KernelError(ValueError):
        pass

    def histogram(points, width, buckets, kernel, block, device=0):
        if kernel == "tensor" and width <= kernels.tensor_min_width(block, SHARED):
            raise KernelError(
                f"the tensor kernel keeps a counter per whole squared distance: it needs a bucket "
                f"width above {kernels.tensor_min_width(block, SHARED):.4g}"
            )
        launched.append((kernel, width))
        counts = sdh_cpu.histogram(np.asarray(points), width, buckets)
        return counts, 1.5

    fake_gpu = types.SimpleNamespace(KernelError=KernelError, histogram=histogram)
    fake_cupy = types.SimpleNamespace(
        asarray=np.asarray, cuda=types.SimpleNamespace(Device=lambda d: contextlib.nullcontext())
    )
    monkeypatch.setitem(sys.modules, "sim.sdh.gpu", fake_gpu)
    monkeypatch.setattr("sim.sdh.gpu", fake_gpu, raising=False)
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    monkeypatch.setattr(backend, "gpu_status", lambda: backend.GpuStatus(True, "stand-in"))
    monkeypatch.setattr("sim.framework.scene.gpu_status", lambda: backend.GpuStatus(True, "stand-in"), raising=False)
    return launched


def test_the_fastest_kernel_is_the_default_and_narrow_widths_fall_back_with_a_reason(stand_in):
    from sim.sdh.scene import HistogramScene

    assert SPEC.gpu.default_variant == SPEC.gpu.fastest == "tensor" == kernels.FASTEST_FIRST[0]
    from sim.gpu.cuda import StageTimer

    scene = HistogramScene(backend="gpu", n=2000)
    scene.timer = StageTimer(SPEC.stages)  # the host clock for the stand-in's CUDA events
    scene.run_frame(1)
    assert stand_in[-1] == ("tensor", 500.0) and scene.counted_with == "tensor" and not scene.backend_note
    scene.controls.set_param("width", 100.0)  # below the tensor kernel's width: 1,543 buckets, 2.4 million counters
    scene.checks.on = True
    scene.run_frame(1)
    assert stand_in[-1] == ("fast", 100.0) and scene.counted_with == "fast"
    assert "tensor cannot count at width 100" in scene.backend_note and "counted with fast" in scene.backend_note
    assert "above 170" in scene.backend_note
    assert scene.checks.verification is None or not scene.checks.mismatch.any()
    np.testing.assert_array_equal(scene.counts, sdh_cpu.histogram(scene.points, 100.0, data.bucket_count(100.0)))
    assert scene.inspector.describe(3)["counted on"] == "GPU (fast)"
    scene.run_frame(1)  # the refusal is remembered: the tensor kernel is not tried again at this width
    assert stand_in[-1] == ("fast", 100.0)
    scene.controls.set_param("width", 600.0)
    scene.run_frame(1)
    assert stand_in[-1] == ("tensor", 600.0) and not scene.backend_note


def test_the_tensor_kernels_minimum_width_is_where_its_counters_fit():
    """kernels.tensor_min_width against sdh/gpu.py's arithmetic (fine_slots, 40 bytes a column, 4 a counter)."""
    for block in (32, 256, 1024):
        w = kernels.tensor_min_width(block, SHARED)
        for width, fits in ((w * 1.0001, True), (w * 0.9999, False)):
            buckets = data.bucket_count(width)
            assert (40 * block + 4 * ((buckets + 1) ** 2 + 2) <= SHARED) == fits, (block, width)
    assert 165 < kernels.tensor_min_width(256, SHARED) < 175
