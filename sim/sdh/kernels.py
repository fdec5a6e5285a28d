"""The CUDA builds of the distance histogram (CuPy-free): the course's four kernels, the fast one per
block size and counter layout, the tensor-core one per block size. Every build is exact: float64
with the course's arithmetic (--fmad=false) decides every pair a faster path cannot prove."""

from __future__ import annotations

import math

from sim.gpu.cuda import Build

TENSOR_ROWS = 32  # rows of A a warp of the tensor kernel holds (sdh/tensor.cuh's ROW_GROUPS = 4 groups of 8)
KERNELS = ("naive", "naive-priv", "tiled", "tiled-priv", "fast", "tensor")
# what sim.sdh.bands splits over ranks (a block's rows from a band's first row on): every kernel
RANK_KERNELS = KERNELS
# the scene's and the command's order of preference, fastest first: where one cannot run (the tensor
# kernel's counters at narrow buckets), the next one counts
FASTEST_FIRST = ("tensor", "fast", "tiled-priv", "naive-priv", "tiled", "naive")
ATOMS = 4  # the fast kernel's atoms per thread (its -DATOMS default)
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)


def rows_per_block(kernel: str, block: int) -> int:
    """Atoms whose pairs with every later atom one block counts."""
    if kernel == "fast":
        return ATOMS * block
    if kernel == "tensor":
        return TENSOR_ROWS * (block // 32)
    return block


def tensor_min_width(block: int, shared_limit: int, side: float = 23000.0) -> float:
    """The bucket width above which the tensor kernel's counters for points in a cube of ``side`` (the
    course's) fit ``shared_limit`` bytes at ``block`` (sdh/gpu.py fine_slots and launch_shape): about 170
    at block 256 on an H100/H200 (227 KiB)."""
    counters = (shared_limit - 40 * block) // 4 - 2  # fine_slots(buckets) = (buckets + 1)^2 + 2
    most = math.isqrt(max(counters, 0)) - 1  # the most buckets that fit
    return side * 1.732 / most if most > 0 else math.inf  # buckets = int(side * 1.732 / W) + 1 <= most


def histogram(kernel: str, block: int, lane_counts: bool, one_add: bool = False) -> Build:
    """The build of a kernel; ``lane_counts`` for fast, ``one_add`` for the tensor kernel (sdh/tensor.cuh)."""
    options = ["--fmad=false"]
    if kernel == "fast":
        options += ["-DFAST", f"-DBLOCK={block}", f"-DATOMS={ATOMS}"] + (["-DLANE_COUNTS"] if lane_counts else [])
    elif kernel == "tensor":
        options += ["-DTENSOR", f"-DBLOCK={block}"]
        options += ["-DONE_ADD"] if one_add else []
    else:
        options += ["-D" + kernel.upper().replace("-", "_")]
    return Build("sim/sdh/sdh.cu", tuple(options), ("sdh",))


def builds() -> list[Build]:
    course = [histogram(k, 256, False) for k in KERNELS if k not in ("fast", "tensor")]
    tensor = [histogram("tensor", b, False, one) for b in BLOCK_SIZES for one in (True, False)]
    return course + [histogram("fast", b, lanes) for b in BLOCK_SIZES for lanes in (True, False)] + tensor


# --- speed of light (sim.gpu.roofline): per pair -------------------------------------------------------------
L2_BYTES = 50 << 20  # an H100's L2: later atoms re-read by every block stay there while they fit
ATOM_BYTES = {"fast": 24 + 16, "tensor": 24 + 72}  # + float32 copies (float4) / the tensor's qa, qb, cj rows


# Nsight Compute, H200, one histogram of 512,000 atoms (the course preset, block 256; bench/ncu_models.sh): what
# the tensor kernel executes, not an algorithmic minimum. 46.39 G warp instructions (0.354 a pair), 61% of the
# issue slots; 17.99 G wavefronts of L1's data pipe (0.137 a pair), 94% of its peak: the limit. 14.33 G of them
# are the counters' shared-memory atomics, 3.5 a warp's atomic: its 32 lanes count random counters, and the
# lanes whose counters share one of the 32 banks take a round each. The FP64 tensor pipe is far from busy.
# Copies of the counters (lane l in copy l % C) cut the rounds but not enough to pay for what they take from
# shared memory at the course's 6,563 counters: 4 copies (two blocks an SM) 104 ms, 8 copies 103 ms, against
# 73.1 ms (H200, block 256 and 512).
PAIRS_PROFILED = 512_000 * 511_999 / 2
TENSOR_INSTRUCTIONS = 46.39e9 / PAIRS_PROFILED
TENSOR_WAVEFRONTS = 17.99e9 / PAIRS_PROFILED


def models(setup) -> dict:
    """The histogram per pair: N(N-1)/2 pairs a histogram, ``setup.steps`` histograms."""
    from sim.gpu.roofline import FlopKind, StageModel

    n, kernel = max(setup.n, 2), setup.variant or "tensor"
    pairs = n * (n - 1) / 2
    buckets = int(setup.stats.get("buckets") or 1)
    # The least: every atom's three float64 coordinates read once, the 64-bit counters written once.
    least = 24.0 * n + 8.0 * buckets
    # What moves: each block streams every later atom; while all atoms fit in L2 that is the atoms once
    # (plus the fast kernel's float32 copies, the tensor kernel's rows); beyond, each block re-reads half of
    # them on average. Atomic counts (naive) and the blocks' merges land in L2, not DRAM.
    per_atom = ATOM_BYTES.get(kernel, 24)
    moved = per_atom * n + 8.0 * buckets
    if per_atom * n > L2_BYTES:
        blocks = -(-n // rows_per_block(kernel, int(setup.block or 256)))
        moved += blocks * per_atom * n / 2
    kind: FlopKind
    if kernel == "tensor":  # one m8n8k4 float64 MMA per 8 x 8 pairs: 512 FLOP / 64 pairs
        flops, kind = 8.0, "fp64-tensor"
        note = (
            "squared distances on the FP64 tensor cores (8 FLOP a pair); instructions and L1 wavefronts (the"
            " counters' atomics) as measured at 512,000"
        )
    else:  # dx, dy, dz; three squares; two sums; sqrt; / w (sqrt and division counted once each)
        flops, kind = 10.0, "fp32" if kernel == "fast" else "fp64"
        note = "float32 distances, float64 recheck near edges" if kernel == "fast" else "float64 distance per pair"
    return {
        "histogram": StageModel(
            bytes_min=least / pairs,
            bytes_actual=moved / pairs,
            flops=flops,
            units=pairs * setup.steps,
            per="pair",
            flop_kind=kind,
            note=note if kernel == "tensor" else note + "; no instruction count: no issue limit",
            instructions=TENSOR_INSTRUCTIONS if kernel == "tensor" else 0.0,
            wavefronts=TENSOR_WAVEFRONTS if kernel == "tensor" else 0.0,
        )
    }
