"""The CUDA builds of the balls scene (CuPy-free, so a machine without a GPU can list and compile
them): the proximity pass in four variants at every block size, the step, the points kernel, the
gather of one ball's description."""

from __future__ import annotations

from sim.balls import world
from sim.cuda import SCAN_KERNELS, Build

PROXIMITY_GRID = ("sweep", "reorder", "grid_bounds", "grid_setup", "grid_count", "grid_scatter", *SCAN_KERNELS)
PROXIMITY_SWEEP = ("sweep", "reorder", "sweep_keys")


def proximity(variant: str, block: int) -> Build:
    """The proximity kernels of one variant, registers fitted to the block size. Built with
    --fmad=false: the predicate rounds each operation on its own, like the CPU twin."""
    if variant not in world.PROXIMITY_VARIANTS:
        raise ValueError(f"unknown variant {variant!r} (choose from {', '.join(world.PROXIMITY_VARIANTS)})")
    names = PROXIMITY_GRID if variant == "grid" else PROXIMITY_SWEEP
    return Build("sim/balls/proximity.cu", ("--fmad=false", f"-DVARIANT_{variant.upper()}", f"-DBLOCK={block}"), names)


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
