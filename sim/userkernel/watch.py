"""The user's kernel file watched for saves.

A background thread looks at the file's modification time and size every ``POLL_S`` seconds (the frame
thread does no file I/O) and on a change reads the new text and compiles it with NVRTC
(``source.compile_check``, in a child process: ``close`` stops a compile in flight at once) there. The
frame thread takes the newest result (``SourceWatcher.take``) between frames; results it missed are
replaced by later ones.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sim.cmdline.cli import UsageError

if TYPE_CHECKING:
    from sim.userkernel.footprint import Footprint
    from sim.userkernel.source import UserSource

POLL_S = 0.25


@dataclass(frozen=True)
class Reload:
    """One look at the file: the text read (``source.UserSource``) and its NVRTC messages, or why it could
    not be read or checked (``problem``: the last good build keeps running)."""

    source: UserSource | None
    diagnostics: tuple = ()
    problem: str = ""
    footprint: Footprint | None = None  # what ptxas made of the entry

    @property
    def compiles(self) -> bool:
        return self.source is not None and not self.problem and not any(d.severity == "error" for d in self.diagnostics)


class SourceWatcher:
    """Checks ``source`` (a ``UserSource`` just read) first, then every save of its file, for ``spec``'s stage."""

    def __init__(self, source, spec, poll_s: float = POLL_S):
        self.source, self.spec, self.poll_s = source, spec, poll_s
        self.checking = True  # a text is being compiled now (the panel says so)
        self._latest: Reload | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"watching {source.variant}", daemon=True)

    def start(self) -> SourceWatcher:
        self._thread.start()
        return self

    def take(self) -> Reload | None:
        """The newest result not taken yet (frame thread: no I/O, a lock only)."""
        with self._lock:
            latest, self._latest = self._latest, None
        return latest

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)  # a compile in flight is stopped (its process killed)

    # --- the watching thread -----------------------------------------------------------------------
    def _stamp(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.source.path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def _run(self) -> None:
        seen = self._stamp()
        self._post(self._check(self.source))
        while not self._stop.wait(self.poll_s):
            stamp = self._stamp()
            if stamp != seen:
                seen = stamp
                self.checking = True
                self._post(self._read())

    def _read(self) -> Reload:
        from sim.userkernel import source

        try:
            text = source.load(self.source.path, self.spec, self.source.stage.name)
        except UsageError as exc:  # removed, unreadable, not text: keep what runs
            return Reload(None, problem=str(exc))
        return self._check(text)

    def _check(self, text) -> Reload:
        from sim.gpu.nvrtc import CompileStopped
        from sim.userkernel import source

        try:
            checked = source.check_build(text, stop=self._stop)
            return Reload(text, tuple(checked.diagnostics), footprint=checked.footprint)
        except CompileStopped:  # closing: nobody takes it
            return Reload(text, problem="closed")
        except Exception as exc:  # noqa: BLE001  NVRTC itself failed: say why, keep what runs
            return Reload(text, problem=f"cannot compile {text.variant}: {str(exc).strip() or type(exc).__name__}")

    def _post(self, reload: Reload) -> None:
        with self._lock:
            self._latest = reload
        self.checking = False
