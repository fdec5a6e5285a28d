"""The CUDA builds of the distance histogram (CuPy-free): the course's four kernels, the fast one per
block size and counter layout, the tensor-core ones per block size. Every build is exact: float64
with the course's arithmetic (--fmad=false) decides every pair a faster path cannot prove."""

from __future__ import annotations

from sim.cuda import Build

# tensor kernels: name -> row groups of 8 rows per warp (-DROW_GROUPS: A fragments held per warp)
TENSOR_ROW_GROUPS = {"tensor": 4, "tensor-r8": 8}
KERNELS = ("naive", "naive-priv", "tiled", "tiled-priv", "fast", *TENSOR_ROW_GROUPS)
# what sim.dist launches over ranks (it builds their arguments itself); `sdh --kernel all` runs these
RANK_KERNELS = ("naive", "naive-priv", "tiled", "tiled-priv", "fast")
ATOMS = 4  # the fast kernel's atoms per thread (its -DATOMS default)
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)


def rows_per_block(kernel: str, block: int) -> int:
    """Atoms whose pairs with every later atom one block counts."""
    if kernel == "fast":
        return ATOMS * block
    if kernel in TENSOR_ROW_GROUPS:
        return 8 * TENSOR_ROW_GROUPS[kernel] * (block // 32)
    return block


def histogram(kernel: str, block: int, lane_counts: bool, one_add: bool = False) -> Build:
    """The build of a kernel; ``lane_counts`` for fast, ``one_add`` for the tensor kernels (sdh/tensor.cuh)."""
    options = ["--fmad=false"]
    if kernel == "fast":
        options += ["-DFAST", f"-DBLOCK={block}", f"-DATOMS={ATOMS}"] + (["-DLANE_COUNTS"] if lane_counts else [])
    elif kernel in TENSOR_ROW_GROUPS:
        options += ["-DTENSOR", f"-DBLOCK={block}", f"-DROW_GROUPS={TENSOR_ROW_GROUPS[kernel]}"]
        options += ["-DONE_ADD"] if one_add else []
    else:
        options += ["-D" + kernel.upper().replace("-", "_")]
    return Build("sim/sdh/sdh.cu", tuple(options), ("sdh",))


def builds() -> list[Build]:
    course = [histogram(k, 256, False) for k in KERNELS if k != "fast" and k not in TENSOR_ROW_GROUPS]
    tensor = [histogram(k, b, False, one) for k in TENSOR_ROW_GROUPS for b in BLOCK_SIZES for one in (True, False)]
    return course + [histogram("fast", b, lanes) for b in BLOCK_SIZES for lanes in (True, False)] + tensor
