"""The ImGui side panel: a message line, scene, preset, backend, ball or particle count, run controls,
physics sliders, colouring, counters, rates, per-stage timings (ImPlot chart + table) and the
live distance histogram.

Also the F1 help window, which lists ``keys.BINDINGS`` so it cannot drift from the dispatcher.
"""

from __future__ import annotations

import time

import numpy as np
from imgui_bundle import imgui, implot

from viewer.controller import BLOCK_COLORS
from viewer.histogram_section import draw_histogram_section
from viewer.keys import BINDINGS, MOUSE_HELP
from viewer.panel_style import ERROR, GREY, MESSAGE, disabled_tooltip, tooltip

PANEL_WIDTH = 400
_BLINK = (imgui.ImVec4(1.0, 0.25, 0.2, 1.0), imgui.ImVec4(1.0, 0.85, 0.3, 1.0))
_BACKENDS = ("cpu", "gpu")
_BLOCK_COLORS_LABEL = "CUDA block"


class Panel:
    def __init__(self):
        self._count_choice: int | None = None
        self._count_source: tuple | None = None  # (preset, target_n) the choice was taken from

    # --- the panel ------------------------------------------------------------------------
    def draw(self, ctl, app=None) -> None:
        """Draw the panel for controller ``ctl``; ``app`` (the window) adds its own rows."""
        io = imgui.get_io()
        height = io.display_size.y - 16
        imgui.set_next_window_pos((io.display_size.x - PANEL_WIDTH - 8, 8), imgui.Cond_.always)
        imgui.set_next_window_size((PANEL_WIDTH, height), imgui.Cond_.always)
        imgui.set_next_window_bg_alpha(0.88)
        flags = imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_resize
        flags |= imgui.WindowFlags_.no_saved_settings
        expanded, _ = imgui.begin("kernel-lab", None, flags)
        if expanded:
            self._message_line(ctl)  # first, so key feedback is never scrolled out of sight
            self._scene_section(ctl)
            self._cuda_section(ctl, app)
            self._run_section(ctl, app)
            self._physics_section(ctl)
            self._color_section(ctl)
            self._stats_section(ctl, app)
            self._timing_section(ctl)
            draw_histogram_section(ctl.histogram, ctl.scene, PANEL_WIDTH - 170)
        imgui.end()

    def _scene_section(self, ctl) -> None:
        from sim import SCENES

        scene = ctl.scene
        imgui.separator_text("Scene")
        if imgui.begin_combo("scene", scene.name):
            for name in SCENES:
                if imgui.selectable(name, name == scene.name)[0]:
                    ctl.switch_scene(name)
            imgui.end_combo()

        if imgui.begin_combo("preset", scene.preset):
            for name, description in scene.presets.items():
                if imgui.selectable(name, name == scene.preset)[0]:
                    ctl.load_preset(name)
                tooltip(description)
            imgui.end_combo()
        tooltip(scene.presets.get(scene.preset, ""))

        gpu_reason = ctl.gpu_reason()
        if imgui.begin_combo("backend", scene.backend):
            for backend in _BACKENDS:
                unavailable = gpu_reason if backend == "gpu" else None
                flags = imgui.SelectableFlags_.disabled if unavailable else 0
                label = f"{backend}  (unavailable)" if unavailable else backend
                if imgui.selectable(label, backend == scene.backend, flags)[0]:
                    ctl.set_backend(backend)
                disabled_tooltip(unavailable or "")
            imgui.end_combo()
        note = getattr(scene, "backend_note", "")
        if gpu_reason:
            # First clause only, the whole reason on hover: CUDA errors can be long.
            imgui.text_colored(GREY, "GPU: " + gpu_reason.split(":")[0])
            tooltip(gpu_reason)
        if note:
            imgui.push_text_wrap_pos(0.0)
            imgui.text_colored(GREY, note)
            imgui.pop_text_wrap_pos()
        error = getattr(scene, "gpu_error", None)
        if error:
            imgui.push_text_wrap_pos(0.0)
            imgui.text_colored(ERROR, f"GPU error: {error}")
            imgui.pop_text_wrap_pos()

        if scene.takes_count:
            self._count_slider(ctl)

    def _count_slider(self, ctl) -> None:
        scene = ctl.scene
        source = (scene.preset, scene.target_n)
        if self._count_source != source or self._count_choice is None:
            self._count_source, self._count_choice = source, int(scene.target_n)
        lo, hi = (int(v) for v in scene.count_range)
        flags = imgui.SliderFlags_.always_clamp
        if hi > 100 * max(lo, 1):
            flags |= imgui.SliderFlags_.logarithmic
        imgui.set_next_item_width(PANEL_WIDTH - 170)
        _, self._count_choice = imgui.slider_int("##count", self._count_choice, lo, hi,
                                                 f"%d {ctl.words.unit}", flags)
        released = imgui.is_item_deactivated_after_edit()
        tooltip("applies when released (reloads the preset); ctrl+click to type")
        imgui.same_line()
        changed = self._count_choice != scene.target_n
        imgui.begin_disabled(not changed)
        clicked = imgui.button("Apply")
        imgui.end_disabled()
        if (released or clicked) and changed:
            ctl.set_count(self._count_choice)
            self._count_source = None  # resync with what the scene accepted

    def _cuda_section(self, ctl, app) -> None:
        """The GPU switches, shown only when this scene can use them here."""
        scene = ctl.scene
        if ctl.gpu_reason() is not None or not hasattr(scene, "variants"):
            return
        words = ctl.words
        imgui.separator_text("CUDA")
        if hasattr(scene, "set_cuda_proximity"):
            if imgui.checkbox("CUDA proximity", bool(scene.cuda_proximity))[0]:
                ctl.toggle_cuda_proximity()
            tooltip("F4: the proximity pass runs as a GPU kernel (on) or on the CPU (off)")

        kernels_run = ctl.gpu_kernels_run()
        imgui.push_item_width(PANEL_WIDTH - 170)
        imgui.begin_disabled(not kernels_run)
        if imgui.begin_combo("variant", scene.variant):
            for variant in scene.variants:
                if imgui.selectable(variant, variant == scene.variant)[0]:
                    ctl.set_variant(variant)
            imgui.end_combo()
        imgui.end_disabled()
        disabled_tooltip(f"q: {words.variant}" + ctl.variant_note())
        if imgui.begin_combo("block size", str(scene.block)):
            for block in scene.block_sizes:
                if imgui.selectable(str(block), block == scene.block)[0]:
                    ctl.set_block(block)
            imgui.end_combo()
        tooltip("Q: threads per CUDA block")
        imgui.pop_item_width()

        imgui.begin_disabled(not kernels_run and not scene.verify)  # on can always go off
        changed = imgui.checkbox("verify against the CPU", bool(scene.verify))[0]
        imgui.end_disabled()
        if changed:
            ctl.toggle_verify()
        disabled_tooltip(f"v: {words.verified}; {words.mismatch}" + ctl.variant_note())
        if scene.verify:
            imgui.same_line()
            imgui.text_colored(_BLINK[int(time.monotonic() * 4) % 2], "VERIFYING")  # 2 blinks/s
            self._verification_counts(scene.verification)
        if app is not None and getattr(scene, "render_on_device", False):
            feed = app.view.feed
            if feed.fallback_reason:
                imgui.text_colored(GREY, f"{words.unit} drawn through host copies")
                tooltip(feed.fallback_reason)
            elif feed.path:
                imgui.text_colored(GREY, f"{words.unit} drawn through {feed.path}")

    @staticmethod
    def _verification_counts(result) -> None:
        """The scene's last check, in the keys every scene's ``verification`` shares, plus the
        balls' pair totals or the particles' largest difference."""
        if not result:
            imgui.text_colored(GREY, "waiting for the next check")
            return
        differing, checked = int(result.get("differing", 0)), int(result.get("checked", 0))
        unit = result.get("unit", "balls")
        colour = ERROR if differing else GREY
        imgui.text_colored(colour, f"{differing:,} of {checked:,} {unit} differ (drawn red)")
        if "pairs_gpu" in result:
            imgui.text(f"pairs: GPU {int(result['pairs_gpu']):,}, CPU {int(result.get('pairs_cpu', 0)):,}")
        if "largest_difference" in result:
            imgui.text(f"largest difference {float(result['largest_difference']):.3g}")
            tooltip("distance between a particle's GPU and CPU positions after the step")
        imgui.same_line()
        imgui.text(f"  check {float(result.get('check_ms', 0.0)):.1f} ms")
        against = result.get("against", "")
        if against:
            tooltip(f"checked against {against}")
        mismatched = int(result.get("passes_mismatched", 0))
        checked = int(result.get("passes_checked", 0))
        imgui.text_colored(ERROR if mismatched else GREY,
                           f"passes: {checked:,} checked, {mismatched:,} mismatched")

    def _run_section(self, ctl, app) -> None:
        imgui.separator_text("Run")
        if imgui.button("Resume" if ctl.paused else "Pause", (80, 0)):
            ctl.toggle_pause()
        tooltip("space")
        imgui.same_line()
        if imgui.button("Step"):
            ctl.single_step()
        tooltip("s: pause and advance one physics step")
        imgui.same_line()
        if imgui.button("Reset"):
            ctl.reset()
        tooltip("r: reload the preset")
        if app is not None:
            imgui.same_line()
            if imgui.button("Camera"):
                app.reset_camera()
            tooltip("Home: default view")
            imgui.same_line()
            if imgui.button("Help"):
                app.toggle_help()
            tooltip("F1: keys and mouse")
            changed, limited = imgui.checkbox("limit to 60 fps", app.max_fps is not None)
            if changed:
                app.max_fps = 60.0 if limited else None
            tooltip("off: draw as fast as possible (physics then runs faster than real time)")
            imgui.same_line()
            if imgui.button("Screenshot"):
                app.screenshot()
            tooltip("F12")

    def _physics_section(self, ctl) -> None:
        scene = ctl.scene
        if not scene.params:
            return
        imgui.separator_text("Physics")
        imgui.push_item_width(PANEL_WIDTH - 170)
        for param in scene.params:
            value = ctl.param_value(param.name)
            if value is None:
                continue
            flags = imgui.SliderFlags_.logarithmic if param.log else 0
            changed, new = imgui.slider_float(param.label, value, param.lo, param.hi, param.fmt, flags)
            if changed:
                ctl.set_param(param.name, new)
            tooltip(param.help)
        imgui.pop_item_width()

    def _color_section(self, ctl) -> None:
        scene = ctl.scene
        modes = scene.color_modes
        imgui.separator_text("Colour")
        if imgui.begin_combo("colour by", modes.get(ctl.color_mode, ctl.color_mode)):
            block_reason = _block_colors_unavailable(ctl)
            for mode, label in modes.items():
                unavailable = block_reason if mode == BLOCK_COLORS else None
                flags = imgui.SelectableFlags_.disabled if unavailable else 0
                if imgui.selectable(label, mode == ctl.color_mode, flags)[0]:
                    ctl.set_color_mode(mode)
                disabled_tooltip(unavailable or ("c: on / off" if mode == BLOCK_COLORS else ""))
            if BLOCK_COLORS not in modes:
                imgui.selectable(_BLOCK_COLORS_LABEL, False, imgui.SelectableFlags_.disabled)
                disabled_tooltip(block_reason)
            imgui.end_combo()
        if getattr(scene, "verify", False):
            imgui.text_colored(GREY, ctl.words.mismatch)

    def _stats_section(self, ctl, app) -> None:
        stats = ctl.stats()
        if "absmin" in stats:
            self._particle_counters(ctl, stats)
        else:
            self._ball_counters(stats)
        steps_s = 0.0 if ctl.paused else ctl.step_rate.rate
        imgui.text(f"physics: {steps_s:,.0f} steps/s" + ("  (paused)" if ctl.paused else ""))
        if app is not None:
            imgui.text(f"render: {app.frame_rate.rate:.1f} frames/s, {app.render_ms:.1f} ms per frame")

    @staticmethod
    def _particle_counters(ctl, stats: dict) -> None:
        imgui.separator_text("Particles")
        imgui.text(f"particles {int(stats.get('n', 0)):,}    box size {float(getattr(ctl.scene, 'size', 0.0)):.4g}")
        imgui.text(f"steps {int(stats.get('steps', 0)):,}    sim time {float(stats.get('sim_time', 0.0)):.3f} s")
        absmin, absavg = float(stats["absmin"]), float(stats.get("absavg", 0.0))
        imgui.text(f"absmin {absmin:.4f}    absavg {absavg:.4f}")
        tooltip("the course's distance statistics, in cutoffs: closest pair and mean pair distance "
                 "(correct runs: about 0.7-0.8 and 0.95; warnings below 0.4 and 0.8)")

    @staticmethod
    def _ball_counters(stats: dict) -> None:
        imgui.separator_text("Counters")
        n = int(stats.get("n", 0))
        tests = int(stats.get("tests", 0))
        imgui.text(f"balls {n:,}    steps {int(stats.get('steps', 0)):,}    "
                   f"sim time {float(stats.get('sim_time', 0.0)):.3f} s")
        per_ball = tests / n if n else 0.0
        imgui.text(f"last pass: {tests:,} tests ({per_ball:.1f}/ball), {int(stats.get('pairs', 0)):,} pairs")
        tooltip(f"proximity passes so far: {int(stats.get('passes', 0)):,}")

    def _timing_section(self, ctl) -> None:
        timer = ctl.scene.timer
        names = list(timer.names)
        imgui.separator_text("Stage times (ms per frame)")
        if implot.begin_plot("##stages", (-1, 140), implot.Flags_.no_menus | implot.Flags_.no_box_select):
            implot.setup_axes("frames ago", "ms", implot.AxisFlags_.auto_fit, 0)
            # Scale to the bulk of the data, not to one-off spikes such as the first (compiling) frame.
            tops = [np.percentile(h, 95) for h in map(timer.history, names) if h.size]
            implot.setup_axis_limits(implot.ImAxis_.y1, 0.0, 1.25 * max(tops, default=1.0) + 0.05,
                                     imgui.Cond_.always)
            legend = implot.LegendFlags_.horizontal | implot.LegendFlags_.outside
            implot.setup_legend(implot.Location_.north, legend)
            for name in names:
                ys = timer.history(name)
                if ys.size:
                    xs = np.arange(-ys.size + 1, 1, dtype=np.float64)
                    implot.plot_line(name, xs, ys)
            implot.end_plot()
        table_flags = imgui.TableFlags_.borders_inner_h | imgui.TableFlags_.row_bg
        if names and imgui.begin_table("stage_table", 3, table_flags):
            imgui.table_setup_column("stage")
            imgui.table_setup_column("last ms")
            imgui.table_setup_column("median ms")
            imgui.table_headers_row()
            latest = timer.latest()
            for name in names:
                imgui.table_next_row()
                imgui.table_next_column()
                imgui.text(name)
                imgui.table_next_column()
                imgui.text(f"{latest.get(name, 0.0):.2f}")
                imgui.table_next_column()
                imgui.text(f"{timer.median(name):.2f}")
            imgui.end_table()

    def _message_line(self, ctl) -> None:
        if ctl.message:
            imgui.push_text_wrap_pos(0.0)
            imgui.text_colored(MESSAGE, ctl.message)
            imgui.pop_text_wrap_pos()
        else:
            imgui.text_colored(GREY, "F1: keys and mouse")


def _block_colors_unavailable(ctl) -> str | None:
    """Why the "CUDA block" colouring cannot be chosen now, or None."""
    reason = ctl.gpu_reason()
    if reason:
        return "needs a GPU: " + reason
    if BLOCK_COLORS not in ctl.scene.color_modes:
        return f"the {ctl.scene.name} scene has no CUDA kernels to colour by"
    if not getattr(ctl.scene, "block_colors_available", False):
        return f"no CUDA kernel handles the {ctl.words.unit} now: {ctl.words.kernels_hint}"
    return None


def draw_help() -> bool:
    """The F1 window; returns False when the user closed it."""
    io = imgui.get_io()
    centre = (io.display_size.x * 0.33, io.display_size.y * 0.5)
    imgui.set_next_window_pos(centre, imgui.Cond_.appearing, (0.5, 0.5))
    imgui.set_next_window_bg_alpha(0.94)
    flags = imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_saved_settings
    _, still_open = imgui.begin("Keys and mouse (F1)", True, flags)
    if imgui.begin_table("keys", 2, imgui.TableFlags_.row_bg):
        for binding in BINDINGS:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(binding.label)
            imgui.table_next_column()
            imgui.text(binding.help)
        for gesture, what in MOUSE_HELP:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(gesture)
            imgui.table_next_column()
            imgui.text(what)
        imgui.end_table()
    imgui.text_colored(GREY, "(GPU) keys say why they are unavailable when there is no GPU backend.")
    imgui.end()
    return bool(still_open)
