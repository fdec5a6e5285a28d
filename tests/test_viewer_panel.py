"""The panel reads the scene's spec: counters from ``spec.stats`` (the lines ``run --headless``
prints), the verification record's lines, a legend's range and unit, the tool's hint, the GPU
option combos; and it draws for every registered scene."""

import numpy as np
import pytest
from gl_support import needs_egl

from sim.contract import Legend
from sim.framework.checks import Verification
from sim.registry import SCENES, create_scene
from viewer.panel.colour import legend_text
from viewer.panel.gpu import verification_lines
from viewer.panel.stats import counter_lines
from viewer.panel.tool import tool_hint
from viewer.window.controller import Controller


def test_particle_counters_are_the_specs_stats():
    scene = create_scene("particles", n=2000)
    scene.advance_frame()
    lines = [line for line, _ in counter_lines(Controller(scene))]
    assert lines == [stat.text(scene.stats()) for stat in scene.spec.stats]
    absmin = next(line for line in lines if line.startswith("absmin"))
    assert absmin == f"absmin {scene.stats()['absmin']:.4f}"
    assert "particles 2,000" in lines


def test_ball_counters_show_the_last_pass():
    scene = create_scene("balls", preset="block", n=300, seed=1)
    scene.advance_frame()
    lines = dict(counter_lines(Controller(scene)))
    tests = scene.stats()["tests"]
    assert tests > 0 and f"last pass: tests {tests:,}" in lines
    assert lines[f"last pass: tests {tests:,}"] == "predicate evaluations of the last proximity pass"
    assert not any(line.startswith("absmin") for line in lines)


def test_verification_lines_read_the_record():
    record = Verification(
        "the CPU z-sweep", 3, 1715, 4.25, 7, 1, {"pairs on the GPU": 1200, "largest difference": 2e-13}
    )
    lines = verification_lines(record, "balls")
    assert lines[0] == ("3 of 1,715 balls differ (marked)", True)
    assert ("pairs on the GPU: 1,200", False) in lines and ("largest difference: 2e-13", False) in lines
    assert ("check 4.2 ms against the CPU z-sweep", False) in lines
    assert lines[-1] == ("passes: 7 checked, 1 mismatched", True)
    assert verification_lines(None, "balls") == [("waiting for the next check", False)]


def test_legend_ends_carry_the_unit():
    assert legend_text(Legend("density", 0.0, 3.0, "particles per cell")) == ("0", "3 particles per cell")
    assert legend_text(Legend("T", -1.5, 2e6)) == ("-1.5", "2e+06")


def test_tool_hint_follows_the_tool_switch():
    ctl = Controller(create_scene("particles", n=500))
    assert "ctrl + left drag" in tool_hint(ctl)
    ctl.set_tool(True)
    assert ctl.scene.controls.tool_on and "left and right drags use it" in tool_hint(ctl)
    assert ctl.message.startswith("push tool on")
    ctl.set_tool_value("radius", 99.0)
    assert ctl.scene.controls.tool_values["radius"] == pytest.approx(0.3), "clamped to the slider's range"


def test_the_precision_option_goes_through_the_controller():
    ctl = Controller(create_scene("particles", n=500))
    ctl.set_option("precision", "fp32")
    assert ctl.scene.knobs.options["precision"] == "fp32" and ctl.message == "precision fp32"
    ctl.set_option("precision", "fp128")
    assert "failed" in ctl.message and ctl.scene.knobs.options["precision"] == "fp32"


@needs_egl
@pytest.mark.parametrize("name", list(SCENES))
def test_the_panel_draws_for_every_scene(name):
    from viewer.headless import render_pixels
    from viewer.panel.style import PANEL_WIDTH

    spec = SCENES[name]
    preset = spec.preset(spec.default_preset)
    scene = spec.create(n=min(preset.count, 2000)) if preset.count else spec.create()
    pixels = render_pixels(scene, 1000, 700, panel=True).astype(int)
    panel = pixels[20:680, 1000 - PANEL_WIDTH + 10 : 1000 - 20]
    assert len(np.unique(panel.reshape(-1, 3), axis=0)) > 20, "text and widgets"


class CountedField(np.ndarray):
    """A field that counts the operations reading it whole (ufuncs and their reductions: min, max, sum,
    mean; NumPy functions; copies); views of a few cells are not counted."""

    whole = 0  # the field's cell count
    reads = 0

    @classmethod
    def _note(cls, values) -> None:
        if any(isinstance(v, CountedField) and v.size >= cls.whole for v in values):
            cls.reads += 1

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        self._note(inputs)
        plain = [v.view(np.ndarray) if isinstance(v, CountedField) else v for v in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(v.view(np.ndarray) if isinstance(v, CountedField) else v for v in kwargs["out"])
        return getattr(ufunc, method)(*plain, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        self._note(args)
        return super().__array_function__(func, types, args, kwargs)

    def copy(self, *args, **kwargs):
        self._note((self,))
        return self.view(np.ndarray).copy(*args, **kwargs)


def panel_frames(scene, frames: int, each=lambda: None) -> None:
    """``frames`` ImGui frames of the panel, every section open, for a controller of ``scene`` (no view)."""
    from viewer.gpu.egl import standalone_context
    from viewer.panel.gui import Gui
    from viewer.panel.panel import Panel

    ctx = standalone_context()
    gui = Gui(ctx)
    try:
        panel, ctl = Panel(), Controller(scene)
        for _ in range(frames):
            each()
            gui.new_frame((900, 3000), (900, 3000), 1 / 60)  # tall: every section is laid out in sight
            panel.draw(ctl)
            gui.end_frame()
    finally:
        gui.release()
        ctx.release()


@needs_egl
def test_an_open_panel_reads_a_changing_field_whole_only_for_its_throttled_summary(monkeypatch):
    """Heat on the CPU, its field changing every frame: with every section open, the panel reads the whole
    field only for the temperature summary (three reductions), once in SUMMARY_ASKS frames (the time rules
    off here), and 10x the cells make no more reads."""
    from sim.heat import stats
    from viewer.panel import style

    monkeypatch.setattr(style, "layout", {})
    style.open_sections(style.SECTIONS)
    monkeypatch.setattr(stats, "SUMMARY_SECONDS", 0.0)
    monkeypatch.setattr(stats, "SUMMARY_SHARE", float("inf"))
    frames, reads = 40, {}
    for n in (250_000, 2_500_000):
        scene = create_scene("heat", preset="seed", n=n)
        scene.cpu.field = scene.cpu.field.view(CountedField)
        CountedField.whole, CountedField.reads = scene.n, 0
        panel_frames(scene, frames, each=scene.readout.changed)  # the field changes every frame, as when running
        reads[n] = CountedField.reads
        assert scene.stats()["temperature"].startswith("min "), "the summary was taken"
    summaries = 1 + (frames - 1) // stats.SUMMARY_ASKS
    assert reads[250_000] == reads[2_500_000] == 3 * summaries, reads


@needs_egl
@pytest.mark.parametrize("name", list(SCENES))
def test_every_section_opens_for_every_scene(name, monkeypatch):
    """With every section open, each scene's panel lays out frame after frame, its counters as the spec says."""
    from viewer.panel import style

    monkeypatch.setattr(style, "layout", {})
    style.open_sections(style.SECTIONS)
    spec = SCENES[name]
    preset = spec.preset(spec.default_preset)
    scene = spec.create(n=min(preset.count, 2000)) if preset.count else spec.create()
    panel_frames(scene, 3, each=scene.advance_frame)
    assert {t for t, is_open in style.layout.items() if is_open} <= set(style.SECTIONS)
    assert style.layout["Counters"] and style.layout["Speed of light"]


def test_the_panel_lays_out_one_section_per_title_in_the_style_order():
    """Every section speaks the one protocol, takes its title from style.SECTIONS and starts folded as FOLDED says;
    the panel draws them in SECTIONS' order and refuses a list that is not SECTIONS."""
    from viewer.panel import style
    from viewer.panel.panel import Panel, in_panel_order
    from viewer.panel.section import PanelContext

    sections = Panel().sections
    assert tuple(s.title for s in sections) == style.SECTIONS
    assert {s.title for s in sections if s.folded} == set(style.FOLDED)
    ctx = PanelContext(Controller(create_scene("balls", preset="block", n=200, seed=3)))
    shown = {s.title for s in sections if s.shows(ctx)}  # no window: its sections are left out
    assert "Record" not in shown and "Display" not in shown and {"Scene", "Run", "Counters"} <= shown
    assert all(callable(s.draw) and callable(s.draw_folded) for s in sections)
    with pytest.raises(ValueError, match="not style.SECTIONS"):
        in_panel_order(sections[1:])
    with pytest.raises(ValueError, match="not style.SECTIONS"):
        in_panel_order([*sections, sections[0]])
