"""Every heat GPU variant x block shape (x k) bit-identical to the CPU twin on fresh random fields of
odd sizes, outputs poisoned before every launch; the FMA build's course-sized difference; paint,
write_into, switching variants, the launch checks and the command (pytest -m gpu on a GPU machine)."""

import functools

import numpy as np
import pytest

from sim.heat import course, kernels
from sim.heat.stencil_cpu import HeatCpu

pytestmark = pytest.mark.gpu

SIZES = [(3, 3), (5, 4), (37, 29), (130, 67), (257, 131), (300, 9), (1031, 533)]
TFAC = 0.2  # moves the field far more than the DLI's factor: ordering mistakes show


@functools.cache
def field(ni, nj):
    return (np.random.default_rng().random((nj, ni)) * 100).astype(np.float32)


@functools.cache
def expected(ni, nj, steps):
    twin = HeatCpu(field(ni, nj), TFAC)
    twin.advance(steps)
    return twin.field


def poisoned_run(heat, steps):
    """``steps`` steps, the output buffer (padding included) filled with NaN before each launch."""
    for k in heat.launches(steps):
        heat._b.fill(np.nan)
        heat.step(k)  # one launch: k <= heat.k
    return heat.get()


@pytest.mark.parametrize("block", kernels.BLOCK_SHAPES, ids=lambda b: f"{b[0]}x{b[1]}")
@pytest.mark.parametrize("kernel", ["global", "shared", "pitched"])
def test_single_step_variants_are_bit_identical(kernel, block):
    from sim.heat.gpu import HeatGpu

    for ni, nj in SIZES:
        heat = HeatGpu(field(ni, nj), 0, kernel, block, tfac=TFAC)
        done = 0
        for steps in (0, 1, 6):
            done += steps
            np.testing.assert_array_equal(poisoned_run(heat, steps), expected(ni, nj, done), err_msg=f"{ni}x{nj}")


@pytest.mark.parametrize("block", kernels.BLOCK_SHAPES, ids=lambda b: f"{b[0]}x{b[1]}")
def test_temporal_is_bit_identical_for_every_k(block):
    from sim.heat.gpu import HeatGpu

    for ni, nj in SIZES:
        for k in range(1, kernels.K_MAX + 1):
            heat = HeatGpu(field(ni, nj), 0, "temporal", block, k, tfac=TFAC)
            assert poisoned_run(heat, 0).tobytes() == field(ni, nj).tobytes()
            got = poisoned_run(heat, 19)  # not a multiple of k (but for k = 1): a shorter last launch
            np.testing.assert_array_equal(got, expected(ni, nj, 19), err_msg=f"{ni}x{nj} k={k}")


@pytest.mark.parametrize(
    "kernel, block, k",
    [("global", (32, 8), 1), ("shared", (32, 8), 1), ("pitched", (64, 4), 1), ("temporal", (32, 4), 8)],
)
def test_the_fma_build_shows_the_course_difference(kernel, block, k):
    from sim.heat.gpu import HeatGpu

    start = course.initial_field(course.NI, course.NJ)
    twin = HeatCpu(start, course.TFAC)
    twin.advance(course.STEPS)
    exact = HeatGpu(start, 0, kernel, block, k)
    exact.step(course.STEPS)
    np.testing.assert_array_equal(exact.get(), twin.field)
    fused = HeatGpu(start, 0, kernel, block, k, fma=True)
    fused.step(course.STEPS)
    result = fused.get()
    error = course.max_error(result, twin.field)
    differing = np.count_nonzero(result != twin.field) / result.size
    assert 0 < error <= course.TOLERANCE and error < 1e-4
    assert 0.001 < differing < 0.5
    assert course.check_line(error)[1]


@pytest.mark.parametrize(
    "kernel, block, k", [("global", (32, 8), 1), ("temporal", (32, 4), 5), ("shared", (128, 2), 1)]
)
def test_paint_on_the_device_paints_the_host_cells(kernel, block, k):
    from sim.heat.gpu import HeatGpu

    start = field(257, 131)
    heat, twin = HeatGpu(start, 0, kernel, block, k, tfac=TFAC), HeatCpu(start, TFAC)
    for x, y, radius, value in (
        (10.5, 20.25, 7.3, 300.0),
        (0.0, 130.0, 12.0, -5.0),
        (256.2, 64.0, 3.0, 77.0),
        (128.0, 65.5, 0.5, 1000.0),
        (-40.0, 10.0, 2.0, 5.0),
    ):
        heat.paint(x, y, radius, value)
        twin.paint(x, y, radius, value)
        np.testing.assert_array_equal(heat.get(), twin.field)
        heat.step(7)
        twin.advance(7)
        np.testing.assert_array_equal(heat.get(), twin.field)


def test_write_into_fills_a_device_array():
    import cupy

    from sim.heat.gpu import HeatGpu

    heat = HeatGpu(field(130, 67), 0, "temporal", (64, 4), 3, tfac=TFAC)
    heat.step(4)
    out = cupy.full((67, 130), cupy.nan, cupy.float32)
    heat.write_into(out)
    np.testing.assert_array_equal(cupy.asnumpy(out), expected(130, 67, 4))
    with pytest.raises(ValueError):
        heat.write_into(cupy.zeros((130, 67), cupy.float32))


def test_switching_variants_keeps_the_state():
    from sim.heat.gpu import HeatGpu

    ni, nj = 257, 131
    heat = HeatGpu(field(ni, nj), 0, "global", (32, 8), tfac=TFAC)
    done = 0
    plan = (
        ("global", (32, 8), 1, 3),
        ("temporal", (128, 4), 6, 9),
        ("shared", (64, 8), 1, 2),
        ("pitched", (256, 1), 1, 4),
        ("temporal", (32, 16), 2, 5),
        ("global", (32, 4), 1, 1),
    )
    for kernel, block, k, steps in plan:
        heat.configure(kernel, block, k)
        heat.step(steps)
        done += steps
        np.testing.assert_array_equal(heat.get(), expected(ni, nj, done), err_msg=kernel)
    assert heat.steps_done == done
    elapsed = heat.advance(11, chunk_seconds=1e-4)  # a chunk a launch
    assert elapsed > 0
    np.testing.assert_array_equal(heat.get(), expected(ni, nj, done + 11))


def test_shapes_a_variant_cannot_run_are_refused_before_launch():
    from sim.heat.gpu import HeatGpu, KernelError, check_launch

    with pytest.raises(KernelError, match="1024"):
        check_launch("global", (64, 32))
    with pytest.raises(KernelError, match="multiple of 32"):
        check_launch("temporal", (48, 2), 4)
    with pytest.raises(KernelError, match="1..8"):
        check_launch("temporal", (32, 4), 9)
    with pytest.raises(KernelError, match="unknown kernel"):
        check_launch("texture", (32, 4))
    with pytest.raises(KernelError):
        HeatGpu(field(37, 29), 0, "shared", (2048, 1))
    heat = HeatGpu(field(37, 29), 0, "global", (32, 8))
    with pytest.raises(KernelError):
        heat.configure("temporal", (96, 1), 0)
    assert (heat.kernel, heat.block) == ("global", (32, 8))  # unchanged


def test_temporal_launch_bounds_cap_the_registers():
    from sim.heat.gpu import HeatGpu

    heat = HeatGpu(field(257, 131), 0, "temporal", (32, 4), 8)
    for block, cap in (((32, 8), 128), ((64, 8), 128), ((32, 32), 64)):  # 256 threads and more: 16 warps an SM
        heat.configure(block=block)
        info = heat.launch_info()
        assert info["registers"] <= cap and info["blocks_per_sm"] * block[0] * block[1] >= 512
    for block in ((32, 4), (32, 2), (64, 2)):  # smaller blocks: the registers k = 8 wants, no spills, 12 warps
        heat.configure(block=block)
        info = heat.launch_info()
        assert info["local_bytes"] == 0 and info["blocks_per_sm"] * block[0] * block[1] >= 384, (block, info)
    tiles = heat.tiles()
    assert tiles.grid == heat.launch_grid() and tiles.halo_y == 8


def heat_command(capsys, *args):
    import main

    code = main.main(["heat", *map(str, args)])
    return code, capsys.readouterr().out.splitlines()


def test_the_command_compares_every_kernel_with_the_cpu(capsys, tmp_path):
    code, lines = heat_command(capsys, "--backend", "gpu", "--kernel", "all", "--compare")
    assert code == 0
    assert lines[0] == "84.01878 12.91487 43.08361 "
    assert "Grid: 7 x 13 blocks of 32 x 8 threads (global)" in lines  # 200 columns / 32, 100 rows / 8
    for kernel in ("global", "shared", "pitched", "temporal"):
        assert f"The Max Error of 0.00000 is within acceptable bounds. ({kernel})" in lines
    code, lines = heat_command(capsys, "--backend", "gpu", "--fma", "--compare")
    assert code == 0 and lines[-1].startswith("The Max Error of 0.0000")
    assert lines[-1].endswith(" is within acceptable bounds.")
    path = tmp_path / "t.f32"
    code, lines = heat_command(
        capsys,
        "--backend",
        "gpu",
        "--kernel",
        "temporal",
        "--k",
        3,
        "--block",
        "64x4",
        "--ni",
        301,
        "--nj",
        77,
        "--steps",
        10,
        "--factor",
        0.2,
        "--output",
        path,
    )
    twin = HeatCpu(course.initial_field(301, 77), 0.2)
    twin.advance(10)
    assert code == 0 and path.read_bytes() == twin.field.tobytes()
