"""The first GPU fault this process has heard of (a user's kernel that faulted in the sandbox worker).

After an MMU fault (an illegal address, the kernel log's Xid 31) NVIDIA's driver (H100, 580) makes GL
draws of CUDA-written data stall about 15 s now and then, and new GL contexts draw wrong pictures, in
every process on that GPU, for as long as we watched. The worker that faulted is gone, but the viewer's
pictures would not be right: the sandbox reports the fault here (``report``) and whoever draws through
CUDA–GL interop asks ``seen()`` and goes through host uploads instead for the rest of the session.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_first: str | None = None


def report(message: str) -> None:
    """A kernel faulted on the GPU: ``message`` is the fault in one line (the first one is kept)."""
    global _first
    with _lock:
        if _first is None:
            _first = str(message).strip() or "a kernel faulted"


def seen() -> str | None:
    """The first fault reported in this process, None when none was (a read: cheap enough once a frame)."""
    return _first


def forget() -> None:
    """Back to no fault seen (tests)."""
    global _first
    with _lock:
        _first = None
