"""A cold start: the first physics frame compiles the kernels (numba, CUDA), which can take many
seconds. ``WarmUp`` runs that frame on a worker thread while the window keeps drawing the initial
state under a "compiling kernels…" box with the kernels compiled so far and a progress bar (sized
by the number of kernels the last cold start compiled, when the settings remember it)."""

from __future__ import annotations

import threading
import time

from imgui_bundle import imgui

from sim.cmdline.progress import CompileWatch
from viewer.panel.style import GREY


class WarmUp:
    def __init__(self, scene, expected: int | None = None):
        self.scene = scene
        self.expected = expected  # kernels the last cold start compiled, if known
        self.watch = CompileWatch()
        self.error: BaseException | None = None
        self.started = time.perf_counter()
        self.seconds = 0.0
        self._thread = threading.Thread(target=self._run, name="kernel warm-up", daemon=True)

    def start(self) -> WarmUp:
        self.watch.__enter__()
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self.scene.advance_frame()
        except BaseException as exc:  # noqa: BLE001  handed to the window, which reports it
            self.error = exc
        finally:
            self.seconds = time.perf_counter() - self.started

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def finish(self) -> None:
        self._thread.join()
        self.watch.__exit__(None, None, None)

    @property
    def compiled(self) -> list[str]:
        return list(self.watch.names)

    def status(self) -> str:
        names = self.compiled
        now = self.watch.current
        parts = [f"{len(names)} compiled" + (f" ({', '.join(names[-3:])})" if names else "")]
        if now:
            parts.append(f"now: {now}")
        builds = self.watch.cuda_builds
        if builds:
            parts.append(f"{builds} CUDA build{'s' if builds > 1 else ''}")
        return "; ".join(parts)

    def fraction(self) -> float | None:
        """Share done, when the number of kernels to compile is known."""
        if not self.expected:
            return None
        return min((len(self.compiled) + 0.5 * bool(self.watch.current)) / self.expected, 0.99)


def draw_compile_box(warm: WarmUp, view: tuple[float, float]) -> None:
    """The "compiling kernels…" box over the middle of the view, ``view`` (width, height) from the window's
    left edge (inside an ImGui frame)."""
    imgui.set_next_window_pos((view[0] * 0.5, view[1] * 0.5), imgui.Cond_.always, (0.5, 0.5))
    imgui.set_next_window_bg_alpha(0.92)
    flags = (
        imgui.WindowFlags_.no_decoration
        | imgui.WindowFlags_.always_auto_resize
        | imgui.WindowFlags_.no_saved_settings
        | imgui.WindowFlags_.no_inputs
    )
    imgui.begin("##compiling", None, flags)
    elapsed = time.perf_counter() - warm.started
    imgui.text(f"compiling kernels…  {elapsed:.1f} s")
    fraction = warm.fraction()
    # A negative fraction draws ImGui's indeterminate bar: the number of kernels is not known yet.
    imgui.progress_bar(fraction if fraction is not None else -elapsed, (360, 0), "" if fraction is None else None)
    imgui.text_colored(GREY, warm.status())
    imgui.text_colored(GREY, "the first run compiles them; later starts load them from the cache")
    imgui.end()
