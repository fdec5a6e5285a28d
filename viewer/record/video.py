"""An H.264 MP4 written through PyAV (its wheels carry FFmpeg with libx264: no system ffmpeg).

``check_video_target(path, size)`` refuses, before any work, an extension other than .mp4, a size
H.264 cannot take (odd width or height: 4:2:0 chroma halves both) and a path that cannot be written
(UsageError: exit 2 on the command line). ``VideoWriter`` encodes on a worker thread (PyAV lets go
of the GIL while FFmpeg converts and encodes) fed by a bounded queue, so the frame loop only hands
over pixels: ``write`` waits for room (every frame counts: headless runs), ``offer`` never waits (a
window: a picture the queue has no room for is dropped and the newest waiting one is shown for its
time instead, so the video keeps its length). The file is written through
``sim.cmdline.writer.atomic_output``: a temporary file renamed into place by ``close()``, removed by
``abort()``, on any error or when no frame came, so a reader never sees half a video and a video
without a frame never replaces a file.
"""

from __future__ import annotations

import threading
from collections import deque
from contextlib import ExitStack
from fractions import Fraction
from pathlib import Path

import numpy as np

from sim.cmdline.cli import UsageError
from sim.cmdline.writer import OutputError, atomic_output, check_target

EXTENSIONS = (".mp4",)
CODEC = "libx264"
OPTIONS = {"preset": "veryfast", "crf": "20"}  # fast enough for 1080p60 on a few cores, clean picture
QUEUE_FRAMES = 8  # pictures waiting for the encoder: write() waits beyond this, offer() drops
MAX_SIDE = 8192


def check_video_target(path: str | Path, size: tuple[int, int], what: str = "video") -> None:
    """Before any work: an .mp4 path that can be written and a size H.264 can encode (UsageError)."""
    check_target(str(path), what)  # a folder or a device in the way is the first thing to say
    suffix = Path(path).suffix.lower()
    if suffix not in EXTENSIONS:
        found = f"extension {suffix!r}" if suffix else "no extension"
        raise UsageError(f"{what} {str(path)!r} has {found}: recordings are H.264 in {', '.join(EXTENSIONS)}")
    check_size(size)


def check_size(size: tuple[int, int]) -> None:
    width, height = (int(v) for v in size)
    if width < 2 or height < 2 or width > MAX_SIDE or height > MAX_SIDE:
        raise UsageError(f"video size {width}x{height} must be 2 to {MAX_SIDE} pixels a side")
    if width % 2 or height % 2:
        raise UsageError(
            f"video size {width}x{height}: H.264 needs an even width and height "
            f"(e.g. {width - width % 2}x{height - height % 2})"
        )


def even_size(size: tuple[int, int]) -> tuple[int, int]:
    """The largest even size within ``size`` (a window may be odd: its last row or column is left out)."""
    return max(int(size[0]) // 2 * 2, 2), max(int(size[1]) // 2 * 2, 2)


class _Waiting:
    """A picture waiting for the encoder and how many video frames in a row it stands for."""

    __slots__ = ("pixels", "copies")

    def __init__(self, pixels: np.ndarray, copies: int):
        self.pixels, self.copies = pixels, copies


class VideoWriter:
    """Frames of one size in, an MP4 out; ``close()`` finishes the file, ``abort()`` drops it."""

    def __init__(self, path: str | Path, size: tuple[int, int], fps: float = 30.0, what: str = "video"):
        import av

        check_size(size)
        self.path = Path(path)
        self.size = (int(size[0]), int(size[1]))
        self.fps = Fraction(fps).limit_denominator(1001)
        if self.fps <= 0:
            raise UsageError(f"frames per second must be positive, got {fps}")
        self.frames = 0  # video frames handed over (a held picture's copies included)
        self.dropped = 0  # pictures offer() had no room for
        self.encoded = 0
        self._error: BaseException | None = None
        self._stack = ExitStack()
        try:
            self.file = self._stack.enter_context(atomic_output(str(self.path), binary=True, what=what))
            self.container = av.open(self.file, mode="w", format="mp4")
            self.stream = self.container.add_stream(CODEC, rate=self.fps, options=dict(OPTIONS))
            self.stream.width, self.stream.height = self.size
            self.stream.pix_fmt = "yuv420p"
        except BaseException as exc:
            self._drop(exc)
            raise
        self.codec = self.stream.codec_context.name
        self._waiting: deque[_Waiting] = deque()
        self._changed = threading.Condition()  # a picture queued or taken, or the end
        self._closing = False
        self._thread = threading.Thread(target=self._encode_loop, name="video encoder", daemon=True)
        self._thread.start()

    # --- the frame loop's side ---------------------------------------------------------------------
    def write(self, pixels: np.ndarray, copies: int = 1) -> None:
        """Queue one frame ((height, width, 3) uint8, top row first), ``copies`` times in a row (a real
        time clock repeats a frame when drawing fell behind). Waits while the encoder is behind."""
        copies = self._check(pixels, copies)
        with self._changed:
            while len(self._waiting) >= QUEUE_FRAMES:
                self._changed.wait()
            self._queue(pixels, copies)

    def offer(self, pixels: np.ndarray, copies: int = 1) -> bool:
        """Like ``write`` but never waits: with the queue full the picture is dropped and the newest
        waiting one stands for its ``copies`` too (the video keeps time). False when dropped."""
        copies = self._check(pixels, copies)
        if not copies:
            return True
        with self._changed:
            if len(self._waiting) < QUEUE_FRAMES:
                self._queue(pixels, copies)
                return True
            self._waiting[-1].copies += copies
            self.frames += copies
            self.dropped += 1
            return False

    def _check(self, pixels: np.ndarray, copies: int) -> int:
        self._raise_failure()
        if pixels.shape != (self.size[1], self.size[0], 3) or pixels.dtype != np.uint8:
            raise ValueError(
                f"frame {pixels.shape} {pixels.dtype} does not match the video's {self.size[0]}x{self.size[1]} RGB"
            )
        return max(int(copies), 0)

    def _queue(self, pixels: np.ndarray, copies: int) -> None:
        """Under ``_changed``, with room."""
        if copies:
            self._waiting.append(_Waiting(pixels, copies))
            self.frames += copies
            self._changed.notify_all()

    @property
    def seconds(self) -> float:
        """Length of the video so far."""
        return float(self.frames / self.fps)

    def close(self) -> Path:
        """Encode what is queued, finish the MP4 and rename it into place; OutputError on failure, or
        when no frame came (the target is then left as it was)."""
        self._finish_thread()
        try:
            self._raise_failure()
            if self.frames == 0:
                raise OutputError(f"no frame was recorded: video {str(self.path)!r} left as it was")
            for packet in self.stream.encode(None):  # flush the encoder's delayed frames
                self.container.mux(packet)
            self.container.close()
        except BaseException as exc:
            self._drop(exc)
            if isinstance(exc, (OSError, ValueError)):
                raise OutputError(f"cannot write video {str(self.path)!r}: {exc}") from None
            raise
        self._stack.close()  # flush, fsync, rename
        return self.path

    def abort(self) -> None:
        """Stop and remove the temporary file; the target is left as it was."""
        self._finish_thread()
        self._drop(RuntimeError("recording abandoned"))

    # --- the encoder thread ----------------------------------------------------------------------------
    def _encode_loop(self) -> None:
        import av
        from av.video.reformatter import VideoReformatter

        time_base = Fraction(1) / self.fps
        reformatter = VideoReformatter()
        while True:
            with self._changed:
                while not self._waiting and not self._closing:
                    self._changed.wait()
                if not self._waiting:
                    return
                waiting = self._waiting.popleft()
                self._changed.notify_all()  # room for write()
            if self._error is not None:
                continue  # drain, so the frame loop never blocks on a dead encoder
            try:
                # converted once, encoded once a copy: a held picture costs no conversions
                frame = reformatter.reformat(
                    av.VideoFrame.from_ndarray(waiting.pixels, format="rgb24"), *self.size, "yuv420p"
                )
                for _ in range(waiting.copies):
                    frame.pts, frame.time_base = self.encoded, time_base
                    for packet in self.stream.encode(frame):
                        self.container.mux(packet)
                    self.encoded += 1
            except BaseException as exc:  # noqa: BLE001  reported to the frame loop
                self._error = exc

    def _finish_thread(self) -> None:
        if self._thread.is_alive():
            with self._changed:
                self._closing = True
                self._changed.notify_all()
            self._thread.join()

    def _raise_failure(self) -> None:
        if self._error is not None:
            raise OutputError(f"encoding video {str(self.path)!r} failed: {self._error}")

    def _drop(self, exc: BaseException) -> None:
        """Close what is open and let the writer remove its temporary file."""
        try:
            container = getattr(self, "container", None)
            if container is not None:
                container.close()
        except Exception:  # noqa: BLE001  already failing: the first error is the one to report
            pass
        try:
            self._stack.__exit__(type(exc), exc, exc.__traceback__)
        except Exception:  # noqa: BLE001
            pass
