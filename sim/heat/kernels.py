"""The CUDA builds of the heat stencil (CuPy-free), and the geometry of each variant's launch.

Two kinds of build of ``sim/heat/stencil.cu``, each with and without ``--fmad`` (``--fma``):
the simple one (``step_global``, ``step_shared``, ``paint``: block shape read at run time, a few
registers, launch bounds would not pay) and the temporal one per thread count bucket
(``step_temporal_1`` .. ``step_temporal_8`` under ``__launch_bounds__(threads)``: the register
pipeline is large, so the compiler must know how many threads share the register file).

The temporal kernel's geometry (``halo``, ``width``, ``LaunchTiles``) lives here so that tests and a
viewer overlay can use it without a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.gpu.cuda import Build, ceil_div

SOURCE = "sim/heat/stencil.cu"
KERNELS = ("global", "shared", "pitched", "temporal")
BLOCK_SHAPES = ((32, 4), (32, 8), (32, 16), (32, 32), (64, 4), (64, 8), (128, 2), (128, 4), (256, 1))
K_MAX = 8  # temporal steps per launch: 1..K_MAX
COLS = 4  # cells per lane in the temporal kernel (one float4)
STRIP = 32 * COLS  # columns one warp of the temporal kernel reads
THREAD_BUCKETS = (32, 64, 128, 256, 512, 1024)  # temporal builds: __launch_bounds__ per bucket
MAX_GRID_Y = 65535


def fmad(fma: bool) -> str:
    return "--fmad=true" if fma else "--fmad=false"


def simple(fma: bool = False) -> Build:
    return Build(SOURCE, (fmad(fma),), ("step_global", "step_shared", "paint"))


def thread_bucket(threads: int) -> int:
    """The smallest launch-bounds bucket that holds ``threads`` (1..1024)."""
    return next(b for b in THREAD_BUCKETS if b >= threads)


def temporal(threads: int, fma: bool = False) -> Build:
    names = tuple(f"step_temporal_{k}" for k in range(1, K_MAX + 1))
    return Build(SOURCE, (fmad(fma), f"-DTEMPORAL_THREADS={thread_bucket(threads)}", f"-DK_MAX={K_MAX}"), names)


def builds() -> list[Build]:
    fmas = (False, True)
    return [simple(f) for f in fmas] + [temporal(t, f) for t in THREAD_BUCKETS for f in fmas]


def halo(k: int) -> int:
    """Columns a temporal warp reads left of those it writes: k rounded up to whole float4s."""
    return ceil_div(k, COLS) * COLS


def width(k: int) -> int:
    """Columns a temporal warp writes (its strip less both overlaps, whole float4s)."""
    return (STRIP - halo(k) - k) // COLS * COLS


def dense_kernel(kernel: str) -> bool:
    """global and shared run on dense rows (stride ni); pitched and temporal on padded rows."""
    return kernel in ("global", "shared")


@dataclass(frozen=True)
class LaunchTiles:
    """Which CUDA block writes which cell: block (bx, by) writes columns [bx*tile_w, (bx+1)*tile_w)
    and rows [by*tile_h, (by+1)*tile_h) (clipped to the grid); rows past grid_y * tile_h wrap round
    (global and shared loop over rows in steps of the grid). A block reads ``halo_left`` columns
    left of its tile, ``halo_right`` right, ``halo_y`` rows above and below."""

    kernel: str
    block: tuple[int, int]
    k: int
    tile_w: int
    tile_h: int
    halo_left: int
    halo_right: int
    halo_y: int
    grid: tuple[int, int]
    warp_w: int  # temporal: a warp's strip writes warp_w columns ...
    warp_h: int  # ... of warp_h rows (global/shared/pitched: 32 threads of a block row)

    def block_of(self, i, j):
        """(block x, block y) of cells (i, j); numpy arrays or ints."""
        i, j = np.asarray(i), np.asarray(j)
        return i // self.tile_w, (j // self.tile_h) % self.grid[1]

    def block_map(self, ni: int, nj: int) -> np.ndarray:
        """(nj, ni) int32: the linear index (by * grid_x + bx) of the block writing each cell."""
        bx, by = self.block_of(np.arange(ni)[None, :], np.arange(nj)[:, None])
        return (by * self.grid[0] + bx).astype(np.int32)

    def for_view(self):
        """The viewer's ``sim.contract.Tiles`` (rectangles from (0, 0), the widest halo)."""
        from sim.contract import Tiles

        return Tiles(size=(self.tile_w, self.tile_h), halo=max(self.halo_left, self.halo_right, self.halo_y))


def launch_grid(kernel: str, ni: int, nj: int, block: tuple[int, int], k: int = 1, rows: int = 1) -> tuple[int, int]:
    """Blocks (x, y) a launch uses; ``rows`` is the temporal band height."""
    bx, by = block
    if kernel == "temporal":
        return ceil_div(ceil_div(ni, width(k)), bx // 32), ceil_div(ceil_div(nj, rows), by)
    return ceil_div(ni, bx), min(ceil_div(nj, by), MAX_GRID_Y)


def tiles(kernel: str, ni: int, nj: int, block: tuple[int, int], k: int = 1, rows: int = 1) -> LaunchTiles:
    bx, by = block
    grid = launch_grid(kernel, ni, nj, block, k, rows)
    if kernel == "temporal":
        w = width(k)
        return LaunchTiles(kernel, block, k, (bx // 32) * w, by * rows, halo(k), STRIP - halo(k) - w, k, grid, w, rows)
    return LaunchTiles(kernel, block, 1, bx, by, 1, 1, 1, grid, 32, 1)


BAND_ROWS = 96  # a temporal band's most rows (band_rows)


def band_rows(ni: int, nj: int, block: tuple[int, int], k: int, slots: int) -> int:
    """Rows per temporal band for ``slots`` resident blocks on the device (SMs x blocks per SM).

    A band computes 2k rows it does not write, so taller bands waste less, but only up to a point: the halo
    rows a band re-reads were read moments before by the band above it, and from L2 only while bands are
    short. On an H200 at 10000^2, k = 8, 32x4: bands of 84 / 96 / 112 / 128 / 160 rows ran at 2.03 / 2.08 /
    2.06 / 2.05 / 2.03 T cell-updates/s (and 625 rows 1.45 T with an older kernel). So bands are as tall as
    BAND_ROWS allows, split evenly; how the last wave of blocks fills did not predict those timings. On a grid
    too small to give every warp slot of the device a band, bands are shorter, so that every slot gets one.
    """
    bx, by = block
    strips = ceil_div(ni, width(k))  # warps across the grid
    warp_slots = max(1, slots) * (bx // 32) * by
    bands = max(ceil_div(nj, BAND_ROWS), ceil_div(warp_slots, strips))
    rows = ceil_div(nj, min(bands, nj))
    while ceil_div(ceil_div(nj, rows), by) > MAX_GRID_Y:  # only for absurdly tall grids
        rows *= 2
    return rows


# --- speed of light (sim.gpu.roofline): per cell and step -------------------------------------------------------
# Nsight Compute, H200: 0.367 warp instructions per cell-update in the temporal kernel at k = 8, fma off: 0.2936 G
# in one frame of 8 steps over 10000^2 cells at block 32x4, bands of 96 rows (bench/ncu_models.sh). What the
# variant executes, not an algorithmic minimum: the step is bound by the schedulers' issue slots.
TEMPORAL_K8_INSTRUCTIONS = 0.2936e9 / (10_000 * 10_000 * 8)


def models(setup) -> dict:
    """The step per cell-update: float32 cells, ``setup.steps`` steps over ``setup.n`` cells."""
    from sim.gpu.roofline import StageModel

    kernel = setup.variant or "temporal"
    k = int(setup.options.get("k", 1)) if kernel == "temporal" else 1
    # The least: each step reads every cell once and writes it once (4 B + 4 B); the neighbours come
    # from on-chip copies. Arithmetic (stencil.cu's heat_update): l - 2c + r and u - 2c + d (3 FLOP each),
    # their sum, times tfac, plus c: 9 FLOP, in 7 FP32 instructions (l - 2c and u - 2c each one fused).
    # What moves: global, shared and pitched read each cell five times (itself and as four neighbours), but
    # rows meet again in L1/L2, so DRAM sees about the 8 B; temporal k keeps k steps on chip between one
    # read and one write: 8 B per k steps (its halos, 2k rows a band and overlapping warp strips, are L2 hits).
    # Temporal also computes cells it does not write: a warp's strip overlaps its neighbours' (STRIP columns
    # read for width(k) written) and a band computes 2k rows beyond its own (bands of about BAND_ROWS rows):
    # at k = 8, 1.33 updates computed for each kept. Its limit is the schedulers' issue slots, not DRAM, and
    # not the FLOPs alone: a thread issues about 11.7 instructions a kept update (TEMPORAL_K8_INSTRUCTIONS x 32),
    # of which the updates' FP32 arithmetic is about 9.3 (7 x 1.33); the neighbours' shuffles, the rows' loads
    # and stores and the pipeline's bookkeeping are the rest (Nsight Compute: bench/ncu_models.sh).
    # Instructions: temporal at k = 8 with fma off, as measured; other kernels, k and fma are unmeasured.
    recompute = STRIP / width(k) * (BAND_ROWS + 2 * k) / BAND_ROWS if kernel == "temporal" else 1.0
    measured = kernel == "temporal" and k == 8 and setup.options.get("fma", "off") == "off"
    counted = "; instructions as measured at 10000^2" if measured else "; no instruction count: no issue limit"
    note = {
        "temporal": f"k = {k} steps on chip between a read and a write: 8/k B per update; "
        f"{recompute:.2f} updates computed for each kept (overlapping strips and bands){counted}",
        "shared": "neighbours staged in shared memory; DRAM reads each cell once",
    }.get(kernel, "each cell read 5 times through L1/L2; DRAM about once")
    if kernel != "temporal":
        note += counted
    return {
        "step": StageModel(
            bytes_min=8.0,
            bytes_actual=8.0 / k,
            flops=9.0 * recompute,
            units=setup.n * setup.steps,
            per="item-step",
            flop_kind="fp32",
            note=note,
            instructions=TEMPORAL_K8_INSTRUCTIONS if measured else 0.0,
        )
    }
