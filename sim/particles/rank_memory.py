"""The GPU rank's arrays (sim/particles/ranks_gpu.py) and its two streams.

Every array is indexed by slot or by row of a state set, and sized to the most the rank has needed so far,
with a quarter more and some rows to spare: it grows a few times at the start, then never, so a step
allocates nothing. ``perm`` and the positions have room before slot and row 0 (the ghosts below my first
slot may start there; a step that reads by row finds them at their slots).
Growing copies what is there; the rank grows only when both streams are idle (just after its one read
from the device in a step).
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

SIDES = ("below", "above")
SIDE_PRIORITY = -(1 << 20)  # lower is more urgent; beyond the device's range, its most urgent


def _more(needed: int) -> int:
    return int(1.25 * needed) + 1024


class RankMemory:
    """Two state sets (pos, vel, ids by row; pos with ``head`` rows before row 0), bin and offset by slot, perm
    (slot -> row) with ``head`` slots before slot 0, and per side the send buffers for leavers (pos, vel, ids)
    and ghosts (pos)."""

    def __init__(self, xp, real, rows: int, head: int):
        self.xp, self.real = xp, real
        self.rows = self.head = self.send_rows = 0
        # numpy or CuPy arrays (Any: CuPy has no type information); fit below allocates them all
        self.pos: list[Any] = [None, None]
        self.vel: list[Any] = [None, None]
        self.ids: list[Any] = [None, None]
        self.bin: Any = None
        self.offset: Any = None
        self.perm: Any = None
        self._perm_room: Any = None
        self._pos_room: list[Any] = [None, None]
        self.leavers: dict[str, tuple[Any, Any, Any]] = {}  # side -> (pos, vel, ids) send buffers
        self.ghosts: dict[str, Any] = {}  # side -> pos send buffer
        self.fit(rows, head)
        self.fit_sends(1024)

    def holds(self, rows: int, head: int) -> bool:
        """Whether there are ``rows`` rows and slots and ``head`` slots before slot 0 already."""
        return rows <= self.rows and head <= self.head

    def fit(self, rows: int, head: int) -> None:
        """At least ``rows`` rows and slots and ``head`` slots before slot 0; what is there is kept."""
        if self.holds(rows, head):
            return
        xp = self.xp
        new_rows = _more(rows) if rows > self.rows else self.rows
        new_head = _more(head) if head > self.head else self.head
        for s in (0, 1):
            self._pos_room[s] = self._roomy(self._pos_room[s], new_rows, new_head, (2,), self.real)
            self.pos[s] = self._pos_room[s][new_head:]  # pos[s][-head] is the room's first row
            self.vel[s] = _grown(xp, self.vel[s], (new_rows, 2), self.real)
            self.ids[s] = _grown(xp, self.ids[s], (new_rows,), xp.int32)
        self.bin = _grown(xp, self.bin, (new_rows,), xp.int32)
        self.offset = _grown(xp, self.offset, (new_rows,), xp.int32)
        self._perm_room = self._roomy(self._perm_room, new_rows, new_head, (), xp.int32)
        self.perm = self._perm_room[new_head:]  # perm[-head] is the first slot of the room
        self.rows, self.head = new_rows, new_head

    def _roomy(self, old, rows: int, head: int, shape: tuple, dtype):
        """``head`` + ``rows`` rows, the old room's copied so that its row 0 stays row 0."""
        room = self.xp.empty((head + rows, *shape), dtype)
        if old is not None:
            room[head - self.head : head + self.rows] = old
        return room

    def pos_rows(self, s: int, first: int, end: int):
        """Rows [first, end) of set ``s``'s positions (first may be below 0, in the room before row 0)."""
        return self._pos_room[s][self.head + first : self.head + end]

    def fit_sends(self, rows: int) -> None:
        """Send buffers of at least ``rows`` rows a side (their content is not kept)."""
        if rows <= self.send_rows:
            return
        xp, self.send_rows = self.xp, _more(rows)
        for side in SIDES:
            self.leavers[side] = (
                xp.empty((self.send_rows, 2), self.real),
                xp.empty((self.send_rows, 2), self.real),
                xp.empty(self.send_rows, xp.int32),
            )
            self.ghosts[side] = xp.empty((self.send_rows, 2), self.real)

    def set(self, s: int) -> tuple:
        return self.pos[s], self.vel[s], self.ids[s]


def _grown(xp, old, shape, dtype):
    new = xp.empty(shape, dtype)
    if old is not None:
        new[: old.shape[0]] = old
    return new


class Streams:
    """``main`` (the stream current when the rank steps) runs the step; ``side`` (a stream of its own) the
    messages and their packing, so that they overlap the step's interior. Without CuPy (the tests' numpy
    ranks) both are the host's order."""

    def __init__(self, xp):
        self.gpu = xp is not np
        if self.gpu:
            import cupy

            self._cupy = cupy
            # side's few blocks go first whenever both streams have blocks waiting for an SM, so the messages
            # do not wait for the interior's last blocks (CUDA clamps the number to its highest priority)
            self.side_stream = cupy.cuda.Stream(non_blocking=True, priority=SIDE_PRIORITY)
            self._to_side, self._to_main = cupy.cuda.Event(disable_timing=True), cupy.cuda.Event(disable_timing=True)
            self._read = cupy.cuda.Event(disable_timing=True)  # the read queued last has landed

    def mark(self) -> None:
        """What ``main`` has queued so far comes before what ``side`` is given next (not what ``main`` is
        given after this)."""
        if self.gpu:
            self._to_side.record(self._cupy.cuda.get_current_stream())

    def side(self):
        """A context in which work is queued on ``side``, after ``main``'s work up to the last mark."""
        if not self.gpu:
            return contextlib.nullcontext()
        self.side_stream.wait_event(self._to_side)
        return self.side_stream

    def join(self) -> None:
        """``main``'s next work waits for everything queued on ``side`` so far."""
        if self.gpu:
            self._to_main.record(self.side_stream)
            self._cupy.cuda.get_current_stream().wait_event(self._to_main)

    def pinned(self, n: int, dtype):
        """A host array the device's reads land in (pinned with CuPy)."""
        if not self.gpu:
            return np.zeros(n, dtype)
        import cupyx

        return cupyx.zeros_pinned(n, dtype)

    def read_async(self, a, out) -> None:
        """``a`` to be copied into the pinned host array ``out`` once ``main``'s work so far is done; main goes
        on with what is queued after (``wait_read``)."""
        if not self.gpu:
            out[...] = a
            return
        runtime, stream = self._cupy.cuda.runtime, self._cupy.cuda.get_current_stream()
        runtime.memcpyAsync(out.ctypes.data, a.data.ptr, a.nbytes, runtime.memcpyDeviceToHost, stream.ptr)
        self._read.record(stream)

    def wait_read(self, out) -> np.ndarray:
        """``out`` once the read queued last (``read_async``) has landed."""
        if self.gpu:
            self._read.synchronize()
        return out
