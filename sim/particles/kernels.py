"""The CUDA builds of the particles scene (CuPy-free): the step kernels per variant, precision,
block size and statistics switch, for one GPU (gather re-sorting) and for MPI ranks
(the state scattered into bin order, which their ghost and migrant slices need)."""

from __future__ import annotations

from sim.cuda import SCAN_KERNELS, Build

VARIANTS = ("plain", "tiled", "blockscan", "texture")
RANK_VARIANTS = ("plain", "tiled", "blockscan")  # texture reads from the start of a buffer; ranks start mid-buffer
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)
DEFAULT_BLOCK = 128  # a little faster than 256 at 1M and 10M (bench/results/h200-particles-gather-blocks.json)
# Bin side in cutoffs (at least 1: a particle's reach stays within its 9 bins). Wider bins cost more
# candidate tests but less counting, scanning and clearing; on an H200 2.5 beat 2 and 3 at 1M and 10M.
BIN_CUTOFFS = 2.5
PRECISIONS = {"fp64": "double", "fp32": "float"}
NAMES = ("count_bins", "scatter", "place", "step", "scan_blocks", "add_sums", *SCAN_KERNELS)


def step(variant: str, precision: str, block: int, stats: bool, ranks: bool = False) -> Build:
    """The scene's build (gather re-sorting), or with ``ranks`` the MPI ranks' (scatter into bin order)."""
    options = [f"-DREAL={PRECISIONS[precision]}", f"-DBLOCK={block}"]
    names = list(NAMES)
    if variant == "tiled":
        options.append("-DTILED")
    if variant == "texture":
        options.append("-DTEXTURE")
    if not ranks:
        options.append("-DGATHER")
    if stats:
        options.append("-DSTATS")
        names.append("fold_stats")
    return Build("sim/particles/binning.cu", tuple(options), tuple(names))


def builds() -> list[Build]:
    every_block = [step("plain", "fp64", b, True) for b in BLOCK_SIZES]
    every_kind = [step(v, p, DEFAULT_BLOCK, s) for v in VARIANTS for p in PRECISIONS for s in (True, False)]
    ranks = [step(v, p, 256, s, ranks=True) for v in RANK_VARIANTS for p in PRECISIONS for s in (True, False)]
    return every_block + every_kind + ranks + [step("tiled", "fp64", 1024, True)]
