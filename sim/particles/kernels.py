"""The CUDA builds of the particles scene (CuPy-free): the step kernels per variant, precision,
block size and statistics switch, for one GPU and for MPI ranks. One GPU's bin the particles afresh only
when they may have moved a bin less the cutoff since (reading by row otherwise); the ranks' build
(-DRANKS) reads by gather, counts into bins on the steps that renumber, steps a range of slots, flags
particles that left the rank's window, and adds the kernels that pack ghosts and leavers and place
arrivals (sim/particles/binning.cu and rank_kernels.cuh)."""

from __future__ import annotations

import math

import numpy as np

from sim.gpu.cuda import Build, ceil_div
from sim.gpu.scan import SCAN_KERNELS

VARIANTS = ("plain", "tiled", "blockscan", "texture")
RANK_VARIANTS = ("plain", "tiled", "blockscan")  # texture reads from the start of a buffer; ranks start mid-buffer
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)
DEFAULT_BLOCK = 128  # a little faster than 256 at 1M and 10M (bench/results/h200-particles-gather-blocks.json)
# Bin side in cutoffs (at least 1: a particle's reach stays within its 9 bins). Wider bins cost more
# candidate tests but less counting, scanning and clearing; on an H200 2.5 beat 2 and 3 at 1M and 10M.
BIN_CUTOFFS = 2.5
PRECISIONS = {"fp64": "double", "fp32": "float"}
SCAN_BLOCK = 512  # threads of the blockscan variant's scan_blocks; each scans two counts
NULL = np.uint64(0)  # a null pointer argument
GRAPH_STAGE = "frame (graph)"  # the stage a frame's steps replayed as one CUDA graph are timed as
NAMES = ("step", "scan_blocks", "add_sums", *SCAN_KERNELS)
ONE_GPU_NAMES = ("rebin_count", "rebin_place")
RANK_NAMES = (
    "step_rows",
    "count_bins",
    "place",
    "pack_ghosts",
    "take_ghosts",
    "pack_leavers",
    "count_arrivals",
    "place_arrivals",
    "probe",
    "slots_as_rows",
)


def step(variant: str, precision: str, block: int, stats: bool, ranks: bool = False) -> Build:
    """The scene's build, or with ``ranks`` the MPI ranks' (sim/particles/ranks_gpu.py)."""
    options = [f"-DREAL={PRECISIONS[precision]}", f"-DBLOCK={block}"]
    names = list(NAMES)
    if variant == "tiled":
        options.append("-DTILED")
    if variant == "texture":
        options.append("-DTEXTURE")
    if ranks:
        options.append("-DRANKS")
        names += RANK_NAMES
    else:
        names += ONE_GPU_NAMES
    if stats:
        options.append("-DSTATS")
        names.append("fold_stats")
    return Build("sim/particles/binning.cu", tuple(options), tuple(names))


def report_scan(k, count, m: int, start, block_sums, length=NULL) -> None:
    """The blockscan variant's prefix sum (report_scan.cuh's three launches, on the current stream):
    start[1 .. m] the running sums of count[0 .. m), the counts cleared. ``block_sums``: a slot for each
    of ceil(m / (2 SCAN_BLOCK)) blocks; ``length`` (on the device, or null): one GPU's verdict, 0 when the
    step does not bin (the launches then return at once)."""
    blocks = ceil_div(m, 2 * SCAN_BLOCK)
    shared = 2 * SCAN_BLOCK * 4  # two counts a thread
    k["scan_blocks"]((blocks,), (SCAN_BLOCK,), (count, np.int32(m), start, block_sums, length), shared_mem=shared)
    k["scan_totals"]((1,), (1024,), (block_sums, np.int32(blocks), length, np.int32(2 * SCAN_BLOCK)))
    k["add_sums"]((blocks,), (SCAN_BLOCK,), (start, np.int32(m), block_sums, length))


def builds() -> list[Build]:
    every_block = [step("plain", "fp64", b, True) for b in BLOCK_SIZES]
    every_kind = [step(v, p, DEFAULT_BLOCK, s) for v in VARIANTS for p in PRECISIONS for s in (True, False)]
    ranks = [
        step(v, p, b, s, ranks=True)
        for v in RANK_VARIANTS
        for p in PRECISIONS
        for s in (True, False)
        for b in (DEFAULT_BLOCK, 256)
    ]  # the bench's and the run's
    return every_block + every_kind + ranks + [step("tiled", "fp64", 1024, True)]


# --- speed of light (sim.gpu.roofline): per particle and step ----------------------------------------------------
# Nsight Compute, H200, the plain fp64 forces+move kernel reading by row (one step of 10M particles, the 2020
# preset, block 128, statistics off; bench/ncu_stalls.sh, bench/results/ncu-h200-8ccb53a/): what that variant
# executes, not an algorithmic minimum. 19.32 warp instructions a particle-step (0.1932 G), 71% of the issue
# slots; 5.81 wavefronts of L1's data pipe (58.1 M), 85% of its peak: the busiest limit. A warp's lanes read
# neighbours from scattered slots (two candidates' loads in flight a lane), and most stalls wait on those loads.
PLAIN_FP64_FORCES_INSTRUCTIONS = 19.32
PLAIN_FP64_FORCES_WAVEFRONTS = 5.81
# Steps from one binning to the next at the 2020 preset (10M on an H200: 105 binnings in 1000 steps): the fastest
# particle's moves sum to a bin less the cutoff in about ten steps. The model spreads a binning's work over them.
STEPS_A_BINNING = 9.5


def models(setup) -> dict:
    """Per particle-step, at the course's density (a box of side sqrt(DENSITY n): 1 / DENSITY a unit area)."""
    from sim.gpu.roofline import StageModel
    from sim.particles import world

    real = 8.0 if setup.options.get("precision", "fp64") == "fp64" else 4.0
    state = 4 * real  # REAL2 pos, REAL2 vel
    per_area = 1.0 / world.DENSITY  # box side sqrt(DENSITY n): n / (DENSITY n) particles a unit area
    bin_side = BIN_CUTOFFS * world.CUTOFF
    bins_each = 1.0 / (per_area * bin_side**2)  # bins per particle
    candidates = 9.0 * per_area * bin_side**2  # the 9 bins' particles
    neighbours = math.pi * world.CUTOFF**2 * per_area  # those within the cutoff
    units = setup.n * setup.steps
    every = 1.0 / STEPS_A_BINNING
    # bin: most steps only the verdict (a few launches that return at once); a binning every STEPS_A_BINNING steps.
    # Its least: each particle's position read and its slot written (2 reals + 4 B). The count (in the step before a
    # foreseen binning, which has the position; else rebin_count) writes bin and offset (8 B); the scan reads the
    # counts twice, writes the starts and clears the counts (16 B a bin); rebin_place reads bin, offset, the bin's
    # start and the id (16 B) and writes the slot and the id there (8 B).
    # Integer work: about 19 operations a particle and binning (Nsight Compute, 10M).
    bin_stage = StageModel(
        bytes_min=(2 * real + 4.0) * every,
        bytes_actual=(32.0 + 16.0 * bins_each) * every,
        flops=19.0 * every,
        units=units,
        per="item-step",
        flop_kind="int",
        note=f"{bins_each:.2f} bins a particle; a binning every {STEPS_A_BINNING:g} steps",
    )
    # forces+move. The least: the state read and written once (2 x 4 reals). By row the neighbours' positions come
    # through L1/L2 (Nsight Compute at 10M fp64: 66 B a particle); the step after a binning also reads each slot's row
    # and copies the id (12 B). Arithmetic: 5 FLOP a candidate (dx, dy, r^2), 15 a neighbour within the cutoff
    # (rsqrt, the force), 12 for the move and walls. Instructions and L1 wavefronts: the plain fp64 kernel's by
    # row, as measured (PLAIN_FP64_FORCES_*); the other variants' and fp32's are unmeasured.
    measured = setup.variant == "plain" and real == 8.0
    forces = StageModel(
        bytes_min=2 * state,
        bytes_actual=2 * state + 2.0 + 12.0 * every,
        flops=5.0 * candidates + 15.0 * neighbours + 12.0,
        units=units,
        per="item-step",
        flop_kind="fp64" if real == 8.0 else "fp32",
        note=f"{candidates:.1f} candidates, {neighbours:.2f} neighbours a particle"
        + (
            "; instructions and L1 wavefronts as measured at 10M"
            if measured
            else "; no instruction count: no issue limit"
        ),
        instructions=PLAIN_FP64_FORCES_INSTRUCTIONS if measured else 0.0,
        wavefronts=PLAIN_FP64_FORCES_WAVEFRONTS if measured else 0.0,
    )
    # forces (your own kernel's stage, sim.particles.user_stage): the force loop alone on the CPU twin's bins, a
    # cutoff wide. The least: the particle's position in, its acceleration out (2 x 2 reals); it also reads its
    # bin (4 B), its 9 bins' starts and members and their positions through L1/L2. Arithmetic as above, no move.
    twin_candidates = 9.0 * per_area * world.CUTOFF**2
    user_forces = StageModel(
        bytes_min=4 * real,
        bytes_actual=4 * real + 4.0,
        flops=5.0 * twin_candidates + 15.0 * neighbours,
        units=units,
        per="item-step",
        flop_kind=forces.flop_kind,
        note=f"your kernel's force loop: {twin_candidates:.1f} candidates, {neighbours:.2f} neighbours a particle",
    )
    # A frame replayed as one CUDA graph times both stages together (bin's instructions and wavefronts uncounted: a
    # lower bound); its least time is theirs added (each launch waits for the one before).
    graph = StageModel(
        bytes_min=bin_stage.bytes_min + forces.bytes_min,
        bytes_actual=bin_stage.bytes_actual + forces.bytes_actual,
        flops=forces.flops,
        units=units,
        per="item-step",
        flop_kind=forces.flop_kind,
        note="bin and forces+move in one CUDA graph"
        + ("; forces+move's instructions and L1 wavefronts" if measured else ""),
        instructions=forces.instructions,
        wavefronts=forces.wavefronts,
        parts=(bin_stage, forces),
    )
    return {"bin": bin_stage, "forces+move": forces, GRAPH_STAGE: graph, "forces": user_forces}
