"""The heat CPU twin: bit for bit against the DLI's C code (init, printout, steps) and a numpy loop;
the boundary, zero steps, chunked and banded runs, painting; the GPU launch geometry (no GPU)."""

import shutil
import subprocess

import numpy as np
import pytest

from sim.heat import course, kernels, stencil_cpu
from sim.heat.stencil_cpu import HeatCpu

# The DLI programme's CPU path as written (init, printf, step_kernel_ref, pointer swap), sizes and
# step count from the command line; the final field goes to stdout as raw float32.
DLI_REFERENCE = r"""
#include <stdio.h>
#include <stdlib.h>
#define I2D(num, c, r) ((r)*(num)+(c))
void step_kernel_ref(int ni, int nj, float fact, float* temp_in, float* temp_out) {
  int i00, im10, ip10, i0m1, i0p1;
  float d2tdx2, d2tdy2;
  for (int j = 1; j < nj - 1; j++) {
    for (int i = 1; i < ni - 1; i++) {
      i00 = I2D(ni, i, j); im10 = I2D(ni, i - 1, j); ip10 = I2D(ni, i + 1, j);
      i0m1 = I2D(ni, i, j - 1); i0p1 = I2D(ni, i, j + 1);
      d2tdx2 = temp_in[im10] - 2 * temp_in[i00] + temp_in[ip10];
      d2tdy2 = temp_in[i0m1] - 2 * temp_in[i00] + temp_in[i0p1];
      temp_out[i00] = temp_in[i00] + fact * (d2tdx2 + d2tdy2);
    }
  }
}
int main(int argc, char** argv) {
  int ni = atoi(argv[1]), nj = atoi(argv[2]), nstep = atoi(argv[3]);
  float tfac = 8.418e-5;
  float* temp1 = malloc(sizeof(float) * ni * nj);
  float* temp2 = malloc(sizeof(float) * ni * nj);
  for (int i = 0; i < ni * nj; ++i) temp1[i] = temp2[i] = (float)rand() / (float)(RAND_MAX / 100.0f);
  if (ni * nj > 6700) fprintf(stderr, "%.5f %.5f %.5f \n", temp1[0], temp1[4500], temp1[6700]);
  for (int istep = 0; istep < nstep; istep++) {
    step_kernel_ref(ni, nj, tfac, temp1, temp2);
    float* t = temp1; temp1 = temp2; temp2 = t;
  }
  fwrite(temp1, sizeof(float), ni * nj, stdout);
  return 0;
}
"""


@pytest.fixture(scope="module")
def dli(tmp_path_factory):
    """The C reference built with the machine's C compiler, no fused multiply-adds."""
    if shutil.which("cc") is None:
        pytest.skip("a C compiler (cc) is needed to build the DLI reference")
    folder = tmp_path_factory.mktemp("dli")
    (folder / "heat.c").write_text(DLI_REFERENCE)
    subprocess.run(["cc", "-O2", "-ffp-contract=off", "-o", str(folder / "heat"), str(folder / "heat.c")], check=True)

    def run(ni, nj, steps):
        done = subprocess.run([str(folder / "heat"), str(ni), str(nj), str(steps)], capture_output=True, check=True)
        return np.frombuffer(done.stdout, "<f4").reshape(nj, ni), done.stderr.decode()

    return run


def twin(field, steps, tfac=course.TFAC):
    heat = HeatCpu(field, tfac)
    heat.advance(steps)
    return heat.field


def test_init_and_printout_match_the_dli_programme(dli):
    field, printed = dli(course.NI, course.NJ, 0)
    ours = course.initial_field(course.NI, course.NJ)
    np.testing.assert_array_equal(ours, field)
    assert course.initial_cells_line(ours) + "\n" == printed
    assert printed.startswith("84.01878 ")  # glibc's first rand() after srand(1): 1804289383


@pytest.mark.parametrize(
    "ni, nj, steps", [(course.NI, course.NJ, course.STEPS), (37, 23, 5), (3, 3, 4), (101, 7, 13), (64, 65, 1)]
)
def test_steps_are_bit_identical_to_the_dli_c_code(dli, ni, nj, steps):
    reference, _ = dli(ni, nj, steps)
    np.testing.assert_array_equal(twin(course.initial_field(ni, nj), steps), reference)


def numpy_loop(field, steps, tfac):
    """The update with numpy slices, float32, in the course's order; boundary untouched."""
    a = field.copy()
    b = field.copy()
    two, tfac = np.float32(2), np.float32(tfac)
    for _ in range(steps):
        c = a[1:-1, 1:-1]
        d2tdx2 = a[1:-1, :-2] - two * c + a[1:-1, 2:]
        d2tdy2 = a[:-2, 1:-1] - two * c + a[2:, 1:-1]
        b[1:-1, 1:-1] = c + tfac * (d2tdx2 + d2tdy2)
        a, b = b, a
    return a


@pytest.mark.parametrize("ni, nj", [(3, 3), (5, 4), (37, 29), (131, 17), (9, 201)])
def test_twin_matches_a_numpy_loop_on_fresh_random_fields(ni, nj):
    rng = np.random.default_rng()
    field = (rng.random((nj, ni)) * 100).astype(np.float32)
    tfac = np.float32(rng.uniform(0.01, 0.249))  # moves the field far more than the DLI's factor
    steps = int(rng.integers(1, 40))
    ours = twin(field, steps, tfac)
    np.testing.assert_array_equal(ours, numpy_loop(field, steps, tfac))
    if ni > 2 and nj > 2 and steps:
        assert not np.array_equal(ours[1:-1, 1:-1], field[1:-1, 1:-1])


def test_zero_steps_and_the_boundary_ring():
    field = (np.random.default_rng().random((23, 31)) * 100).astype(np.float32)
    heat = HeatCpu(field, 0.2)
    heat.advance(0)
    np.testing.assert_array_equal(heat.field, field)
    heat.advance(7)
    for buffer in (heat.field, heat._scratch):
        for edge in (np.s_[0, :], np.s_[-1, :], np.s_[:, 0], np.s_[:, -1]):
            np.testing.assert_array_equal(buffer[edge], field[edge])
    assert heat.steps_done == 7
    with pytest.raises(ValueError):
        heat.advance(-1)


def test_chunked_and_banded_runs_give_the_same_field(monkeypatch):
    field = (np.random.default_rng().random((61, 47)) * 100).astype(np.float32)
    whole = twin(field, 25, 0.1)
    calls = []
    heat = HeatCpu(field, 0.1)
    heat._rate = 1e5  # pretend the CPU is slow: chunks of 7 steps (a slow chunk on a busy machine re-measures)
    heat.advance(25, progress=lambda done, total: calls.append(done))
    np.testing.assert_array_equal(heat.field, whole)
    assert calls[0] == 7 and calls[-1] == 25 and calls == sorted(calls)
    bands = []
    sweep = stencil_cpu._sweep
    monkeypatch.setattr(stencil_cpu, "_sweep", lambda a, b, t, j0, j1: (bands.append(j1 - j0), sweep(a, b, t, j0, j1)))
    banded = HeatCpu(field, 0.1)
    banded._rate = 1e3  # one step is longer than a chunk: bands of 4 rows
    banded.advance(1)
    assert bands == [4] * 14 + [3]
    banded.advance(24)
    np.testing.assert_array_equal(banded.field, whole)
    assert banded.steps_done == 25


def test_paint_sets_a_disc_in_both_buffers_boundary_included():
    field = (np.random.default_rng().random((30, 40)) * 100).astype(np.float32)
    heat = HeatCpu(field, 0.2)
    count = heat.paint(2.5, 3.25, 4.0, 250.0)
    jj, ii = np.mgrid[0:30, 0:40]
    disc = (ii - 2.5) ** 2 + (jj - 3.25) ** 2 <= 16.0
    assert count == disc.sum() and disc[:, 0].any()
    for buffer in (heat.field, heat._scratch):
        np.testing.assert_array_equal(buffer[disc], np.float32(250.0))
        np.testing.assert_array_equal(buffer[~disc], field[~disc])
    heat.advance(5)
    assert (heat.field[:, 0][disc[:, 0]] == np.float32(250.0)).all()  # painted boundary cells hold
    assert heat.paint(-50, -50, 3, 1.0) == 0
    with pytest.raises(ValueError):
        heat.paint(np.nan, 1, 1, 1)


def test_course_check_wording_and_the_small_grid_printout():
    assert course.check_line(0.0) == ("The Max Error of 0.00000 is within acceptable bounds.", True)
    assert course.check_line(0.0005)[1]
    line, passed = course.check_line(0.00051)
    assert line == "Problem! The Max Error of 0.00051 is NOT within acceptable bounds." and not passed
    small = np.arange(5000, dtype=np.float32).reshape(50, 100)
    assert course.initial_cells_line(small) == "0.00000 4500.00000 - "
    a = np.zeros((3, 3), np.float32)
    b = a.copy()
    b[1, 1] = -3e-5
    assert course.max_error(a, b) == pytest.approx(3e-5)


@pytest.mark.parametrize("kernel", kernels.KERNELS)
@pytest.mark.parametrize("ni, nj", [(3, 3), (37, 29), (1000, 131), (10000, 333)])
def test_every_cell_belongs_to_exactly_one_block(kernel, ni, nj):
    for block in kernels.BLOCK_SHAPES:
        for k in range(1, kernels.K_MAX + 1) if kernel == "temporal" else [1]:
            rows = kernels.band_rows(ni, nj, block, k, slots=132 * 4) if kernel == "temporal" else 1
            tiles = kernels.tiles(kernel, ni, nj, block, k, rows)
            gx, gy = kernels.launch_grid(kernel, ni, nj, block, k, rows)
            assert tiles.grid == (gx, gy) and gy <= kernels.MAX_GRID_Y
            ids = tiles.block_map(ni, nj)
            assert ids.min() >= 0 and ids.max() < gx * gy
            # tiles are rectangles: block x grows with i, block y with j, each block's cells contiguous
            bx, by = tiles.block_of(np.arange(ni), np.arange(nj) % (gy * tiles.tile_h))
            assert (np.diff(bx) >= 0).all() and bx[-1] == gx - 1
            if kernel == "temporal":
                assert tiles.halo_left >= k and tiles.halo_right >= k and tiles.halo_y == k
                assert tiles.halo_left + tiles.warp_w + tiles.halo_right == kernels.STRIP
                assert tiles.halo_left % kernels.COLS == 0 and tiles.warp_w % kernels.COLS == 0


def test_tiles_for_the_viewer():
    tiles = kernels.tiles("temporal", 1000, 500, (64, 4), 8, 37)
    assert (tiles.tile_w, tiles.tile_h, tiles.grid) == (2 * kernels.width(8), 4 * 37, (5, 4))
    view = tiles.for_view()
    assert view.size == (224, 148) and view.origin == (0, 0) and view.halo == 8
    assert kernels.tiles("shared", 1000, 500, (32, 8)).for_view().halo == 1


def test_band_rows_are_as_tall_as_allowed_and_fill_small_grids():
    # 10000^2, k = 8, 132 SMs x 3 blocks of 128 threads (2 of 256): even bands of the most rows allowed
    for block, slots in (((32, 4), 396), ((64, 2), 396), ((32, 8), 264)):
        assert kernels.band_rows(10000, 10000, block, 8, slots) == kernels.BAND_ROWS  # 10000 = 104 x 96 + 16
    assert kernels.band_rows(5000, 5000, (32, 4), 8, 396) == 95  # 53 bands, not 52 of 96 and one of 8
    # 1000^2: 9 strips of warps; 1584 warp slots want 176 bands, so bands of 6 rows
    assert kernels.band_rows(1000, 1000, (32, 4), 8, 396) == 6  # 1000 / 176, rounded up
    assert kernels.band_rows(3, 3, (32, 4), 8, 528) == 1
    assert kernels.band_rows(10000, 200_000, (32, 1), 1, 396) <= kernels.BAND_ROWS


def test_builds_cover_every_launch():
    builds = kernels.builds()
    assert {kernels.thread_bucket(bx * by) for bx, by in kernels.BLOCK_SHAPES} <= set(kernels.THREAD_BUCKETS)
    assert all(kernels.temporal(bx * by, fma) in builds for bx, by in kernels.BLOCK_SHAPES for fma in (False, True))
    assert kernels.simple(False) in builds and kernels.simple(True) in builds
    assert all("--fmad=false" in b.options or "--fmad=true" in b.options for b in builds)
    assert kernels.thread_bucket(96) == 128 and kernels.thread_bucket(1024) == 1024
