"""The Levinson-Durbin recursion (PolyBench ``durbin``, versions 3.2 and 4.x; spec: docs/specs/durbin.md).

``inputs`` makes the right-hand sides (PolyBench's inits, AR(p) autocorrelations from reflection
coefficients, AR(1)); ``durbin_cpu`` is the CPU twin (numba, C summation order, bit-identical to the
C code) with a step-at-a-time solver and a batched solver; ``polybench`` prints each version's dump
and the course's hash; ``durbin.cu`` holds every GPU kernel (two launches per step, one persistent
launch on a thread-block cluster or a cooperative grid, batched systems), built as ``kernels`` lists
and launched by ``gpu`` (CuPy; the batched systems by ``batched_gpu``); ``layout`` says which CUDA
block owns which entries of y; ``lpc`` is batched linear prediction of a PCM WAV file; ``cli`` the
``durbin`` and ``lpc`` commands and ``bench`` the benchmark; ``scene`` the viewer scene declared here
(its plots in ``plots`` and ``lpc_plots``, built with its statistics in ``readout``, its verification
in ``verify``, the items under the pointer in ``items``).
"""

import assets
from sim.contract import BlockColoring, GpuKnobs, Param, Preset, SceneSpec, Stat, Tool, UserStage, Verifier, Words
from sim.framework import finite

# the single-system kernels the viewer offers (q): durbin.cu's kernel and, for the persistent one, how its
# blocks exchange each step (None: the cluster of 16 up to N = 65536, the grid beyond, as measured)
VARIANTS = {
    "persistent": ("persistent", None),
    "persistent-cluster": ("persistent", "cluster"),
    "persistent-grid": ("persistent", "grid"),
    "two-kernel": ("two-kernel", None),
}
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)
SPEED = Param(
    "speed",
    "steps per frame",
    0.05,
    10_000.0,
    "%.2f",
    log=True,
    help="recursion steps each displayed frame (below 1: a step every few frames)",
)
AR_ORDER = Param(
    "p",
    "AR order p",
    1,
    16,
    "%.0f",
    help="how many reflection coefficients the AR(p) process has (new ones start at 0)",
)
LPC_ORDER = Param("order", "LPC order", 2, 64, "%.0f", help="predictor order of every frame (one batched solve)")
PLAY = Param(
    "play",
    "frames per step",
    0.0,
    4.0,
    "%.2f",
    help="how far the selected frame moves each displayed frame (0 holds it)",
)
FRAME = Param("frame", "frame", 0, 1000, "%.0f", help="the analysis frame shown (or drag its marker)")

SPEC = SceneSpec(
    name="durbin",
    title="the Levinson-Durbin recursion step by step: AR(p) spectra with draggable reflection coefficients, "
    "batched LPC of a sound",
    words=Words(
        unit="coefficients",
        one="coefficient",
        variant="recursion kernel",
        step="recursion step k -> k + 1 (lpc: the selected frame one on)",
    ),
    view="plots",
    presets=tuple(
        Preset(name, p["description"], p.get("count"), p.get("key")) for name, p in assets.presets("durbin").items()
    ),
    default_preset="ar",
    scene="sim.durbin.scene:DurbinScene",
    # recursion: the solver's steps of the frame (host clock around the numba twin; CUDA events around the
    # launches on the GPU: one persistent launch runs all the frame's steps, reductions, exchanges and
    # updates together; two-kernel: its two launches per step); in the lpc preset the batched solve of all
    # frames. read back: y, alphas, betas to the host for the plots. plots: spectra, decimation.
    stages=("recursion", "read back", "plots"),
    stats=(
        Stat("n", "coefficients"),
        Stat("k", "k (entries done)", "{}", help="after k steps y[0..k-1] solves the leading k x k system"),
        Stat("alpha_k", "alpha_k", "{:.6g}", help="the last reflection coefficient (Durbin's alpha)"),
        Stat("beta_k", "beta_k", "{:.6g}", help="the normalised prediction-error variance before the last step"),
        Stat("us_per_step", "per step", "{:.3f} us", help="the recursion stage's time over its steps (last frame)"),
        Stat(
            "steps_per_s",
            "recursion steps/s",
            "{:,.0f}",
            help="steps over the recursion stage's time, last second of frames",
        ),
        Stat(
            "max_error",
            "max error vs scipy",
            "{:.2e}",
            help="verification: largest relative difference of y to scipy.linalg.solve_toeplitz "
            "(beyond k = 4096: the relative residual |T y + r| / |r|)",
        ),
        Stat("kernel", "ran on", "{}"),
        Stat("frames", "frames", "{:,}", help="lpc: 20 ms frames, 50% overlap, each one system"),
        Stat("frame", "selected frame", "{}"),
        Stat("gain_db", "prediction gain", "{:.1f} dB", help="lpc: the selected frame's R0 / prediction error"),
        Stat("batch_ms", "batched solve", "{:.3f} ms", help="lpc: every frame's system in one call"),
        finite.STAT,
    ),
    params=(SPEED, AR_ORDER, LPC_ORDER, FRAME, PLAY),
    count_limits=(200_000, 200_000),
    # host: r, y, alphas, betas, the CPU twin's three arrays under verification, plot copies; device: r, y,
    # alphas, betas (the persistent kernel's flag slots and the two-kernel's partials are per block)
    bytes_per_item=(96, 32),
    # each step until the recursion ends touches every entry: entries a second on one CPU thread (the
    # recursion is serial, as the durbin command's estimate has it) and on the GPU (a few us a step besides)
    pace=(1e9, 5e10),
    step_work="recursion",
    cpu_serial=True,  # step k's dot and update depend on step k - 1
    gpu=GpuKnobs(
        variants=tuple(VARIANTS),
        default_variant="persistent",
        blocks=BLOCK_SIZES,
        default_block=256,
        fastest="persistent",
        kernels_run_hint="switch the recursion to the GPU (a)",
    ),
    verifier=Verifier(
        checks="each frame's GPU steps are redone by the CPU twin from the same state, and y is "
        "checked against scipy.linalg.solve_toeplitz",
        mismatch="entries (lpc: frames) beyond the tolerance are marked red",
    ),
    block_colors=BlockColoring(
        "a band under the y plot: the CUDA block that updated each entry in the last step "
        "(lpc: under the spectrogram, the block that solved each frame)"
    ),
    tool=Tool(
        "drag",
        "drag a yellow point: a reflection coefficient on the alphas plot (ar) or the selected "
        "frame on the spectrogram (lpc)",
    ),
    kernels="sim.durbin.kernels:builds",
    models="sim.durbin.kernels:models",
    gate="sim.durbin.bench_cases:GATE",
    ncu="sim.durbin.bench_cases:NCU",
    commands="sim.durbin.cli:COMMANDS",
    bench="sim.durbin.bench:BENCH",
    user_stages=(
        UserStage(
            name="batched",
            summary="solve many independent systems with Durbin's recursion (PolyBench 4.x), one per row of r",
            entry="batched",
            signature='extern "C" __global__ void batched(const double* r, double* y, double* alphas, double* betas, '
            "int systems, int order)",
            params=(
                ("r", "the right-hand sides, systems x order, row-major"),
                ("y", "the solutions, systems x order"),
                ("alphas", "each system's alpha after every step, systems x order"),
                ("betas", "each system's last beta (normalised prediction error)"),
                ("systems", "how many systems"),
                ("order", "the length of each system"),
            ),
            launch="one thread per system: grid = ceil(systems / block) blocks of block threads (default 64)",
            compare="exact, bit for bit with the CPU twin (C summation order, no fused multiply-adds)",
            template="sim/durbin/templates/batched.cu",
            adapter="sim.durbin.user_stage:BatchedStage",
        ),
    ),
)
