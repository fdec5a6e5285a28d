"""One shape for every scene: a step is the spec's unit everywhere. For every registered scene (CPU, a
small count) a headless run (``progress.run_steps``), the window's scripted run (``FrameLoop`` stepping
through the controller, without a window) and a benchmark (``bench.run``) reach the same step count
and the same state (what every colour mode of its view shows, bit for bit)."""

import numpy as np
import pytest

from sim.cmdline import bench, progress
from sim.contract import FieldView, PointsView
from sim.registry import SCENES, create_scene
from viewer.window.controller import Controller
from viewer.window.loop import FrameLoop

SPECS = list(SCENES.values())
SMALL = 300
STEPS = 13  # not a whole number of frames for any scene


def new_scene(spec):
    preset = spec.start_preset
    return spec.create(preset=preset, n=SMALL if spec.preset(preset).count is not None else None)


def shown(scene) -> list[np.ndarray]:
    """Everything the scene's view shows in each colour mode, as arrays."""
    arrays = []
    for mode in scene.color_modes:
        view = scene.view(mode)
        if isinstance(view, PointsView):
            arrays += [np.asarray(a) for a in view.host()]
        elif isinstance(view, FieldView):
            arrays.append(np.asarray(view.host()))
        else:
            arrays += [np.asarray(s.y, float) for plot in view.plots for s in plot.series]
    return arrays


def assert_same_state(a, b) -> None:
    assert a.steps == b.steps
    first, second = shown(a), shown(b)
    assert len(first) == len(second)
    for x, y in zip(first, second, strict=True):
        np.testing.assert_array_equal(x, y)


class Window:
    """What the window's frame loop touches of the window's actions in a scripted run."""

    def __init__(self, scene):
        self.controller = Controller(scene)
        self.open = True

    def quit(self) -> None:
        self.open = False


def scripted_run(scene, steps: int) -> int:
    """``view <scene> --steps N``: the window's frames until its scripted run quits; returns the frames."""
    window = Window(scene)
    loop = FrameLoop(None, window.controller, actions=window, settings=None)
    loop.script(steps, None)
    frames = 0
    while window.open and frames < 100_000:
        loop.advance(render_ms=0.0)
        loop.after_draw((1, 1))
        frames += 1
    assert loop.exit_status == 0 and not window.controller.step_failed, window.controller.message
    return frames


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_headless_window_and_bench_reach_the_same_state(spec):
    headless = new_scene(spec)
    timing = progress.run_steps(headless, STEPS)
    assert timing.steps == headless.steps == STEPS
    window = new_scene(spec)
    scripted_run(window, STEPS)
    assert_same_state(headless, window)
    benched = new_scene(spec)
    record = bench.run(benched, STEPS, warmup=2, progress=lambda done, total: None, budget_s=0.0)  # no more frames
    frame = spec.steps_per_frame
    assert record["steps"] == -(-STEPS // frame) * frame and benched.steps == 2 + record["steps"]
    again = new_scene(spec)
    for name, on in spec.bench_toggles:
        again.controls.set_toggle(name, on)
    progress.run_steps(again, benched.steps)
    assert_same_state(again, benched)


def test_a_durbin_step_is_one_recursion_step_headless_and_in_the_window(capsys):
    import main

    assert main.main(["run", "durbin", "--preset", "large", "-n", "5000", "--steps", "3", "--headless"]) in (0, None)
    out = capsys.readouterr().out
    assert "3 steps" in out and "k (entries done) 4 of 5,000" in out
    scene = create_scene("durbin", preset="large", n=5000)  # 400 steps a displayed frame
    assert scripted_run(scene, 3) == 1 and scene.solver.k == 4 and scene.steps == 3


def test_a_fraction_of_a_step_a_frame_is_carried_and_the_scripted_run_counts_steps():
    scene = create_scene("durbin")  # ar: 0.25 steps a frame
    assert scripted_run(scene, 3) == 12 and scene.solver.k == 4 and scene.steps == 3


def test_every_run_stops_where_the_recursion_ends():
    headless = create_scene("durbin", preset="ar", n=10)
    timing = progress.run_steps(headless, 50)
    assert timing.steps == headless.steps == 9 and headless.solver.k == 10 and headless.at_end
    window = create_scene("durbin", preset="ar", n=10)
    window.controls.set_param("speed", 4.0)
    assert scripted_run(window, 50) == 3  # 4 + 4 + 1 steps: the third frame did fewer than asked
    assert_same_state(headless, window)
    benched = create_scene("durbin", preset="ar", n=10)
    assert bench.run(benched, 50, warmup=0, progress=lambda done, total: None, budget_s=1e9)["steps"] == 9
    assert_same_state(headless, benched)


def test_run_help_says_what_a_step_is(capsys):
    import main

    with pytest.raises(SystemExit) as exit_:
        main.main(["run", "durbin", "--help"])
    assert exit_.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "steps, each a recursion step k -> k + 1 (lpc: the selected frame one on)" in help_text


def test_each_scene_s_presets_live_in_its_folder_and_are_packaged():
    import pathlib
    import tomllib

    import assets

    root = pathlib.Path(__file__).resolve().parent.parent
    patterns = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["sim"]
    owners = {name for name in SCENES if (root / "sim" / name / "presets.toml").is_file()}
    assert owners == {"balls", "durbin", "heat", "particles", "sdh"} and not (root / "assets" / "presets").exists()
    for name in owners:
        assert assets._presets_file(name) == root / "sim" / name / "presets.toml"
        assert list(assets.presets(name)) == [p.name for p in SCENES[name].presets]
        assert any(pathlib.PurePath(f"{name}/presets.toml").match(p) for p in patterns), "not in the wheel"


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_what_the_viewer_reads_comes_from_objects_the_scene_holds(spec):
    from sim.contract import load
    from sim.framework.checks import Checks, Inspector
    from sim.framework.scales import ColorScales

    held = ("items", "readout", "stats")
    mixed = [c.__name__ for c in load(spec.scene).__mro__ if c.__module__.rsplit(".", 1)[-1] in held]
    assert mixed == [], "a scene holds its inspector and readout, it does not inherit them"
    scene = new_scene(spec)
    assert isinstance(scene.inspector, Inspector) and scene.inspector.scene is scene
    assert isinstance(scene.color_scales, ColorScales) and ColorScales not in type(scene).__mro__
    assert isinstance(scene.checks, Checks) and Checks not in type(scene).__mro__
    scene.checks.on = True
    assert scene.checks.on and scene.checks.marked(scene.n) is None
    scene.color_scales.set("some mode", (1, 2))
    assert scene.color_scales.ranges["some mode"] == (1.0, 2.0) == scene.color_scales.ranges["some mode"]
    assert scene.inspector.item_of_key(scene.inspector.item_key(0)) == 0


def test_durbin_s_plots_and_statistics_are_its_readout_s():
    scene = create_scene("durbin")
    scene.run_frame(1)
    assert scene.view("plain") is scene.readout.view("plain") and scene.stats() == scene.readout.stats()
    assert scene.stats()["k"] == "2 of 64" and scene.stats()["steps"] == 1


def test_heat_s_statistics_are_its_readout_s():
    scene = create_scene("heat", n=300)
    scene.advance_frame()
    scene.run_frame(1)
    stats = scene.stats()
    assert stats == scene.readout.stats() and stats["steps"] == scene.frame_steps + 1
    assert stats["cell_updates"] > 0 and stats["temperature"].startswith("min ")
