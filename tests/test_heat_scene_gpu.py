"""The heat scene on a GPU: frames of every variant bit for bit equal to the CPU twin from the same
fresh random field, painting the same cells as on the CPU, the view written into a device buffer
(poisoned first) and through CUDA-GL interop equal to the host upload, verification passing correct
kernels and flagging a planted wrong factor, block colouring and cells described by their thread."""

import time

import numpy as np
import pytest

from sim.contract import BLOCK_COLORS, PointerEvent
from sim.gpu import cuda
from sim.heat import SPEC
from sim.heat.cells import thread_of
from sim.heat.presets import rand_field
from sim.heat.stencil_cpu import HeatCpu
from sim.registry import create_scene

pytestmark = pytest.mark.gpu

NI = NJ = 229  # the seed preset keeps its square for n cells; odd: partial blocks, strips and bands
RNG = np.random.default_rng()


def fresh_seed() -> int:
    return int(RNG.integers(2, 2**31))


def gpu_scene(variant="temporal", block=(32, 8), factor=0.2, **options):
    """A GPU scene on a fresh random field (the DLI's formula after srand(a random seed))."""
    s = create_scene(
        "heat", preset="seed", n=NI * NJ, backend="gpu", seed=fresh_seed(), variant=variant, block=block, **options
    )
    assert (s.ni, s.nj) == (NI, NJ) and s.backend == "gpu"
    s.controls.set_param("factor", factor)
    return s


def twin_after(field: np.ndarray, tfac, steps: int) -> np.ndarray:
    twin = HeatCpu(field, tfac)
    twin.advance(steps)
    return twin.field


def poisoned(shape):
    import cupy

    return cupy.full(shape, cupy.nan, cupy.float32)


@pytest.mark.parametrize(
    "variant, block, k",
    [
        ("global", (32, 8), "1"),
        ("shared", (64, 4), "1"),
        ("pitched", (128, 2), "1"),
        ("temporal", (32, 8), "7"),
        ("temporal", (64, 4), "3"),
        ("temporal", (256, 1), "8"),
        ("temporal", (32, 32), "5"),
    ],
)
def test_frames_equal_the_cpu_twin_bit_for_bit(variant, block, k):
    options = {"k": k} if variant == "temporal" else {}
    s = gpu_scene(variant, block, **options)
    start = s.host_field().copy()
    assert start.std() > 10, "a random field, not zeros"
    s.controls.set_param("steps_per_frame", 11)  # not a multiple of k: the last launch is shorter
    s.advance_frame()
    s.run_frame(1)
    s.finish()
    np.testing.assert_array_equal(s.gpu.get(), twin_after(start, s.gpu.tfac, 12))
    assert s.steps == 12


def test_switching_variant_block_k_and_backend_keeps_the_field():
    s = gpu_scene("global")
    start = s.host_field().copy()
    s.advance_frame()
    s.knobs.set_variant("temporal")
    s.knobs.set_option("k", "4")
    s.advance_frame()
    s.knobs.set_block((64, 8))
    s.knobs.set_variant("pitched")
    s.advance_frame()
    s.set_backend("cpu")
    s.advance_frame()
    s.set_backend("gpu")
    s.knobs.set_variant("shared")
    s.advance_frame()
    s.finish()
    np.testing.assert_array_equal(s.gpu.get(), twin_after(start, s.gpu.tfac, 5 * SPEC.steps_per_frame))


@pytest.mark.parametrize("button", ["left", "right"])
def test_painting_on_the_gpu_changes_the_same_cells_as_on_the_cpu(button):
    seed = fresh_seed()
    gpu = create_scene("heat", preset="seed", n=NI * NJ, backend="gpu", seed=seed)
    cpu = create_scene("heat", preset="seed", n=NI * NJ, seed=seed)
    before = cpu.cpu.field.copy()
    np.testing.assert_array_equal(gpu.gpu.get(), before)
    for s in (gpu, cpu):
        s.controls.set_tool_value("radius", 4.3)
        s.controls.set_tool_value("temperature", 77.0)
        s.pointer(PointerEvent("press", 20.3, 30.9, button=button))
        s.pointer(PointerEvent("drag", 250.7, 140.2, button=button))  # one fast drag: no gaps either way
        s.pointer(PointerEvent("drag", 260.0, 20.0, button=button))
        s.pointer(PointerEvent("release", 260.0, 20.0, button=button))
    painted = gpu.gpu.get()
    np.testing.assert_array_equal(painted, cpu.cpu.field)
    changed = painted != before
    assert 0.02 < changed.mean() < 0.5
    assert np.all(painted[changed] == (77.0 if button == "left" else 0.0))
    gpu.advance_frame()
    cpu.advance_frame()
    np.testing.assert_array_equal(gpu.gpu.get(), cpu.cpu.field)


def test_the_view_writes_the_field_into_a_device_buffer():
    import cupy

    s = gpu_scene()
    s.advance_frame()
    view = s.view("temperature")
    assert view.on_device and view.shape == (NJ, NI) and view.tiles is None
    out = poisoned((NJ, NI))
    view.write(out)
    host = view.host()
    assert not np.isnan(host).any()
    np.testing.assert_array_equal(cupy.asnumpy(out), host)
    np.testing.assert_array_equal(host, s.gpu.get())


def test_verification_passes_every_correct_variant():
    s = gpu_scene("global")
    s.checks.set_on(True)
    for variant in SPEC.gpu.variants:
        s.knobs.set_variant(variant)
        s.checks.set_on(True)
        s.advance_frame()
        report = s.checks.verification
        assert report is not None and report.checked == NI * NJ and report.differing == 0, variant
        assert report.details["max error"] == 0.0 and report.details["compared"] == "bit for bit"
        assert report.details["steps checked"] == SPEC.steps_per_frame


def test_verification_with_fma_compares_within_a_tolerance():
    s = gpu_scene("temporal", fma="on")
    s.checks.set_on(True)
    for _ in range(3):
        s.advance_frame()
    report = s.checks.verification
    assert report.differing == 0 and "within" in report.details["compared"]
    assert report.details["max error"] < 1e-4


@pytest.mark.parametrize("variant", ["global", "temporal"])
def test_verification_flags_a_planted_wrong_factor(variant):
    import cupy

    with cuda.planted("sim/heat/stencil.cu", "-DPLANT_FACTOR=1.001f"):
        s = gpu_scene(variant)
        s.checks.set_on(True)
        s.advance_frame()
        report = s.checks.verification
        assert report.differing > NI * NJ // 2 and report.details["max error"] > 1e-3
        marked = np.flatnonzero(s.checks.mismatch)
        interior = marked[(marked % NI > 0) & (marked % NI < NI - 1)]
        item = int(interior[len(interior) // 2])
        name, gpu_text, cpu_text, _ = s.inspector.describe_check(item)[0]
        j, i = divmod(item, NI)
        assert name == "temperature" and np.float32(gpu_text) == s.gpu.get()[j, i]  # 9 digits: a float32 exactly
        assert float(cpu_text) != float(gpu_text)
        out = poisoned((NJ, NI))
        cupy.copyto(out, cupy.float32(-1.0))  # poison with a number: the marks must be written NaN
        s.view("temperature").write(out)
        drawn = cupy.asnumpy(out).reshape(-1)
        assert np.array_equal(np.isnan(drawn), s.checks.mismatch)
        assert np.array_equal(np.isnan(s.host_field().reshape(-1)), s.checks.mismatch)
        s.checks.set_on(False)
        assert not np.isnan(s.host_field()).any()


def test_block_colours_show_the_launch_s_tiles_and_cells_name_their_thread():
    s = gpu_scene("temporal", k="6")
    s.advance_frame()
    assert BLOCK_COLORS in s.color_modes
    view = s.view(BLOCK_COLORS)
    tiles = s.gpu.tiles()
    assert tiles.kernel == "temporal" and tiles.k == 6 and view.tiles == tiles.for_view() and view.tiles.halo >= 6
    i, j = 200, 100
    values = s.inspector.describe(j * NI + i)
    (bx, by), (tx, ty) = thread_of(tiles, i, j)
    assert f"block ({bx}, {by}), thread ({tx}, {ty}) of 32x8, temporal" in values["CUDA"]
    assert float(values["temperature"]) == pytest.approx(float(s.gpu.get()[j, i]), rel=1e-5)
    s.knobs.set_variant("global")
    assert s.view(BLOCK_COLORS).tiles.size == (32, 8) and s.view(BLOCK_COLORS).tiles.halo == 1


def test_a_kernel_that_does_not_compile_leaves_the_cpu_running(tmp_path):
    broken = tmp_path / "stencil.cu"
    broken.write_text(cuda.source_path("sim/heat/stencil.cu").read_text().replace("return c + tfac", "return c +;", 1))
    with cuda.replaced_source("sim/heat/stencil.cu", broken):
        s = gpu_scene("global")
        start = s.host_field().copy()
        s.advance_frame()  # the first step compiles
    assert s.backend == "cpu" and s.gpu is None and "stencil.cu" in s.gpu_error and s.gpu_reason
    np.testing.assert_array_equal(s.cpu.field, twin_after(start, s.cpu.tfac, SPEC.steps_per_frame))
    assert s.steps == SPEC.steps_per_frame


def test_stats_on_the_gpu_read_three_numbers():
    s = gpu_scene()
    for _ in range(4):
        s.advance_frame()
    s.timer.flush()
    field = s.gpu.get()
    lo, mean, hi = s.temperature_summary()
    assert (lo, hi) == (float(field.min()), float(field.max()))
    assert mean == pytest.approx(float(field.mean(dtype=np.float64)), rel=1e-9)
    s.advance_frame()
    assert s.readout.cell_update_rate() > 0


def test_the_summary_of_a_pitched_field_is_read_when_it_arrives():
    """The temporal kernel's rows are pitched (a strided view): the row-by-row reduction gives the host's
    figures, its copy arrives without a host wait of its own, and the readout shows it within its asks."""
    from sim.heat.stats import SUMMARY_ASKS

    s = gpu_scene()
    assert s.gpu.stride > s.ni, "pitched rows"
    s.advance_frame()
    read = s.start_temperature_summary()
    field = s.gpu.get()  # waits for the stream, so the copy queued before it has arrived
    assert read.ready()
    lo, mean, hi, nan, inf = read.values()
    assert (nan, inf) == (0, 0)
    assert (lo, hi) == (float(field.min()), float(field.max()))
    assert mean == pytest.approx(float(field.mean(dtype=np.float64)), rel=1e-9)
    first = s.stats()["temperature"]
    s.paint_stroke((NI / 2, NJ / 2), (NI / 2, NJ / 2), 3.0, 1000.0)  # a new highest cell
    for _ in range(SUMMARY_ASKS + 1):
        s.stats()
    s.gpu.get()
    time.sleep(0.3)  # past SUMMARY_SECONDS
    for _ in range(SUMMARY_ASKS + 1):
        s.stats()
    s.gpu.get()
    assert s.stats()["temperature"] != first and s.stats()["temperature"].endswith("max 1000")


def test_the_large_preset_runs_on_the_gpu():
    s = create_scene("heat", preset="large", backend="gpu")
    assert (s.ni, s.nj) == (10000, 10000) and s.knobs.variant == "temporal" and s.k == 8
    start = s.gpu.get()
    np.testing.assert_array_equal(start[:2], rand_field(10000, 2, 1))
    s.advance_frame()
    s.finish()
    np.testing.assert_array_equal(s.gpu.get(), twin_after(start, s.gpu.tfac, SPEC.steps_per_frame))
    assert s.steps == SPEC.steps_per_frame


# --- through CUDA-GL interop ------------------------------------------------------------------------


def test_the_field_through_interop_equals_the_host_upload():
    from gl_support import HostOnly, field_through_interop

    from viewer.headless import render_pixels

    s = gpu_scene()
    s.advance_frame()
    np.testing.assert_array_equal(field_through_interop(s, "temperature", (NJ, NI)), s.gpu.get())
    for mode in ("temperature", BLOCK_COLORS):
        through_interop = render_pixels(s, 600, 400, color_mode=mode).astype(int)
        through_host = render_pixels(HostOnly(s), 600, 400, color_mode=mode).astype(int)
        assert np.array_equal(through_interop, through_host), mode
    plain = render_pixels(s, 600, 400, color_mode="temperature").astype(int)
    assert np.any(np.abs(plain - through_interop) > 20, axis=2).mean() > 0.005, "block mode draws the tiles"
