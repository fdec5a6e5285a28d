"""Guarded output buffers: a user's kernel that writes out of bounds is reported, never silently accepted.

Each output is allocated with ``pad`` elements before and after its body, all filled with a sentinel
bit pattern no correct kernel leaves (a NaN with a payload for floats, a marked value for integers).
The kernel gets the body; after the launch, pad elements that no longer hold the sentinel were
written out of bounds: "wrote 12 values past the end of `tout`". A "poison" body starts as the
sentinel too, so a cell the kernel never writes (or reads before writing) shows as a mismatch, not
as a lucky zero; a "zero" body (an accumulator) starts at 0. An "unset" one (without pads) is left as
allocated: where compute-sanitizer's initcheck watches, a read before the kernel's write is reported.

Written against the array API numpy and CuPy share (``xp``): the sandbox guards device buffers, a
CPU test guards numpy arrays the same way.
"""

from __future__ import annotations

import numpy as np

PAD = 4096  # elements each side: an off-by-one row of a 4096-wide grid still lands in the pad
# the sentinel's bits by item size: floats get a quiet NaN whose payload says "never written"
SENTINEL_BITS = {1: 0x7D, 2: 0x7DAD, 4: 0x7FC0DEAD, 8: 0x7FF8DEADDEADDEAD}


def _bits_dtype(dtype) -> np.dtype:
    return np.dtype(f"u{np.dtype(dtype).itemsize}")


def sentinel(dtype):
    """The sentinel as a value of ``dtype`` (NaN for floats)."""
    dtype = np.dtype(dtype)
    return np.array(SENTINEL_BITS[dtype.itemsize], _bits_dtype(dtype)).view(dtype)[()]


def values(count: int, where: str, name: str, at_least: bool = False) -> str:
    """ "wrote 12 values past the end of `out`" (``where``: "past the end of" / "before the start of")."""
    return f"wrote {'at least ' if at_least else ''}{count} value{'s' if count != 1 else ''} {where} `{name}`"


class Guarded:
    """One output buffer of ``shape`` and ``dtype`` with sentinel pads; ``body`` is what the kernel gets."""

    def __init__(self, xp, name: str, shape, dtype, start: str = "poison", pad: int = PAD):
        if start not in ("poison", "zero", "unset"):
            raise ValueError(f"an output starts as 'poison', 'zero' or 'unset', not {start!r}")
        if start == "unset" and pad:
            raise ValueError("an unset output has no pads: a sentinel is what they are watched by")
        self.name, self.pad = name, int(pad)
        self.shape = tuple(int(s) for s in shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self._bits = _bits_dtype(dtype)
        self.whole = xp.empty(self.size + 2 * self.pad, dtype)
        if start != "unset":
            self.whole.view(self._bits).fill(SENTINEL_BITS[np.dtype(dtype).itemsize])
        self.body = self.whole[self.pad : self.pad + self.size].reshape(self.shape)
        if start == "zero":
            self.body.fill(0)

    def _changed(self, part) -> int:
        return int((part.view(self._bits) != self._bits.type(SENTINEL_BITS[self._bits.itemsize])).sum())

    def overflow(self) -> list[str]:
        """What the launch wrote outside the body, one message per side ([] when nothing). A count equal to
        the pad is a lower bound: writes further out reach memory no guard watches."""
        found = []
        for part, where in (
            (self.whole[self.pad + self.size :], "past the end of"),
            (self.whole[: self.pad], "before the start of"),
        ):
            count = self._changed(part)
            if count:
                found.append(values(count, where, self.name, at_least=count == self.pad))
        return found
