"""The CUDA builds of the balls scene (CuPy-free, so a machine without a GPU can list and compile
them): the proximity pass in four variants at every block size, the step, the points kernel, the
gather of one ball's description."""

from __future__ import annotations

from sim.balls import world
from sim.gpu.cuda import Build
from sim.gpu.scan import SCAN_KERNELS

PROXIMITY_GRID = (
    *("sweep", "sweep_fast", "reorder", "grid_bounds", "grid_setup", "grid_count", "grid_scatter"),
    *SCAN_KERNELS,
)
PROXIMITY_SWEEP = ("sweep", "reorder", "sweep_keys")


# The grid's setup (grid_setup.cuh; grid_setup_cpu.grid_shape is its twin): one block of SETUP_THREADS. Where the
# speed alone could make the cells SPLIT_GAIN of their side or less, or the balls' box needs too many cells, it
# samples SETUP_SAMPLES balls into histograms of SETUP_BINS: the balls faster than all but live >> FAST_SHIFT of
# them go to coarse cells of their own where the rest's cells are that much finer; the box is trimmed of at
# most live >> shift of them at each end of an axis, for each shift in turn. The box has at most GRID_CELLS_PER_BALL
# fine cells a ball (grid_max_cells), as many coarse ones: a splash's spray spans a box far larger than its heap,
# and at two cells a ball its cells grew to nearly twice the heap's reach. FAST_SHIFT 4 (1/16): in a splash 5-10% of the
# balls can fly fast. Both were chosen on the 1M block's states as it splashes (docs/performance.md).
SETUP_THREADS = 256
SETUP_SAMPLES = 4096
SETUP_BINS = 256
TRIM_SHIFTS = (10, 8, 6)
FAST_SHIFT = 4
SPLIT_GAIN = 0.75
GRID_CELLS_PER_BALL = 4
GRID_SETUP_OPTIONS = (
    f"-DSETUP_THREADS={SETUP_THREADS}",
    f"-DSETUP_SAMPLES={SETUP_SAMPLES}",
    f"-DSETUP_BINS={SETUP_BINS}",
    f"-DTRIM_SHIFTS={','.join(map(str, TRIM_SHIFTS))}",
    f"-DFAST_SHIFT={FAST_SHIFT}",
    f"-DSPLIT_GAIN={SPLIT_GAIN}f",
)


def grid_max_cells(n: int) -> int:
    """The most fine cells the grid's box may have for n balls (grid_setup's max_cells): past it, it trims the box
    of outlying balls, then grows the cells."""
    return max(GRID_CELLS_PER_BALL * n, 64)


def proximity(variant: str, block: int) -> Build:
    """The proximity kernels of one variant, registers fitted to the block size. Built with
    --fmad=false: the predicate rounds each operation on its own, like the CPU twin."""
    if variant not in world.PROXIMITY_VARIANTS:
        raise ValueError(f"unknown variant {variant!r} (choose from {', '.join(world.PROXIMITY_VARIANTS)})")
    names = PROXIMITY_GRID if variant == "grid" else PROXIMITY_SWEEP
    options = ("--fmad=false", f"-DVARIANT_{variant.upper()}", f"-DBLOCK={block}")
    return Build("sim/balls/proximity.cu", options + (GRID_SETUP_OPTIONS if variant == "grid" else ()), names)


# The physics step, launched in blocks of STEP_BLOCK (as are the pass's other per-ball kernels).
# --fmad=false: rounded like the CPU twin, which has no fused multiply-adds.
STEP_BLOCK = 128
STEP = Build("sim/balls/contact.cu", ("--fmad=false", f"-DSTEP_BLOCK={STEP_BLOCK}"), ("step",))
# The step before a grid pass: it also takes the bounds of the state it writes (the pass's grid).
STEP_BOUNDS = Build("sim/balls/contact.cu", (*STEP.options, "-DBOUNDS"), ("step", "fold_bounds"))


RENDER = Build("sim/balls/render.cu", ("--fmad=false",), ("write_points",))  # rounded as render_cpu.py rounds
INSPECT = Build("sim/balls/inspect.cu", (), ("gather_ball",))  # one ball's description (items.py)
INSPECT_HEAD, INSPECT_PER_PARTNER = 12, 5  # inspect.cu's HEAD and PER_PARTNER (32-bit words)


def builds() -> list[Build]:
    """Every build the launchers make: each variant at every block size, the steps, the points."""
    proximity_builds = [proximity(v, b) for v in world.PROXIMITY_VARIANTS for b in world.BLOCK_SIZES]
    return proximity_builds + [STEP, STEP_BOUNDS, RENDER, INSPECT]


# --- speed of light (sim.gpu.roofline): per ball --------------------------------------------------------------
STATE_BYTES = 40  # float4 pos, float4 vel, float2 spin y, z (gpu.py)
# Nsight Compute, H200, every pass of the headline bench (10M balls of the block preset, block 128, 240 steps;
# bench/ncu_passes.sh, bench/results/ncu-h200-61ad354-passes/): the grid variant's proximity pass executes
# 42.07 warp instructions a ball on the first timed pass (22.9 predicate tests a ball), 51.28 on the last (29.3),
# 47.67 on average (25.9). They grow with the tests and faster while the lattice breaks up: a warp walks each
# run as long as its longest lane's, and its lanes differ more. The model takes the least-squares line through
# the 40 timed passes: the average exactly at the average tests, each pass within 4.1%. What the variant
# executes, not an algorithmic minimum; count it again (bench/ncu_passes.sh) after a change to the grid search.
GRID_INSTRUCTIONS_A_BALL = 11.065
GRID_INSTRUCTIONS_A_TEST = 1.4146
MEASURED = "; instructions as measured over the 10M bench's passes"


def models(setup) -> dict:
    """Per ball: the sort and the proximity pass once every STEPS_PER_PASS steps, the step every step.
    Partner figures come from ``pairs`` and ``tests_per_ball`` (none yet: a ball alone): the last pass's, or
    in a benchmark the timed passes' average (``PassFigures.model_stats``)."""
    from sim.gpu.roofline import StageModel

    n = max(setup.n, 1)
    passes = setup.steps / world.STEPS_PER_PASS
    listed = 2.0 * float(setup.stats.get("pairs") or 0) / n  # a pair sits in both balls' lists
    tests = float(setup.stats.get("tests_per_ball") or 0.0)
    grid = setup.variant == "grid"
    # sort. The least: the state read once and written in the new order (2 x 40 B). z-sweep: keys from pos and
    # vel (32 B in, z_max and z_min 8 B out), CuPy's radix argsort of float32 keys with int64 indices (4 passes
    # of 12 B in and out: 96 B), the reorder (order 8 B, state 80 B, ids 24 B) and the keys gathered (32 B).
    # grid: the count (16 B), the scan over ~2 cells a ball (24 B), the positions scattered (36 B); the bounds
    # come from the step before the pass. Nsight Compute at 10M (grid): 82 B and ~55 integer operations a ball.
    sort = StageModel(
        bytes_min=2.0 * STATE_BYTES,
        bytes_actual=76.0 if grid else 280.0,
        flops=55.0,
        units=n * passes,
        per="item",
        flop_kind="int",
        note="counting sort by grid cell" if grid else "radix argsort by z_max, then the reorder",
    )
    # proximity. The least: a ball's pos and vel (32 B) in, its count and partner list (4 B + 4 B a partner) out.
    # The candidates are near in memory after the sort: L1/L2 hits. The z-sweep also reads its keys (8 B); the
    # grid search reads the cell starts (~2 cells a ball, 8 B) and moves vel, spin and ids (2 x 32 B).
    # Arithmetic: the predicate over the pair's lifetime, 25 FLOP for a candidate that passes the first axis
    # check, far fewer for most that do not. The grid search: 12.75 a test on average (Nsight Compute at 10M,
    # 23 tests a ball; it works out a batch's second distance even past its run's end, never tested). The
    # z-sweep's are unmeasured: 11, the grid search's before it did that.
    # Instructions: the grid variant's, as measured (GRID_INSTRUCTIONS_A_*, above); the z-sweep's are unmeasured.
    least = 32.0 + 4.0 + 4.0 * listed
    tested = f"{tests:.1f} predicate tests a ball"
    proximity = StageModel(
        bytes_min=least,
        bytes_actual=least + (72.0 if grid else 8.0),
        flops=(12.75 if grid else 11.0) * max(tests, 1.0),
        units=n * passes,
        per="item",
        flop_kind="fp32",
        note=tested + (MEASURED if grid else "; no instruction count: no issue limit"),
        instructions=GRID_INSTRUCTIONS_A_BALL + GRID_INSTRUCTIONS_A_TEST * tests if grid else 0.0,
    )
    # forces+integrate. The least: the state read and written (80 B) and the partner list the pass wrote, read
    # (its count 4 B + 4 B a listed partner: the pass's least counts writing them, so the step's counts reading
    # them); partners' states come through L1/L2 (Nsight Compute at 10M: 98.5 B a ball from DRAM, this / 1.01).
    # Arithmetic: ~20 FLOP a listed partner (the overlap test; the contact's ~100 only for the few touching),
    # ~25 for walls and the update (Nsight Compute at 10M: 105 FLOP a ball with 3.9 listed partners).
    with_lists = 2.0 * STATE_BYTES + 4.0 + 4.0 * listed
    step = StageModel(
        bytes_min=with_lists,
        bytes_actual=with_lists,
        flops=25.0 + 20.0 * listed,
        units=n * setup.steps,
        per="item-step",
        flop_kind="fp32",
        note=f"{listed:.1f} listed partners a ball",
    )
    return {"sort": sort, "proximity": proximity, "forces+integrate": step}
