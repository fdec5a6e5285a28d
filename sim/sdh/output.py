"""The course's histogram printout, byte for byte."""

from __future__ import annotations

import numpy as np


def format_histogram(counts: np.ndarray) -> str:
    """Five buckets a row ('\\n%02d: ' before each fifth), '%15lld ' per count, '| ' between, then the total."""
    out = []
    total = 0
    last = len(counts) - 1
    for i, c in enumerate(counts.tolist()):
        if i % 5 == 0:
            out.append(f"\n{i:02d}: ")
        out.append(f"{c:15d} ")
        total += c
        out.append(f"\n T:{total} \n" if i == last else "| ")
    return "".join(out)
