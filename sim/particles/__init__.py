"""2D short-range repulsion with O(n) binning (spec: docs/specs/particles.md, CS 267 Homework 2)."""

import assets
from sim.contract import (
    BlockColoring,
    GpuKnobs,
    HistogramSource,
    Option,
    Param,
    Preset,
    SceneSpec,
    Stat,
    Toggle,
    Tool,
    UserStage,
    Verifier,
    Words,
)
from sim.framework import finite
from sim.particles import kernels, world

PRESETS = tuple(
    Preset(name, p["description"], p.get("count"), p.get("key")) for name, p in assets.presets("particles").items()
)
STATS = (
    Stat("n", "particles"),
    Stat("size", "box size", "{:.4g}"),
    Stat("steps", "steps"),
    Stat("sim_time", "sim time", "{:.3f} s"),
    Stat(
        "absmin",
        "absmin",
        "{:.4f}",
        help="the course's closest pair, in cutoffs (correct runs: about 0.7-0.8; a warning below 0.4)",
    ),
    Stat(
        "absavg",
        "absavg",
        "{:.4f}",
        help="the course's mean pair distance, in cutoffs (about 0.95; a warning below 0.8)",
    ),
    finite.STAT,
)
GPU = GpuKnobs(
    variants=kernels.VARIANTS,
    default_variant="plain",
    blocks=kernels.BLOCK_SIZES,
    default_block=kernels.DEFAULT_BLOCK,
    fastest="plain",
    kernels_run_hint="switch the physics to the GPU (a)",
)
PUSH = Tool(
    "push",
    "left drag pushes the particles under the pointer along the drag (Ctrl + drag when off)",
    params=(
        Param("radius", "push radius", 0.01, 0.3, "%.3f", help="as a share of the box side"),
        Param("strength", "push strength", 0.0, 2.0, "%.2f", help="1: particles move with the pointer"),
    ),
    default_on=False,
)
VERIFIER = Verifier(
    checks="each GPU step is checked against a CPU step from the same state",
    mismatch="particles whose step differs from the CPU's are drawn red",
)

SPEC = SceneSpec(
    name="particles",
    title="CS 267 2D particles: short-range repulsion with O(n) binning, bit-exact CPU twin",
    words=Words(unit="particles", one="particle", variant="force kernel variant"),
    view="points",
    presets=PRESETS,
    default_preset="2020",
    scene="sim.particles.scene:ParticlesScene",
    stages=("bin", "forces+move"),
    stats=STATS,
    steps_per_frame=10,  # one displayed frame per frame of the course's output file
    dt=world.DT,
    count_limits=(2_000_000, 20_000_000),
    # the graph: one launch per frame of ten steps; at 1M particles the launches are a tenth of the step
    bench_toggles=(("statistics", False), ("graph", True)),
    bytes_per_item=(200, 120),  # host: measured peak 185 at 2M; device: state x2, ids, bins, offsets
    pace=(2.5e6, 1e10),  # particle-steps a second: 2.7e6 a CPU thread at 2M; an H200, fp64 plain, 10M
    options=(Option("precision", "GPU float precision: fp64 (the course's) or fp32", ("fp64", "fp32"), "fp64"),),
    toggles=(
        Toggle(
            "statistics",
            "distance statistics",
            "the course's absmin and absavg, measured every step "
            "(the benchmarks switch them off, like the course's timed runs and the peer)",
            gpu_only=False,
        ),
        Toggle(
            "graph",
            "CUDA graph",
            "each frame's ten GPU steps replayed as one CUDA graph (fewer launches; the "
            "benchmarks switch it on); the stage times then cover the whole frame",
            default=False,
        ),
    ),
    gpu=GPU,
    verifier=VERIFIER,
    block_colors=BlockColoring(),
    tool=PUSH,
    histogram=HistogramSource(dims=2),
    kernels="sim.particles.kernels:builds",
    models="sim.particles.kernels:models",
    gate="sim.particles.bench_cases:GATE",
    ncu="sim.particles.bench_cases:NCU",
    commands="sim.particles.cli:COMMANDS",
    bench="sim.particles.bench:BENCH",  # the timed frames; over MPI ranks, the scaling tables
    user_stages=(
        UserStage(
            name="forces",
            summary="every particle's acceleration from the particles in its own and the 8 neighbouring bins",
            entry="forces",
            signature='extern "C" __global__ void forces(const double* x, const double* y, const int* bin, '
            "const int* start, const int* members, int n, int nb, double* ax, double* ay)",
            params=(
                ("x", "the particles' x positions"),
                ("y", "their y positions"),
                ("bin", "each particle's bin, by * nb + bx"),
                ("start", "nb*nb + 1 offsets: bin b holds members[start[b] .. start[b+1] - 1]"),
                ("members", "the particles' indices sorted by bin"),
                ("n", "how many particles"),
                ("nb", "bins per side (each at least a cutoff wide)"),
                ("ax", "the x accelerations to write"),
                ("ay", "the y accelerations to write"),
            ),
            launch="one thread per particle: grid = ceil(n / block) blocks of block threads (default 128)",
            compare="within what the verifier allows after a step: |difference| * dt^2 <= 1e-12 of the box side",
            template="sim/particles/templates/forces.cu",
            adapter="sim.particles.user_stage:ForcesStage",
        ),
    ),
)
