"""Spatial distance histogram: all N(N-1)/2 pair distances of N points (spec: docs/specs/sdh.md)."""

import assets
from sim.contract import GpuKnobs, Param, Preset, SceneSpec, Stat, UserStage, Verifier, Words
from sim.framework import finite
from sim.sdh import kernels

SPEC = SceneSpec(
    name="sdh",
    title="all-pairs spatial distance histogram of the course's atoms: exact CPU and six exact GPU kernels",
    words=Words(unit="atoms", one="atom", variant="histogram kernel", step="histogram of every pair"),
    view="plots",
    presets=tuple(
        Preset(name, p["description"], p.get("count"), p.get("key")) for name, p in assets.presets("sdh").items()
    ),
    default_preset="course",
    scene="sim.sdh.scene:HistogramScene",
    stages=("histogram",),
    stats=(
        Stat("n", "atoms"),
        Stat("buckets", "buckets"),
        Stat("pairs", "pairs counted", help="always N(N-1)/2: far-corner pairs land in the last bucket"),
        Stat("histogram_ms", "last histogram", "{:.2f} ms"),
        Stat("pairs_per_s", "pairs/s", "{:.3g}"),
        Stat("steps", "histograms"),
        finite.STAT,
    ),
    params=(
        Param(
            "width",
            "bucket width",
            20.0,
            5000.0,
            "%.1f",
            log=True,
            help="the course's W: (int)(23000 * 1.732 / W) + 1 buckets",
        ),
    ),
    count_limits=(100_000, 5_000_000),
    min_count=2,  # a histogram of pairs
    bytes_per_item=(64, 64),  # the atoms in float64 (and float32 copies on the device)
    # pairs a second: a CPU thread (measured 3.2e8 on this project's 2-core machine, W = 500), the tensor kernel
    # on an H200 (sdh.cli.GPU_PAIRS_PER_SECOND)
    pace=(3e8, 1.7e12),
    step_work="pairs",  # a step is a whole histogram
    run_steps=10,  # 10,000 atoms: about 0.1 s a histogram on 2 CPU threads
    # tensor, the fastest, by default; at widths where its counters do not fit (kernels.tensor_min_width) the
    # scene counts with the next fastest kernel and says why
    gpu=GpuKnobs(
        variants=kernels.KERNELS,
        default_variant="tensor",
        blocks=kernels.BLOCK_SIZES,
        default_block=256,
        fastest="tensor",
        kernels_run_hint="switch the histogram to the GPU (a)",
    ),
    verifier=Verifier(
        checks="each GPU histogram is checked against the exact CPU histogram of the same atoms",
        mismatch="buckets whose counts differ are listed",
    ),
    kernels="sim.sdh.kernels:builds",
    models="sim.sdh.kernels:models",
    gate="sim.sdh.bench_cases:GATE",
    ncu="sim.sdh.bench_cases:NCU",
    commands="sim.sdh.cli:COMMANDS",
    bench="sim.sdh.bench:BENCH",
    user_stages=(
        UserStage(
            name="histogram",
            summary="count every pair of atoms into the bucket of its distance",
            entry="sdh",
            signature='extern "C" __global__ void sdh(const double* x, const double* y, const double* z, long long n, '
            "double w, int nb, unsigned long long* hist)",
            params=(
                ("x", "the atoms' x coordinates"),
                ("y", "their y coordinates"),
                ("z", "their z coordinates"),
                ("n", "how many atoms"),
                ("w", "the bucket width"),
                ("nb", "how many buckets"),
                ("hist", "the nb 64-bit counts, zero before the launch: only add to them"),
            ),
            launch="one thread per atom: grid = ceil(n / block) blocks of block threads (default 256)",
            compare="exact: every bucket's count equals the CPU histogram's",
            template="sim/sdh/templates/histogram.cu",
            adapter="sim.sdh.user_stage:HistogramStage",
        ),
    ),
)
