"""The CUDA builds of the particles scene (CuPy-free): the step kernels per variant, precision,
block size, statistics switch, re-sorting (scatter or gather) and force arithmetic."""

from __future__ import annotations

from sim.cuda import Build

VARIANTS = ("plain", "tiled", "blockscan", "texture")
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)
PRECISIONS = {"fp64": "double", "fp32": "float"}
REORDERS = ("scatter", "gather")  # the state written in bin order, or read through an index next step
# the course's sqrt and three divisions, or one rsqrt; "batch": each lane's interacting pairs held and
# added BATCH at a time, so that a warp pays the costly part per pair of its busiest lane
FORCES = ("course", "rsqrt", "batch", "batch-rsqrt")
BATCH = 4
BIN_SIDES = ("1", "1.5", "2", "3")  # GPU bin side in cutoffs (2 measured fastest with scatter and course)
NAMES = ("count_bins", "scatter", "place", "step", "scan_blocks", "scan_sums", "add_sums")


def step(variant: str, precision: str, block: int, stats: bool, reorder: str = "scatter",
         force: str = "course") -> Build:
    if reorder not in REORDERS or force not in FORCES:
        raise ValueError(f"unknown reorder {reorder!r} or force {force!r}")
    options = [f"-DREAL={PRECISIONS[precision]}", f"-DBLOCK={block}"]
    names = list(NAMES)
    if variant == "tiled":
        options.append("-DTILED")
    if variant == "texture":
        options.append("-DTEXTURE")
    if reorder == "gather":
        options.append("-DGATHER")
    if force.endswith("rsqrt"):
        options.append("-DRSQRT")
    if force.startswith("batch"):
        options.append(f"-DBATCH={BATCH}")
    if stats:
        options.append("-DSTATS")
        names.append("fold_stats")
    return Build("sim/particles/binning.cu", tuple(options), tuple(names))


def builds() -> list[Build]:
    every_block = [step("plain", "fp64", b, True) for b in BLOCK_SIZES]
    every_kind = [step(v, p, 256, s) for v in VARIANTS for p in PRECISIONS for s in (True, False)]
    candidates = [step(v, p, 256, s, r, f) for v in VARIANTS for p in PRECISIONS for s in (True, False)
                  for r in REORDERS for f in FORCES if (r, f) != ("scatter", "course")]
    return every_block + every_kind + candidates + [step("tiled", "fp64", 1024, True)]
