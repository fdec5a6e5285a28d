"""The panel's recording section (window only): start / stop (R), a red dot with the elapsed time
and the file name while recording (the dot and the time also head the panel), and the options for
the next recording: the clock (real time, or a video frame every K physics steps), frames per
second, the panel in the video or not."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.panel.section import PanelContext, PanelSection
from viewer.panel.style import GREY, RECORD, RECORDING, item_width, tooltip, wrapped
from viewer.record.recorder import REAL_TIME, STEPS

FPS_CHOICES = (24.0, 30.0, 60.0)
CLOCK_LABELS = {REAL_TIME: "real time", STEPS: "every K steps"}


def elapsed_text(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes:02d}:{seconds:02d}"


def recording_line(app) -> str:
    """ "REC 00:12  name.mp4  (360 frames)" while recording."""
    recorder = app.recording.recorder
    return (
        f"REC {elapsed_text(recorder.elapsed())}  {recorder.path.name}  ({recorder.frames} frames, "
        f"{recorder.video_seconds:.1f} s of video)"
    )


def draw_recording_indicator(app) -> None:
    """The panel's first row while recording: a red dot and the elapsed time, always in sight."""
    _red_dot()
    imgui.same_line()
    imgui.text_colored(RECORDING, f"REC {elapsed_text(app.recording.recorder.elapsed())}  (R stops)")


class RecordSection(PanelSection):
    """Window only (``ctx.window``)."""

    title = RECORD

    def shows(self, ctx: PanelContext) -> bool:
        return ctx.window is not None

    def draw_folded(self, ctx: PanelContext) -> None:
        if ctx.window.recording.active:  # folded: the red line still shows
            imgui.text_colored(RECORDING, recording_line(ctx.window))

    def draw(self, ctx: PanelContext) -> None:
        _draw(ctx.window)


def _draw(app) -> None:
    recording = app.recording
    if recording.active:
        _red_dot()
        imgui.same_line()
        imgui.text_colored(RECORDING, recording_line(app))
        tooltip(str(recording.recorder.path.resolve()))
        if imgui.button("Stop (R)"):
            app.actions.toggle_recording()
    else:
        if imgui.button("Record (R)"):
            app.actions.toggle_recording()
        tooltip(f"an MP4 (H.264) of the view into ./{recording.directory}/")
        if recording.last_path is not None:
            imgui.same_line()
            wrapped(GREY, f"saved {recording.last_path}")
    _options(recording)


def _options(recording) -> None:
    options = recording.options
    imgui.begin_disabled(recording.active)
    imgui.push_item_width(item_width())
    if imgui.begin_combo("clock", CLOCK_LABELS[options.clock]):
        for clock, label in CLOCK_LABELS.items():
            if imgui.selectable(label, clock == options.clock)[0]:
                options.clock = clock
        imgui.end_combo()
    tooltip(
        "real time: the video plays at the speed you watch; every K steps: one video frame per K physics "
        "steps, smooth even when the machine is slow"
    )
    if options.clock == STEPS:
        changed, every = imgui.input_int("K steps a frame", int(options.every))
        if changed:
            options.every = max(int(every), 1)
        tooltip("physics steps per video frame")
    if imgui.begin_combo("frames/s", f"{options.fps:g}"):
        for fps in FPS_CHOICES:
            if imgui.selectable(f"{fps:g}", fps == options.fps)[0]:
                options.fps = fps
        imgui.end_combo()
    imgui.pop_item_width()
    changed, panel = imgui.checkbox("the panel too", options.panel)
    if changed:
        options.panel = panel
    tooltip("off: only the view left of the panel is recorded")
    imgui.end_disabled()


def _red_dot() -> None:
    draw = imgui.get_window_draw_list()
    at = imgui.get_cursor_screen_pos()
    size = imgui.get_text_line_height()
    draw.add_circle_filled((at.x + size / 2, at.y + size / 2), size * 0.4, imgui.color_convert_float4_to_u32(RECORDING))
    imgui.dummy((size, size))
