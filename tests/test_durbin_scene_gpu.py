"""The durbin scene on the GPU (run with pytest -m gpu on a GPU machine): every recursion kernel and
block size checked frame by frame by the scene's own verification, a planted wrong kernel flagged,
block bands from the solver's layout, backend switches that keep k, the LPC mode's batched solve
against the CPU twin, and N = 200,000."""

import numpy as np
import pytest

from sim.contract import PointerEvent
from sim.durbin import SPEC, durbin_cpu, inputs, layout
from sim.framework.colormap import BLOCK_PALETTE
from sim.gpu import cuda
from sim.registry import create_scene

pytestmark = pytest.mark.gpu
VARIANTS = SPEC.gpu.variants
PLANT = "-DPLANT_DOT_START=1e-9"


def scene_on_gpu(preset="ar", n=None, **kw):
    scene = create_scene("durbin", preset=preset, n=n, backend="gpu", **kw)
    assert scene.backend == "gpu" and scene.gpu_kernels_run()
    return scene


def y_series(scene):
    plot = scene.view("plain").plots[0]
    return next(s for s in plot.series if s.label.startswith("y (k ="))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("block", [32, 256, 1024])
def test_every_kernel_passes_verification_frame_by_frame(variant, block):
    scene = scene_on_gpu("ar", 700, variant=variant, block=block)
    scene.checks.set_on(True)
    scene.controls.set_param("speed", 97.0)
    for _ in range(9):
        scene.advance_frame()
        report = scene.checks.verification
        assert report is not None and report.differing == 0, (variant, block, report)
    assert scene.solver.k == 700 and report.passes_checked >= 8
    assert report.details["largest difference to scipy"] < 1e-12
    cpu = durbin_cpu.DurbinCpu(scene.r)
    cpu.run()
    assert np.abs(scene.host["y"] - cpu.y).max() / np.abs(cpu.y).max() < 1e-12
    np.testing.assert_allclose(scene.host["alphas"][:4], scene.kappas, atol=1e-12)
    shown = y_series(scene)
    np.testing.assert_array_equal(shown.y, scene.solver.snapshot()["y"][shown.items])


@pytest.mark.parametrize("variant", VARIANTS)
def test_verification_flags_a_planted_wrong_kernel(variant):
    with cuda.planted("sim/durbin/durbin.cu", PLANT):
        scene = scene_on_gpu("ar", 300, variant=variant)
    scene.checks.set_on(True)
    scene.controls.set_param("speed", 40.0)
    for _ in range(3):
        scene.advance_frame()
    report = scene.checks.verification
    assert report.differing > 0 and report.details["largest difference to the CPU twin"] > 1e-11
    assert scene.stats()["max_error"] > 1e-11
    marked = np.flatnonzero(scene.checks.mismatch)
    red = next(s for s in scene.view("plain").plots[0].series if s.label == "beyond tolerance")
    np.testing.assert_array_equal(red.items, marked)
    rows = scene.inspector.describe_check(int(marked[-1]))
    assert rows and rows[0][0] == "y (CPU twin)" and rows[0][1] != rows[0][2]


def test_the_same_kernel_without_the_plant_passes():
    scene = scene_on_gpu("ar", 300, variant="two-kernel")
    scene.checks.set_on(True)
    scene.controls.set_param("speed", 40.0)
    for _ in range(3):
        scene.advance_frame()
    assert scene.checks.verification.differing == 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_block_bands_and_descriptions_follow_the_solvers_layout(variant):
    scene = scene_on_gpu("ar", 500, variant=variant, block=64)
    scene.controls.set_param("speed", 123.0)
    scene.advance_frame()
    k = scene.solver.k
    assert "block" in scene.color_modes
    owners = scene.owners()
    solver = scene.solver
    expected = (
        layout.owners_two_kernel(k - 1, solver.update_blocks, 64)
        if variant == "two-kernel"
        else layout.owners_persistent(k - 1, solver.pairs)
    )
    np.testing.assert_array_equal(owners, expected[:k])
    bands = [s for s in scene.view("block").plots[0].series if s.style == "shaded"]
    assert len(bands) == len(np.unique(owners % len(BLOCK_PALETTE)))
    assert f"block {owners[3]}" in scene.inspector.describe(3)["CUDA"]


def test_backend_switches_keep_k_and_the_values():
    scene = scene_on_gpu("ar", 400)
    scene.controls.set_param("speed", 150.0)
    scene.advance_frame()
    k, y = scene.solver.k, scene.host["y"].copy()
    scene.set_backend("cpu")
    assert scene.solver.backend == "cpu" and scene.solver.k == k
    np.testing.assert_array_equal(scene.solver.y[:k], y)
    scene.advance_frame()
    scene.set_backend("gpu")
    assert scene.solver.backend == "gpu" and scene.solver.k == k + 150
    scene.knobs.set_variant("two-kernel")
    scene.knobs.set_block(128)
    assert scene.solver.kernel == "two-kernel" and scene.solver.k == k + 150


def test_dragging_a_kappa_replays_on_the_gpu():
    scene = scene_on_gpu("ar")
    for _ in range(10):
        scene.run_frame(1)
    scene.pointer(PointerEvent("point", 1.0, -0.4, target="kappa1"))
    assert scene.solver.backend == "gpu" and scene.solver.k == 11
    assert scene.host["alphas"][1] == pytest.approx(-0.4, abs=1e-12)


@pytest.mark.parametrize("order", [16, 40, 64])
def test_lpc_on_the_gpu_matches_the_cpu_twin_and_verifies(order):
    scene = scene_on_gpu("lpc")
    scene.controls.set_param("order", order)
    scene.checks.set_on(True)
    scene.advance_frame()
    report = scene.checks.verification
    assert report.unit == "frames" and report.differing == 0 and report.checked == scene.lpc.frames
    y, _, _ = durbin_cpu.batched(scene.lpc.r)
    assert np.abs(scene.lpc.y - y).max() / np.abs(y).max() < 1e-9
    if order <= 48:  # a thread per system sums in C order: bit-identical to the twin
        np.testing.assert_array_equal(scene.lpc.y, y)
    owners = scene.owners()
    assert owners.shape == (scene.lpc.frames,) and owners[0] == 0
    assert any(s.style == "shaded" for s in scene.view("block").plots[0].series)


def test_lpc_verification_flags_a_planted_batched_kernel():
    with cuda.planted("sim/durbin/durbin.cu", PLANT):
        scene = scene_on_gpu("lpc")
        scene.checks.set_on(True)
        scene.advance_frame()
    assert scene.checks.verification.differing > 0


def test_two_hundred_thousand_entries_decimated_and_checked_by_residual():
    scene = scene_on_gpu("large")
    assert scene.r.size == 200_000
    scene.controls.set_param("speed", 10_000.0)
    scene.checks.set_on(True)
    for _ in range(3):
        scene.advance_frame()
    assert scene.solver.k == 30_001 and scene.checks.verification.differing == 0
    assert scene.checks.verification.details["relative residual |T y + r| / |r|"] < 1e-12
    shown = y_series(scene)
    assert len(shown.x) <= 4000
    r = inputs.ar_autocorr(200_000, scene.kappas)
    np.testing.assert_array_equal(scene.r, r)
    stats = scene.stats()
    assert stats["steps_per_s"] > 0 and "blocks" in stats["kernel"]
