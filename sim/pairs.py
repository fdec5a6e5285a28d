"""Pair lists in their two shapes, converted once for every scene and test.

- pairs: each pair once, an (m, 2) array of item indices;
- per-item lists: symmetric (each pair in both items' lists), ``count`` (n,) and ``slots`` (n, k)
  with the first ``count[i]`` entries of row i valid (a GPU kernel's partner lists, read back).
"""

from __future__ import annotations

import numpy as np


def lists_from_pairs(pairs: np.ndarray, n: int, min_capacity: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Each pair once -> symmetric per-item lists (count (n,), slots (n, k), unused slots -1)."""
    a = np.concatenate([pairs[:, 0], pairs[:, 1]])
    b = np.concatenate([pairs[:, 1], pairs[:, 0]])
    count = np.bincount(a, minlength=n)
    order = np.argsort(a, kind="stable")
    a, b = a[order], b[order]
    slot = np.arange(a.shape[0]) - np.repeat(np.cumsum(count) - count, count)
    slots = np.full((n, max(int(count.max(initial=0)), min_capacity)), -1, np.int64)
    slots[a, slot] = b
    return count, slots


def pairs_from_lists(count: np.ndarray, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-item lists -> each pair once, as (item, partner) with partner < item."""
    item = np.repeat(np.arange(count.shape[0]), count)
    partner = slots[np.arange(slots.shape[1])[None, :] < count[:, None]]
    keep = partner < item
    return item[keep], partner[keep]


def differing_items(count_a, slots_a, count_b, slots_b) -> np.ndarray:
    """Items whose partner sets differ between two sets of per-item lists (bool (n,))."""
    n = count_a.shape[0]

    def keys(count, slots):
        item = np.repeat(np.arange(n, dtype=np.int64), count)
        partner = slots[np.arange(slots.shape[1])[None, :] < count[:, None]].astype(np.int64)
        return item * n + partner

    ka, kb = keys(count_a, slots_a), keys(count_b, slots_b)
    differ = np.zeros(n, bool)
    differ[np.unique(np.setxor1d(ka, kb)) // n] = True
    differ |= count_a != count_b  # a pair listed twice
    return differ
