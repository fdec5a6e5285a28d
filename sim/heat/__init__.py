"""The DLI heat-conduction stencil: a 2D five-point explicit step on float32, boundary held fixed.

``course`` holds the DLI programme's constants, initial field (glibc rand) and check;
``stencil_cpu`` the CPU twin (numba); ``stencil.cu`` every GPU variant (global, shared, pitched,
temporal), built as ``kernels`` lists and launched by ``gpu`` (CuPy); ``cli`` the ``heat``
command and ``bench`` the benchmark; ``scene`` the viewer scene declared here (its statistics in
``stats``); ``USER_STEP`` the step a user's own kernel can replace (its adapter in ``user_stage``,
``templates/step.cu`` its starting point). Spec: docs/specs/heat.md.
"""

import assets
from sim.contract import (
    BlockColoring,
    GpuKnobs,
    Option,
    Param,
    Preset,
    SceneSpec,
    Stat,
    Tool,
    UserStage,
    Verifier,
    Words,
)
from sim.framework import finite
from sim.heat.kernels import BLOCK_SHAPES, K_MAX, KERNELS

PRESETS = tuple(
    Preset(name, p["description"], p.get("count"), p.get("key")) for name, p in assets.presets("heat").items()
)
FACTOR_MAX = 0.2499  # the explicit scheme is stable for tfac < 0.25
DEFAULT_K = 8  # temporal steps per launch: the fastest at 32x4 on an H200 (docs/performance.md, heat)
STEPS_PER_FRAME = 20  # CPU viewer at 1000x1000 on 2 cores: about 60 frames/s (docs/viewer.md, the heat scene)

STATS = (
    Stat("grid", "grid", "{}"),
    Stat("steps", "steps"),
    Stat("steps_per_frame", "steps per frame"),
    Stat("factor", "factor tfac", "{:.4g}", help="each step: T += tfac * (left + right + up + down - 4 T)"),
    Stat(
        "pace",
        "a step",
        "{}",
        help="how far one step moves a cell: 4 tfac of the way to its neighbours' mean; "
        "the explicit scheme is stable up to 1 (tfac < 0.25)",
    ),
    Stat(
        "cell_updates",
        "cell updates",
        "{:.3g} G/s",
        help="cells x steps per second of the step stage (CUDA events on the GPU, the host clock on the CPU)",
    ),
    Stat(
        "temperature",
        "temperature",
        "{}",
        help="lowest, mean and highest cell: a reduction on the backend holding the field, at most 4 times a "
        "second (three numbers read back on the GPU)",
    ),
    finite.STAT,
)
GPU = GpuKnobs(
    variants=KERNELS,
    default_variant="temporal",
    blocks=BLOCK_SHAPES,
    default_block=(32, 4),
    fastest="temporal",
    kernels_run_hint="switch the physics to the GPU (a)",
)
OPTIONS = (
    Option(
        "k",
        f"temporal kernel: steps per launch, 1..{K_MAX} (the other kernels take one a launch)",
        tuple(str(k) for k in range(1, K_MAX + 1)),
        str(DEFAULT_K),
    ),
    Option(
        "fma",
        "fused multiply-adds in the GPU builds: off (--fmad=false, bit-identical to the CPU) or on "
        "(nvcc's default; verification then allows 1e-4)",
        ("off", "on"),
        "off",
    ),
)
PAINT = Tool(
    "paint",
    "left drag paints heat at the tool's temperature, right drag paints cold (0)",
    params=(
        Param(
            "radius",
            "brush radius",
            0.75,
            2000.0,
            "%.1f cells",
            log=True,
            help="in cells; the smallest brush paints the cell under the pointer",
        ),
        Param("temperature", "temperature", 0.0, 100.0, "%.1f", help="what a left drag paints"),
    ),
    default_on=False,
)

USER_STEP = UserStage(
    name="step",
    summary="one explicit heat step: every interior cell moves towards its four neighbours, the ring held fixed",
    entry="step",
    signature='extern "C" __global__ void step(int ni, int nj, long long stride, float tfac, '
    "const float* tin, float* tout)",
    params=(
        ("ni", "cells across (columns), at least 3"),
        ("nj", "cells down (rows), at least 3"),
        ("stride", "elements from one row to the next (ni: rows are dense)"),
        ("tfac", "diffusion factor, below 0.25"),
        ("tin", "the field now, ni x nj float32, cell (i, j) at j * stride + i"),
        ("tout", "the field after the step: every cell, the boundary ring copied from tin"),
    ),
    launch="one thread per cell: block (bx, by), default 32x8; grid (ceil(ni / bx), ceil(nj / by))",
    compare="exact (bit for bit, as the product's --fmad=false builds)",
    template="sim/heat/templates/step.cu",
    adapter="sim.heat.user_stage:StepStage",
)

SPEC = SceneSpec(
    name="heat",
    title="the DLI's 2D heat conduction: a five-point stencil on float32, painted with the mouse",
    words=Words(unit="cells", one="cell", variant="stencil kernel"),
    view="field",
    presets=PRESETS,
    default_preset="plate",
    scene="sim.heat.scene:HeatScene",
    stages=("step",),
    stats=STATS,
    params=(
        Param(
            "factor",
            "factor tfac",
            1e-6,
            FACTOR_MAX,
            "%.3g",
            log=True,
            help="diffusion per step; stable below 0.25 (the DLI's 8.418e-5 barely moves)",
        ),
        Param(
            "steps_per_frame",
            "steps per frame",
            1.0,
            500.0,
            "%.0f",
            log=True,
            help="stencil steps between two displayed frames",
        ),
    ),
    steps_per_frame=STEPS_PER_FRAME,
    count_limits=(25_000_000, 400_000_000),
    # host: 2 float32 buffers + glibc rand's int64 draws while the field is made (+ 4 for the verification copy);
    # device: 2 buffers (rows padded), the GL pixel buffer and the texture
    bytes_per_item=(24, 20),
    pace=(2e9, 3.7e11),  # cell updates a second: 4.8e9 on 2 CPU threads at 2000x2000; 10000x10000 on an H100
    options=OPTIONS,
    gpu=GPU,
    verifier=Verifier(
        checks="each frame's GPU steps are redone on the CPU from the same field and compared bit for "
        "bit (within 1e-4 with fma on)",
        mismatch="cells whose GPU value differs from the CPU's are drawn in the highlight colour",
    ),
    block_colors=BlockColoring("the tiles of the launch's CUDA blocks drawn over the field, their halos tinted"),
    tool=PAINT,
    kernels="sim.heat.kernels:builds",
    models="sim.heat.kernels:models",
    gate="sim.heat.bench_cases:GATE",
    ncu="sim.heat.bench_cases:NCU",
    commands="sim.heat.cli:COMMANDS",
    bench="sim.heat.bench:BENCH",
    user_stages=(USER_STEP,),
)
