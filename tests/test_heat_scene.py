"""The heat viewer scene on the CPU: presets and grids, frames equal to the twin's steps, sliders and options,
the planted test fault compiling, and the paint tool (where painted and nowhere else, no gaps in a fast
stroke). What the viewer reads of the scene, its headless pictures and the scene in a window are in
test_heat_scene_view.py."""

import numpy as np
import pytest

from sim.contract import PointerEvent
from sim.gpu.backend import BackendUnavailable
from sim.heat import SPEC, course, kernels
from sim.heat.presets import grid_shape, initial_field, preset_table, rand_field
from sim.heat.scene import HeatScene
from sim.heat.stencil_cpu import HeatCpu
from sim.registry import SCENES, all_builds, course_commands, create_scene

SMALL = 3600  # cells for presets that take a count (60 x 60)


def scene(preset="seed", n=SMALL, **kwargs) -> HeatScene:
    return create_scene("heat", preset=preset, n=n if SPEC.preset(preset).count else None, **kwargs)


def event(kind, x, y, button="left"):
    """A pointer event at the centre of cell (x, y) (fractions allowed)."""
    return PointerEvent(kind, x + 0.5, y + 0.5, button=button)


def segment_distance(ni, nj, start, end):
    """(nj, ni): each cell's distance to the segment start -> end (cell indices)."""
    j, i = np.mgrid[0:nj, 0:ni].astype(np.float64)
    (x0, y0), (x1, y1) = start, end
    length2 = (x1 - x0) ** 2 + (y1 - y0) ** 2
    t = np.clip(((i - x0) * (x1 - x0) + (j - y0) * (y1 - y0)) / length2, 0, 1) if length2 else np.zeros_like(i)
    return np.hypot(i - (x0 + t * (x1 - x0)), j - (y0 + t * (y1 - y0)))


# --- the spec and the registry -------------------------------------------------------------------


def test_heat_is_a_registered_scene_with_its_command_builds_and_bench():
    assert SCENES["heat"] is SPEC and SPEC.view == "field" and SPEC.words.unit == "cells"
    assert [p.name for p in SPEC.presets] == ["dli", "seed", "large", "plate"]
    assert "heat" in {c.name for c in course_commands()}
    assert set(kernels.builds()) <= set(all_builds())
    assert SPEC.bench == "sim.heat.bench:BENCH" and SPEC.gpu.variants == kernels.KERNELS
    assert SPEC.gpu.default_variant == "temporal" and SPEC.gpu.default_block == (32, 4)
    assert all(len(b) == 2 for b in SPEC.gpu.blocks)
    k = next(o for o in SPEC.options if o.name == "k")
    assert k.choices == tuple(str(v) for v in range(1, kernels.K_MAX + 1)) and k.gpu_only
    assert SPEC.tool.name == "paint" and not SPEC.tool.default_on, "a click pins until the tool is chosen"


def test_preset_grids_and_counts():
    assert grid_shape(preset_table("dli"), None) == (course.NI, course.NJ)
    assert SPEC.preset("dli").count is None, "the DLI's grid is fixed"
    assert grid_shape(preset_table("seed"), None) == (1000, 1000)
    assert grid_shape(preset_table("large"), None) == (10000, 10000)
    assert grid_shape(preset_table("seed"), 4_000_000) == (2000, 2000)
    assert grid_shape(preset_table("seed"), 1) == (3, 3)
    assert preset_table("dli")["factor"] == preset_table("seed")["factor"] == course.TFAC


def test_the_dli_preset_is_the_course_field_and_factor():
    s = scene("dli")
    assert (s.ni, s.nj) == (200, 100)
    np.testing.assert_array_equal(s.cpu.field, course.initial_field(200, 100))
    assert s.cpu.tfac == np.float32(course.TFAC)
    assert "barely moves" in s.stats()["pace"]
    assert "barely moves" not in scene("plate").stats()["pace"]


def test_the_seed_draws_another_random_field():
    np.testing.assert_array_equal(rand_field(37, 19, 1), course.initial_field(37, 19))
    assert not np.array_equal(rand_field(37, 19, 2), rand_field(37, 19, 1))
    assert not np.array_equal(scene("seed", seed=5).cpu.field, scene("seed").cpu.field)
    with pytest.raises(ValueError, match="draws nothing at random"):
        create_scene("heat", preset="plate", seed=5)


def test_the_plate_is_cold_with_hot_discs_and_held_edges():
    field = initial_field(preset_table("plate"), 512, 512, 1)
    ring = np.concatenate([field[0], field[-1], field[:, 0], field[:, -1]])
    assert np.all(ring == 0)
    assert set(np.unique(field)) == {0.0, 70.0, 100.0}
    assert 0.02 < np.mean(field > 0) < 0.2


@pytest.mark.parametrize("preset", [p.name for p in SPEC.presets])
def test_every_preset_loads_and_steps_on_the_cpu(preset):
    s = scene(preset)
    first = s.cpu.field.copy()
    s.advance_frame()
    assert s.steps == SPEC.steps_per_frame
    twin = HeatCpu(first, s.cpu.tfac)
    twin.advance(SPEC.steps_per_frame)
    np.testing.assert_array_equal(s.cpu.field, twin.field)


def test_the_large_preset_is_for_the_gpu():
    with pytest.raises(ValueError, match="more than the CPU backend takes"):
        create_scene("heat", preset="large")
    s = scene("seed")
    with pytest.raises(ValueError, match="more than the CPU backend takes"):
        s.load_preset("large")
    assert (s.preset, s.n) == ("seed", SMALL)


@pytest.mark.parametrize("gpu", ["", "no NVIDIA GPU driver on this machine (libcuda.so.1 not found)"])
def test_the_large_preset_on_the_cpu_advises_the_gpu_only_where_there_is_one(monkeypatch, gpu):
    from sim.cmdline.cli import Refused
    from sim.heat.scene import HeatScene

    monkeypatch.setattr(HeatScene, "gpu_reason", property(lambda self: gpu))
    s = scene("seed")
    with pytest.raises(Refused) as refused:
        s.load_preset("large")
    message = str(refused.value)
    assert message.startswith(
        "preset large: 10,000 x 10,000 = 100,000,000 cells is more than the CPU backend takes (25,000,000); use "
    )
    assert ("GPU" in message.split(";")[1]) == (gpu == ""), message
    assert (s.preset, s.n) == ("seed", SMALL)


def test_the_viewer_refuses_the_large_preset_on_the_cpu_on_its_message_line_without_a_traceback(capsys):
    from viewer.window.controller import Controller

    ctl = Controller(scene("seed"))
    ctl.load_preset("large")
    assert ctl.message.startswith("preset large failed: preset large: 10,000 x 10,000 = 100,000,000 cells")
    assert (ctl.scene.preset, ctl.scene.n) == ("seed", SMALL)
    assert capsys.readouterr().err == ""


def test_a_frame_is_the_slider_s_steps_and_a_single_step_is_one():
    s = scene("seed")
    s.controls.set_param("factor", 0.2)
    s.controls.set_param("steps_per_frame", 7.4)
    start = s.cpu.field.copy()
    s.advance_frame()
    s.run_frame(1)
    assert s.steps == 8 and s.stats()["steps_per_frame"] == 7
    twin = HeatCpu(start, 0.2)
    twin.advance(8)
    np.testing.assert_array_equal(s.cpu.field, twin.field)
    assert s.readout.cell_update_rate() > 0


def test_the_cell_update_rate_is_of_the_timer_s_frames_and_a_reload_starts_it_afresh():
    s = scene("seed")
    s.controls.set_param("steps_per_frame", 5)
    s.advance_frame()
    s.run_frame(1)
    assert s.timer.steps_history().tolist() == [5, 1], "the timer keeps each frame's steps beside its times"
    times = s.timer.history("step")
    want = SMALL * float(np.median([5 / times[0], 1 / times[1]])) * 1e3 / 1e9
    assert s.readout.cell_update_rate() == pytest.approx(want)
    s.reset()  # a new timer: no rate until a frame of it is timed
    assert s.timer.steps_history().size == 0 and s.readout.cell_update_rate() is None
    s.run_frame(3)
    assert s.timer.steps_history().tolist() == [3] and s.readout.cell_update_rate() > 0


def test_another_preset_brings_its_sliders_and_a_reset_keeps_them():
    s = scene("seed")
    s.controls.set_param("factor", 0.1)
    s.controls.set_param("steps_per_frame", 3)
    s.reset()
    assert s.controls.param_value("factor") == pytest.approx(0.1) and s.frame_steps == 3
    s.load_preset("plate", 900)
    assert s.controls.param_value("factor") == pytest.approx(0.2) and s.frame_steps == SPEC.steps_per_frame
    assert s.cpu.tfac == np.float32(0.2)
    s.controls.set_param("factor", 1.0)  # clamped below the stability limit
    assert s.controls.param_value("factor") < 0.25 and s.cpu.tfac < 0.25


def test_gpu_requests_without_a_gpu_say_why():
    s = scene("seed")
    if not s.gpu_reason:
        pytest.skip("this machine has a GPU")
    with pytest.raises(BackendUnavailable):
        s.set_backend("gpu")
    with pytest.raises(ValueError, match="GPU"):
        s.checks.set_on(True)
    assert "block" not in s.color_modes and s.backend == "cpu"


def test_k_applies_to_the_temporal_kernel_only():
    with pytest.raises(ValueError, match="temporal"):
        create_scene("heat", preset="seed", n=SMALL, variant="global", k="3")
    with pytest.raises(ValueError, match="unknown k"):
        create_scene("heat", preset="seed", n=SMALL, k="9")
    assert create_scene("heat", preset="seed", n=SMALL, k="3").k == 3


def test_the_planted_factor_compiles_for_every_heat_build():
    pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")
    from test_cuda_sources import compile_cubin

    from sim.gpu import cuda

    with cuda.planted("sim/heat/stencil.cu", "-DPLANT_FACTOR=1.001f"):
        for build in (kernels.simple(), kernels.temporal(256)):
            options = build.all_options()
            assert "-DPLANT_FACTOR=1.001f" in options
            assert compile_cubin(cuda.source_text(build.source), build.source, options)[:4] == b"\x7fELF"
    assert not any("PLANT" in o for b in kernels.builds() for o in b.all_options()), "never in a product build"


# --- the paint tool ------------------------------------------------------------------------------


@pytest.mark.parametrize("button, value", [("left", 100.0), ("right", 0.0)])
def test_painting_changes_the_field_where_painted_and_nowhere_else(button, value):
    s = scene("seed", n=200 * 150)
    before = s.cpu.field.copy()
    assert not np.any((before == 0) | (before == 100)), "the random field holds neither painted value"
    s.controls.set_tool_value("radius", 6.0)
    start, end = (30.0, 40.0), (150.0, 100.0)
    s.pointer(event("press", *start, button))
    s.pointer(event("drag", *end, button))  # one fast drag event across 134 cells
    s.pointer(event("release", *end, button))
    after = s.cpu.field.copy()
    distance = segment_distance(s.ni, s.nj, start, end)
    inside, outside = distance <= 0.96 * 6.0, distance > 6.0
    assert np.all(after[inside] == value), "no gaps along the stroke"
    np.testing.assert_array_equal(after[outside], before[outside])
    changed = after != before
    assert changed[inside].all() and not changed[outside].any()
    s.advance_frame()  # both buffers were painted: the next steps start from the painted field
    twin = HeatCpu(after, s.cpu.tfac)
    twin.advance(SPEC.steps_per_frame)
    np.testing.assert_array_equal(s.cpu.field, twin.field)


def test_a_press_paints_one_disc_of_the_tool_s_temperature_and_the_middle_button_nothing():
    s = scene("seed", n=100 * 100)
    s.controls.set_tool_value("radius", 3.0)
    s.controls.set_tool_value("temperature", 55.0)
    before = s.cpu.field.copy()
    s.pointer(event("press", 50.2, 60.7))
    disc = segment_distance(s.ni, s.nj, (50.2, 60.7), (50.2, 60.7)) <= 3.0
    assert np.all(s.cpu.field[disc] == 55.0) and np.array_equal(s.cpu.field[~disc], before[~disc])
    painted = s.cpu.field.copy()
    s.pointer(event("press", 20, 20, "middle"))
    s.pointer(event("drag", 30, 20, "middle"))
    np.testing.assert_array_equal(s.cpu.field, painted)
    s.pointer(event("drag", 80, 80))  # a drag without its press (the press went elsewhere): one disc
    assert s.cpu.field[80, 80] == 55.0 and s.cpu.field[70, 70] == painted[70, 70]


def test_the_smallest_brush_paints_the_cell_under_the_pointer():
    s = scene("seed", n=50 * 50)
    s.controls.set_tool_value("radius", 0.0)  # clamped to the smallest brush
    for x, y in ((10.01, 10.01), (20.99, 30.5), (40.5, 40.99)):
        s.pointer(PointerEvent("press", x, y))
        assert s.cpu.field[int(y), int(x)] == 100.0
