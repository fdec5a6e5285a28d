"""PolyBench's printouts of the output array, exactly as each version's C code prints them (stderr),
and the course's PRINT_HASH.

3.2: ``"%0.2lf "`` per element and a newline after indices 0, 20, 40, ... (no frame).
4.x: ``==BEGIN DUMP_ARRAYS==``, ``begin dump: y``, a newline before indices 0, 20, ..., the
elements, ``\\nend   dump: y``, ``==END   DUMP_ARRAYS==``.
Hash: ``hash = hash*37 + bits`` over the raw 64-bit patterns of the output, in unsigned 64-bit
arithmetic from 0, printed as ``hash: <decimal>``.
"""

from __future__ import annotations

import math

import numpy as np


def c_format(value: float) -> str:
    """C's ``"%0.2lf "`` for one double (glibc spells NaN with its sign: nan / -nan)."""
    if math.isnan(value):
        return "-nan " if math.copysign(1.0, value) < 0 else "nan "
    return f"{value:0.2f} "  # Python rounds and signs like glibc's printf


def dump_32(out) -> str:
    parts = []
    for i, v in enumerate(np.asarray(out, dtype=np.float64).tolist()):
        parts.append(c_format(v))
        if i % 20 == 0:
            parts.append("\n")
    return "".join(parts)


def dump_4(y) -> str:
    parts = ["==BEGIN DUMP_ARRAYS==\n", "begin dump: y"]
    for i, v in enumerate(np.asarray(y, dtype=np.float64).tolist()):
        if i % 20 == 0:
            parts.append("\n")
        parts.append(c_format(v))
    parts += ["\nend   dump: y\n", "==END   DUMP_ARRAYS==\n"]
    return "".join(parts)


def dump(y, version: str) -> str:
    return dump_32(y) if version == "3.2" else dump_4(y)


def bits_hash(out) -> int:
    """sum_i bits_i * 37^(n-1-i) mod 2^64: the course's running ``hash = hash*37 + bits``."""
    bits = np.ascontiguousarray(out, dtype=np.float64).view(np.uint64)
    n = bits.size
    if n == 0:
        return 0
    powers = np.empty(n, np.uint64)
    powers[-1] = 1
    if n > 1:  # 37^(n-1-i), wrapping like C's unsigned long long
        powers[:-1] = np.uint64(37)
        powers[::-1] = np.cumprod(powers[::-1], dtype=np.uint64)
    with np.errstate(over="ignore"):
        return int(np.sum(bits * powers, dtype=np.uint64))


def hash_line(out) -> str:
    return f"hash: {bits_hash(out)}"
