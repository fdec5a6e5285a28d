"""A recording: frames of the drawn view, read back through the pixel ring, encoded to an MP4, on
one of two clocks.

- real time (``REAL_TIME``): the video plays at the speed the user watched; a frame drawn late is
  repeated so the video keeps time, frames drawn faster than the video's rate are skipped;
- steps (``STEPS``): one video frame every ``every`` physics steps, whatever the machine's speed,
  so a slow machine still makes a smooth video (K steps per frame at F frames per second play the
  simulation at K·dt·F times real time).

``due(steps, now)`` says how many video frames the frame just drawn stands for (0: none, skip the
read-back); ``capture(fbo, origin, copies, steps)`` reads it; ``final_due(steps)`` says whether the
state drawn last still needs a frame for the video to end on it; ``stop()`` finishes the file.

Frames read back go to the encoder's queue: headless, the recorder waits for room (every frame
counts); in a window (``wait_for_encoder=False``) it never waits, so the window keeps drawing, and a
picture the encoder has no room for is dropped, the previous one shown for its time (``dropped``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import moderngl

from viewer.record.readback import PixelRing
from viewer.record.video import VideoWriter

REAL_TIME, STEPS = "real time", "steps"
CLOCKS = (REAL_TIME, STEPS)


@dataclass
class RecordOptions:
    """What the panel sets (and the settings keep) for the next recording."""

    clock: str = REAL_TIME
    every: int = 6  # physics steps per video frame, STEPS clock
    fps: float = 30.0
    panel: bool = False  # the panel in the video too (else only the view left of it)

    def clock_text(self) -> str:
        if self.clock == STEPS:
            return f"a frame every {self.every} steps, {self.fps:g} frames/s"
        return f"real time, {self.fps:g} frames/s"


class Recorder:
    def __init__(
        self,
        ctx: moderngl.Context,
        path: str | Path,
        size: tuple[int, int],
        options: RecordOptions,
        steps: int = 0,
        now: float | None = None,
        wait_for_encoder: bool = True,
    ):
        if options.clock not in CLOCKS:
            raise ValueError(f"unknown recording clock {options.clock!r} (choose {' or '.join(CLOCKS)})")
        if options.clock == STEPS and int(options.every) < 1:
            raise ValueError(f"a frame every {options.every} steps: it must be at least 1")
        self.options = options
        self.writer = VideoWriter(path, size, options.fps)
        try:
            self.ring = PixelRing(ctx, size)
        except BaseException:
            self.writer.abort()
            raise
        self.path = Path(path)
        self.size = self.writer.size
        self.start_steps = int(steps)
        self.start_time = time.perf_counter() if now is None else now
        self.stopped_at: float | None = None
        self.counted = 0  # video frames accounted for (read or waiting in the ring)
        self.last_steps: int | None = None  # the step the last frame read shows
        self.wait_for_encoder = wait_for_encoder

    @property
    def frames(self) -> int:
        return self.counted

    def elapsed(self, now: float | None = None) -> float:
        """Wall-clock seconds since the recording started."""
        end = self.stopped_at if self.stopped_at is not None else (time.perf_counter() if now is None else now)
        return end - self.start_time

    @property
    def video_seconds(self) -> float:
        return self.counted / self.options.fps

    def due(self, steps: int, now: float | None = None) -> int:
        """How many video frames the frame drawn now stands for."""
        if self.options.clock == STEPS:
            target = (int(steps) - self.start_steps) // int(self.options.every)
        else:
            target = math.floor(self.elapsed(now) * self.options.fps) + 1  # the first frame at once
        return max(target - self.counted, 0)

    @property
    def dropped(self) -> int:
        """Pictures left out while the encoder was behind (the one before shown longer)."""
        return self.writer.dropped

    def final_due(self, steps: int) -> bool:
        """Whether the state at ``steps``, drawn last, still needs a frame for the video to end on it:
        no frame yet, or on the steps clock the last frame shows an earlier step."""
        return self.counted == 0 or (self.options.clock == STEPS and int(steps) != self.last_steps)

    def capture(
        self, fbo: moderngl.Framebuffer, origin: tuple[int, int] = (0, 0), copies: int = 1, steps: int | None = None
    ) -> None:
        """Read the recorded area of ``fbo`` (its bottom-left corner at ``origin``), the state at
        ``steps``, as ``copies`` frames."""
        if copies < 1:
            return
        ready = self.ring.read(fbo, origin, tag=copies)
        self.counted += copies
        self.last_steps = None if steps is None else int(steps)
        if ready is None:
            return
        if self.wait_for_encoder:
            self.writer.write(*ready)
        else:
            self.writer.offer(*ready)

    def stop(self) -> Path:
        """Encode the frames still in the ring and finish the file; OutputError if it cannot be written."""
        self.stopped_at = time.perf_counter()
        try:
            frames = self.ring.drain()
            if frames and self.options.clock != STEPS:
                # a real-time video lasts until the stop: the last frame stays on screen until then
                late = max(math.ceil(self.elapsed() * self.options.fps) - self.counted, 0)
                pixels, copies = frames[-1]
                frames[-1] = (pixels, copies + late)
                self.counted += late
            for pixels, copies in frames:
                self.writer.write(pixels, copies)
        except BaseException:
            self.abort()
            raise
        finally:
            self.ring.release()
        return self.writer.close()

    def abort(self) -> None:
        """Drop the recording: the target file is left as it was."""
        self.stopped_at = time.perf_counter()
        self.ring.release()
        self.writer.abort()
