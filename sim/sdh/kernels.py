"""The CUDA builds of the distance histogram (CuPy-free): five kernels, the fast one per block size
and counter layout. Every build is exact: float64 with the course's arithmetic (--fmad=false)."""

from __future__ import annotations

from sim.cuda import Build

KERNELS = ("naive", "naive-priv", "tiled", "tiled-priv", "fast")
ATOMS = 4  # the fast kernel's atoms per thread (its -DATOMS default)
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)


def histogram(kernel: str, block: int, lane_counts: bool) -> Build:
    options = ["--fmad=false", "-D" + kernel.upper().replace("-", "_")]
    if kernel == "fast":
        options += [f"-DBLOCK={block}", f"-DATOMS={ATOMS}"] + (["-DLANE_COUNTS"] if lane_counts else [])
    return Build("sim/sdh/sdh.cu", tuple(options), ("sdh",))


def builds() -> list[Build]:
    course = [histogram(k, 256, False) for k in KERNELS if k != "fast"]
    return course + [histogram("fast", b, lanes) for b in BLOCK_SIZES for lanes in (True, False)]
