"""The CUDA builds of the particles scene (CuPy-free): the step kernels per variant, precision,
block size and statistics switch."""

from __future__ import annotations

from sim.cuda import Build

VARIANTS = ("plain", "tiled", "blockscan")
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)
PRECISIONS = {"fp64": "double", "fp32": "float"}
NAMES = ("count_bins", "scatter", "step", "scan_blocks", "scan_sums", "add_sums")


def step(variant: str, precision: str, block: int, stats: bool) -> Build:
    options = [f"-DREAL={PRECISIONS[precision]}", f"-DBLOCK={block}"]
    names = list(NAMES)
    if variant == "tiled":
        options.append("-DTILED")
    if stats:
        options.append("-DSTATS")
        names.append("fold_stats")
    return Build("sim/particles/binning.cu", tuple(options), tuple(names))


def builds() -> list[Build]:
    every_block = [step("plain", "fp64", b, True) for b in BLOCK_SIZES]
    every_kind = [step(v, p, 256, s) for v in ("plain", "tiled") for p in PRECISIONS for s in (True, False)]
    return every_block + every_kind + [step("tiled", "fp64", 1024, True)]
