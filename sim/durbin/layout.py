"""Which CUDA block updates which entries of y, and the persistent kernel's shared-memory sizes
(CuPy-free: the viewer's block-colouring band and the launch plans both read it).

Step k updates the pairs (p, k-1-p) for p <= (k-1)/2 (the middle one, k odd, pairs with itself) and
sets y[k] = alpha_k. Two-kernel: pair p goes to global thread p mod (grid*block), i.e. block
(p mod (grid*block)) // block. Persistent: block c owns pairs [c*S, c*S+S) for the whole run, S =
pairs_per_block(n, blocks). The new entry y[k] counts as block 0's (it enters at pair 0).
"""

from __future__ import annotations

import numpy as np

from sim.gpu.cuda import ceil_div

PERSISTENT_STATIC_SMEM = 6144  # bytes of static shared memory the persistent kernel uses besides its rings


def pair_count(n: int) -> int:
    """Pair indices the whole run uses (p <= (n-2)/2)."""
    return n // 2


def pairs_per_block(n: int, blocks: int) -> int:
    return max(1, ceil_div(pair_count(n), max(1, blocks)))


def persistent_smem(pairs: int, itemsize: int) -> int:
    """Dynamic shared memory of one persistent block: low entries, high-entry ring, r[p+1], r ring."""
    return 4 * pairs * itemsize


def _pair_entries(k: int) -> tuple[np.ndarray, np.ndarray]:
    p = np.arange((k + 1) // 2)
    return p, k - 1 - p


def owners_two_kernel(k: int, grid: int, block: int) -> np.ndarray:
    """Block that wrote each of y[0..k] in step k of the two-kernel scheme (its update launch)."""
    out = np.zeros(k + 1, np.int32)
    p, j = _pair_entries(k)
    blocks = (p % (grid * block)) // block
    out[p] = blocks
    out[j] = blocks
    return out


def owners_persistent(k: int, pairs: int) -> np.ndarray:
    """Block that updated each of y[0..k] in step k of the persistent kernel (``pairs`` per block)."""
    out = np.zeros(k + 1, np.int32)
    p, j = _pair_entries(k)
    out[p] = p // pairs
    out[j] = p // pairs
    return out
