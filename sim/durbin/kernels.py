"""The CUDA builds of the recursion (CuPy-free): every kernel of durbin.cu per precision and version.

Block sizes are launch-time values (any multiple of 32 up to 1024), so a build is one kernel kind
x {fp64, fp32} x {PolyBench 4.x, 3.2}. All build with --fmad=false: the updates round like the C code.
"""

from __future__ import annotations

from sim.gpu.cuda import Build

SOURCE = "sim/durbin/durbin.cu"
KERNELS = ("two-kernel", "persistent")  # single-system kernels the CLI offers
PATHS = ("cluster", "grid")  # how the persistent kernel's blocks exchange per step
GROUPS = {"register": 1, "thread": 1, "warp": 32, "block": 0}  # batched: threads per system (0: the whole block)
REG_ORDER = 32  # the register variant's largest order (its loops are unrolled to it)
PRECISIONS = ("fp64", "fp32")
VERSIONS = ("4", "3.2")


def _options(precision: str, version: str) -> list[str]:
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r} (choose from {', '.join(PRECISIONS)})")
    if version not in VERSIONS:
        raise ValueError(f"unknown PolyBench version {version!r} (choose from {', '.join(VERSIONS)})")
    return ["--fmad=false"] + (["-DFP32"] if precision == "fp32" else []) + (["-DV32"] if version == "3.2" else [])


def two_kernel(precision: str = "fp64", version: str = "4") -> Build:
    return Build(SOURCE, ("-DTWO_KERNEL", *_options(precision, version)), ("two_kernel_dot", "two_kernel_update"))


def persistent(path: str, precision: str = "fp64", version: str = "4") -> Build:
    if path not in PATHS:
        raise ValueError(f"unknown persistent path {path!r} (choose from {', '.join(PATHS)})")
    extra = ("-DCLUSTER_EXCHANGE",) if path == "cluster" else ()
    return Build(SOURCE, ("-DPERSISTENT", *extra, *_options(precision, version)), ("persistent",))


def batched(group: str, precision: str = "fp64", version: str = "4") -> Build:
    if group not in GROUPS:
        raise ValueError(f"unknown batched group {group!r} (choose from {', '.join(GROUPS)})")
    extra = (f"-DREG_ORDER={REG_ORDER}",) if group == "register" else ()
    return Build(SOURCE, ("-DBATCHED", f"-DGROUP={GROUPS[group]}", *extra, *_options(precision, version)), ("batched",))


def builds() -> list[Build]:
    out = []
    for precision in PRECISIONS:
        for version in VERSIONS:
            out.append(two_kernel(precision, version))
            out += [persistent(path, precision, version) for path in PATHS]
            out += [batched(group, precision, version) for group in GROUPS]
    return out


# --- speed of light (sim.gpu.roofline) -------------------------------------------------------------------------
def models(setup) -> dict:
    """The recursion per entry-step (the lpc preset: per system), the read back and the plots per entry.

    A frame of s = ``setup.steps`` steps ending at k entries (``stats["entries"]``) touches the entries
    0..j-1 in each step j: s (k - (s + 1) / 2) entry-steps. The lpc preset solves every frame's system once
    a displayed frame.
    """
    from sim.gpu.roofline import FlopKind, StageModel

    real = 4.0 if setup.options.get("precision") == "fp32" else 8.0
    kind: FlopKind = "fp32" if real == 4.0 else "fp64"
    if setup.preset == "lpc":
        systems = max(int(setup.stats.get("frames") or 1), 1)
        order = max(setup.n // systems, 1)
        # The least, and what the batched register kernel moves: r in, y and the alphas out (3 x order reals a
        # system, 77 MB for 100000 x 32 in fp64). Arithmetic: step k's dot and update, 4k FLOP: ~2 order^2.
        # Your own kernel's stage ``batched`` (sim.durbin.user_stage) is this solve.
        recursion = StageModel(
            bytes_min=3 * order * real,
            bytes_actual=3 * order * real,
            flops=2.0 * order * order,
            units=systems,
            per="system",
            flop_kind=kind,
            note=f"{systems:,} systems of order {order}",
        )
        return {
            "recursion": recursion,
            "batched": recursion,
            "read back": StageModel(
                bytes_min=2 * order * real,
                bytes_actual=2 * order * real,
                flops=0.0,
                units=systems,
                per="system",
                flop_kind=kind,
                where="link",
                note="y and the alphas to the host",
            ),
            "plots": StageModel(
                bytes_min=2 * order * real,
                bytes_actual=2 * order * real,
                flops=10.0 * order,
                units=systems,
                per="system",
                flop_kind="fp64",
                where="host",
                note="the spectrogram and the selected frame's plots, on the host",
            ),
        }
    k = max(int(setup.stats.get("entries") or setup.n), 1)
    s = max(min(setup.steps, k), 1.0)
    entry_steps = max(s * (k - (s + 1) / 2), 1.0)
    # The least: r[0..k) read and y[0..k) read and written once over the frame's steps (24 B an entry in fp64),
    # the rest on chip. Both kernels move about that through DRAM: r and y fit in L2 (24 B x 200,000 = 4.8 MB),
    # where the two-kernel scheme reads r and y in its dot and y twice more in its update (32 B an entry-step)
    # and the persistent kernel keeps y in its blocks; the time goes to each step's exchange, not the bytes.
    # Arithmetic (--fmad=false): the dot's multiply and add, the update's multiply and add: 4 FLOP.
    least = 3 * real * k / entry_steps
    two_kernel = setup.variant == "two-kernel"
    return {
        "recursion": StageModel(
            bytes_min=least,
            bytes_actual=least,
            flops=4.0,
            units=entry_steps,
            per="entry-step",
            flop_kind=kind,
            note=(
                "dot and update launches a step: 32 B an entry-step through L2"
                if two_kernel
                else "one launch; y stays in the blocks"
            ),
        ),
        "read back": StageModel(
            bytes_min=3 * real,
            bytes_actual=3 * real,
            flops=0.0,
            units=k,
            per="item",
            flop_kind=kind,
            where="link",
            note="y, alphas and betas to the host",
        ),
        "plots": StageModel(
            bytes_min=3 * real,
            bytes_actual=3 * real,
            flops=10.0,
            units=k,
            per="item",
            flop_kind="fp64",
            where="host",
            note="spectra and decimated series, on the host",
        ),
    }
