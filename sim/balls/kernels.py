"""The CUDA builds of the balls scene (CuPy-free, so a machine without a GPU can list and compile
them): the proximity pass in four variants at every block size, the step, the render kernel.
Design choices still being measured are build options here, picked by the scene's options."""

from __future__ import annotations

from sim.balls import world
from sim.cuda import Build

PROXIMITY_GRID = ("sweep", "sweep_step", "reorder", "grid_bounds", "grid_setup", "grid_count", "grid_scatter")
PROXIMITY_SWEEP = ("sweep", "reorder", "sweep_keys")


def proximity(variant: str, block: int, prefilter: str = world.DEFAULT_PREFILTER,
              batch: int = world.DEFAULT_BATCH) -> Build:
    """The proximity kernels of one variant, registers fitted to the block size. Built with
    --fmad=false: the predicate rounds each operation on its own, like the CPU twin. The grid only:
    ``prefilter`` "speed" rejects pairs from their positions and the fastest ball's speed first;
    ``batch`` neighbour positions are loaded together."""
    if variant not in world.PROXIMITY_VARIANTS:
        raise ValueError(f"unknown variant {variant!r} (choose from {', '.join(world.PROXIMITY_VARIANTS)})")
    if prefilter not in world.PREFILTERS:
        raise ValueError(f"unknown prefilter {prefilter!r} (choose from {', '.join(world.PREFILTERS)})")
    _check_batch(batch)
    names = PROXIMITY_GRID if variant == "grid" else PROXIMITY_SWEEP
    options = ("--fmad=false", f"-DVARIANT_{variant.upper()}", f"-DBLOCK={block}")
    if variant == "grid":
        options += (f"-DBATCH={batch}",) + (("-DSPEED_BOUND",) if prefilter == "speed" else ())
    return Build("sim/balls/proximity.cu", options, names)


def _check_batch(batch: int) -> None:
    if batch not in world.BATCHES:
        raise ValueError(f"unknown batch {batch!r} (choose from {', '.join(map(str, world.BATCHES))})")


def step(batch: int = world.DEFAULT_BATCH) -> Build:
    """The physics step, loading the state of ``batch`` partners at a time. --fmad=false like the grid
    search, which takes the first step of each list's life with the same code (contact.cuh)."""
    _check_batch(batch)
    return Build("sim/balls/contact.cu", ("--fmad=false", f"-DBATCH={batch}"), ("step",))


RENDER = Build("sim/balls/render.cu", ("--fmad=false",), ("write_render",))  # rounded as render_cpu.py rounds


def builds() -> list[Build]:
    """Every build the launchers make: each variant at every block size (the grid with each prefilter
    and batch), the step at each batch, the render."""
    grid = [proximity("grid", b, f, k) for b in world.BLOCK_SIZES for f in world.PREFILTERS for k in world.BATCHES]
    sweeps = [proximity(v, b) for v in world.PROXIMITY_VARIANTS if v != "grid" for b in world.BLOCK_SIZES]
    return sweeps + grid + [step(k) for k in world.BATCHES] + [RENDER]
