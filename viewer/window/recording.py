"""R in the window: record what the window shows to an MP4 under ./recordings/.

While recording, each frame is drawn into an offscreen framebuffer of the window's size and blitted
to the window, and the recorder reads the recorded area of that framebuffer back through its ring
of pixel buffers (no stall): the whole window with the panel, or only the view left of it. The
frame loop never waits for the encoder (a picture it has no room for is dropped, the one before
shown for its time), so the window keeps drawing while it records. The size is fixed when recording
starts (trimmed to even numbers for H.264); a window that changes size stops the recording and keeps
what was recorded. A recording ends on the state drawn last.
"""

from __future__ import annotations

import sys
import traceback
from datetime import datetime
from pathlib import Path

from sim.cmdline.writer import OutputError, make_folder
from viewer.record.recorder import Recorder, RecordOptions
from viewer.record.video import even_size
from viewer.render.offscreen import Offscreen

RECORDING_DIR = Path("recordings")


class WindowRecording:
    def __init__(self, directory: Path | str = RECORDING_DIR, options: RecordOptions | None = None):
        self.directory = Path(directory)
        self.options = options or RecordOptions()
        self.recorder: Recorder | None = None
        self.last_path: Path | None = None
        self.target: Offscreen | None = None  # what frames are drawn into while recording
        self._fb_size: tuple[int, int] | None = None
        self._origin = (0, 0)
        self._drawn_steps: int | None = None  # the step the target shows

    @property
    def active(self) -> bool:
        return self.recorder is not None

    def next_path(self) -> Path:
        stem = f"kernel-lab-{datetime.now():%Y%m%d-%H%M%S}"
        path, suffix = self.directory / f"{stem}.mp4", 1
        while path.exists():
            path, suffix = self.directory / f"{stem}-{suffix}.mp4", suffix + 1
        return path

    def area(self, fb_size: tuple[int, int], covered_right: int) -> tuple[tuple[int, int], tuple[int, int]]:
        """(origin, size) of the recorded area in framebuffer pixels: the whole frame, or the part left
        of the panel, trimmed to even sizes (the top rows are kept)."""
        width, height = fb_size
        if not self.options.panel:
            width = max(width - covered_right, 2)
        size = even_size((width, height))
        return (0, fb_size[1] - size[1]), size

    def start(self, ctx, fb_size: tuple[int, int], covered_right: int, steps: int, path: Path | None = None) -> Path:
        """Start recording (OutputError / UsageError / ValueError when it cannot)."""
        path = Path(path) if path is not None else self.next_path()
        make_folder(path.parent, "recording")
        origin, size = self.area(fb_size, covered_right)
        self.recorder = Recorder(
            ctx, path, size, RecordOptions(**vars(self.options)), steps=steps, wait_for_encoder=False
        )
        self._fb_size, self._origin, self._drawn_steps = tuple(fb_size), origin, None
        return path

    def framebuffer(self, ctx, fb_size: tuple[int, int]):
        """Where this frame is drawn: the offscreen target while recording (made to the window's size)."""
        if self.target is None or self.target.size != tuple(fb_size):
            if self.target is not None:
                self.target.release()
            self.target = Offscreen(ctx, fb_size)
        return self.target.fbo

    def size_changed(self, fb_size: tuple[int, int]) -> bool:
        return self.active and tuple(fb_size) != self._fb_size

    def capture(self, steps: int) -> int:
        """After drawing into ``framebuffer``: read it back as many times as the clock says; returns that."""
        self._drawn_steps = steps
        copies = self.recorder.due(steps)
        if copies:
            self.recorder.capture(self.target.fbo, self._origin, copies, steps)
        return copies

    def stop(self) -> Path | None:
        """Finish the file; returns its path (OutputError if it could not be written)."""
        recorder, self.recorder = self.recorder, None
        if recorder is None:
            return None
        drawn = self._drawn_steps
        if drawn is not None and self.target is not None and recorder.final_due(drawn):
            try:
                recorder.capture(self.target.fbo, self._origin, 1, drawn)
            except BaseException:
                recorder.abort()
                raise
        self.last_path = recorder.stop()
        return self.last_path

    def release(self) -> None:
        """Closing the viewer: finish a recording under way, free the target."""
        try:
            if self.active:
                self.stop()
        except OutputError as exc:  # closing anyway: say so
            print(f"viewer: {exc}", file=sys.stderr)
        except Exception as exc:  # noqa: BLE001
            traceback.print_exception(exc)
        finally:
            if self.target is not None:
                self.target.release()
                self.target = None
