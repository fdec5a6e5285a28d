"""The CUDA builds of the particles scene (CuPy-free): the step kernels per variant, precision,
block size, statistics switch and force evaluation, for one GPU (gather re-sorting) and for MPI ranks
(the state scattered into bin order, which their ghost and migrant slices need)."""

from __future__ import annotations

from sim.cuda import Build

VARIANTS = ("plain", "tiled", "blockscan", "texture")
RANK_VARIANTS = ("plain", "tiled", "blockscan")  # texture reads from the start of a buffer; ranks start mid-buffer
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)
PRECISIONS = {"fp64": "double", "fp32": "float"}
# a candidate kept one more round: "batch-rsqrt" holds each lane's interacting pairs and adds them BATCH at
# a time (a warp pays the force per pair of its busiest lane); it lost to the plain loop at 10M on an H200
FORCES = ("rsqrt", "batch-rsqrt")
BATCH = 4
NAMES = ("count_bins", "scatter", "place", "step", "scan_blocks", "scan_sums", "add_sums")


def step(variant: str, precision: str, block: int, stats: bool, force: str = "rsqrt", ranks: bool = False) -> Build:
    """The scene's build (gather re-sorting), or with ``ranks`` the MPI ranks' (scatter into bin order)."""
    if force not in FORCES:
        raise ValueError(f"unknown force {force!r} (choose from {', '.join(FORCES)})")
    options = [f"-DREAL={PRECISIONS[precision]}", f"-DBLOCK={block}"]
    names = list(NAMES)
    if variant == "tiled":
        options.append("-DTILED")
    if variant == "texture":
        options.append("-DTEXTURE")
    if not ranks:
        options.append("-DGATHER")
    if force == "batch-rsqrt":
        options.append(f"-DBATCH={BATCH}")
    if stats:
        options.append("-DSTATS")
        names.append("fold_stats")
    return Build("sim/particles/binning.cu", tuple(options), tuple(names))


def builds() -> list[Build]:
    every_block = [step("plain", "fp64", b, True) for b in BLOCK_SIZES]
    every_kind = [step(v, p, 256, s, f) for v in VARIANTS for p in PRECISIONS for s in (True, False) for f in FORCES]
    ranks = [step(v, p, 256, s, ranks=True) for v in RANK_VARIANTS for p in PRECISIONS for s in (True, False)]
    return every_block + every_kind + ranks + [step("tiled", "fp64", 1024, True)]
