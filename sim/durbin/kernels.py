"""The CUDA builds of the recursion (CuPy-free): every kernel of durbin.cu per precision and version.

Block sizes are launch-time values (any multiple of 32 up to 1024), so a build is one kernel kind
x {fp64, fp32} x {PolyBench 4.x, 3.2}. All build with --fmad=false: the updates round like the C code.
"""

from __future__ import annotations

from sim.cuda import Build

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
