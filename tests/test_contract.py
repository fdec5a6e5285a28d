"""Every registered scene keeps the scene contract: presets load and step on the CPU (and, marked
``gpu``, on the GPU), views and statistics are complete, declared capabilities are implemented,
and ``run --headless`` works for it with no other flag. A new scene that forgets a piece fails here.
"""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from sim.contract import Bench, FieldView, GateRun, NcuCase, PlotsView, PointsView, SceneSpec, load
from sim.framework.scene import Scene
from sim.registry import SCENES

ROOT = pathlib.Path(__file__).resolve().parent.parent
SPECS = list(SCENES.values())
SMALL = 300  # items for presets that take a count: quick on the CPU


def small_scene(spec: SceneSpec, preset: str, backend: str = "cpu"):
    n = SMALL if spec.preset(preset).count is not None else None
    return spec.create(preset=preset, backend=backend, n=n)


def check_view(scene, mode: str) -> None:
    view = scene.view(mode)
    if isinstance(view, PointsView):
        pos, quantity = view.host()
        assert pos.shape == (scene.n, 4) and quantity.shape == (scene.n,) and view.count == scene.n
        assert np.isfinite(pos).all() and view.dims in (2, 3) and view.spacing > 0
        if view.categorical:
            assert quantity.dtype == np.int32 and (quantity >= 0).all()
            assert view.palette.shape[1] == 3 and ((view.palette >= 0) & (view.palette <= 1)).all()
        else:
            assert quantity.dtype == np.float32 and np.isfinite(quantity).all() and view.legend.unit
    elif isinstance(view, FieldView):
        values = view.host()
        assert values.shape == view.shape and values.dtype == np.float32
        assert view.value_range is None or view.value_range[0] < view.value_range[1]
        assert view.legend.label
    else:
        assert isinstance(view, PlotsView) and view.plots
        for plot in view.plots:
            for series in plot.series:
                assert len(series.x) == len(series.y) and np.isfinite(np.asarray(series.y, float)).all()


def test_the_scene_base_is_narrow():
    """What the user sets and asks is in the parts the scene composes (knobs, controls, checks, inspector),
    not flattened back onto the scene: the base's own names stay few."""
    public = [name for name in dir(Scene) if not name.startswith("_")]
    assert len(public) <= 35, f"{len(public)} public names on Scene: {public}"
    assert not hasattr(Scene, "set_verify") and not hasattr(Scene, "variant") and not hasattr(Scene, "describe")
    assert Scene.__abstractmethods__ == {"load_state", "advance", "move_state", "n", "stats", "view"}
    with pytest.raises(TypeError, match="abstract"):
        Scene()


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_a_scene_overrides_no_private_name_of_the_base(spec):
    """A scene writes the base's declared hooks (public), never its private mechanisms."""
    cls = load(spec.scene)
    private = {
        name
        for name, value in vars(Scene).items()  # its methods and properties (not ABC's bookkeeping)
        if name.startswith("_") and not name.endswith("__") and (callable(value) or isinstance(value, property))
    }
    overridden = {name for klass in cls.__mro__[: cls.__mro__.index(Scene)] for name in vars(klass) if name in private}
    assert not overridden, f"{cls.__name__} overrides the base's private {sorted(overridden)}"


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_spec_is_complete(spec):
    assert spec.name in SCENES and spec.words.unit and spec.title and spec.stages and spec.stats
    spec.preset(spec.default_preset)
    spec.preset(spec.start_preset)
    cls = load(spec.scene)
    assert issubclass(cls, Scene) and cls.spec is spec
    for hook in ("load_state", "advance", "move_state", "stats", "view", "n"):
        assert getattr(cls, hook) is not getattr(Scene, hook), f"{spec.name} must implement {hook}"
    if spec.gpu:
        assert spec.kernels, "a scene with GPU knobs lists its CUDA builds"
        assert spec.gpu.default_variant in spec.gpu.variants and spec.gpu.default_block in spec.gpu.blocks
    if spec.tool:
        assert cls.pointer is not Scene.pointer
    if spec.histogram:
        assert cls.histogram_points is not Scene.histogram_points
        assert cls.histogram_widths is not Scene.histogram_widths
    if spec.user_stages:  # a user's kernel: the scene hands out the inputs and takes the outputs back
        assert cls.user_stage_inputs is not Scene.user_stage_inputs
        assert cls.apply_user_stage is not Scene.apply_user_stage
    for command in load(spec.commands) if spec.commands else ():
        assert command.name and callable(command.run) and callable(command.add_arguments)
    benchmark = spec.benchmark()  # the timed frames unless the scene declares its own
    assert isinstance(benchmark, Bench) and callable(benchmark.run) and callable(benchmark.add_arguments)
    assert benchmark.over_ranks is None or callable(benchmark.over_ranks)
    options = {o.name for o in spec.options}
    for run in load(spec.gate) if spec.gate else ():  # the regression gate's runs (bench/regress.py)
        assert isinstance(run, GateRun) and run.label and run.figures and "--json" not in run.args
        assert run.report or not run.frame, "a frame run names its report (several scenes' frames share the bench)"
        for figure in run.figures:
            assert figure.name and figure.value and figure.record and {n for n, _ in figure.options} <= options
            assert bool(figure.peer) == bool(figure.peer_value) and (run.peer is not None or not figure.peer)
    for case in load(spec.ncu) if spec.ncu else ():  # Nsight Compute's cases (bench/ncu_models.py)
        assert isinstance(case, NcuCase) and case.stage in spec.stages
        assert case.profile or spec.preset(case.preset) and case.count and case.variant in spec.gpu.variants


@pytest.mark.parametrize(
    "spec, preset",
    [(s, p.name) for s in SPECS for p in s.presets],
    ids=[f"{s.name}-{p.name}" for s in SPECS for p in s.presets],
)
def test_every_preset_loads_steps_and_draws_on_the_cpu(spec, preset):
    scene = small_scene(spec, preset)
    assert scene.backend == "cpu" and scene.preset == preset
    steps = scene.advance_frame()
    assert scene.steps == steps and (steps == int(scene.frame_steps) or scene.at_end)  # durbin: 0.25 a frame
    assert set(scene.timer.names) >= set(spec.stages)
    stats = scene.stats()
    for stat in spec.stats:
        assert stat.key in stats, f"{spec.name} stats lack {stat.key}"
        assert stat.text(stats).startswith(stat.label)
    for mode in scene.color_modes:
        check_view(scene, mode)
    if spec.histogram:
        points, dims = scene.histogram_points()
        assert points.shape == (scene.n, 3) and dims == spec.histogram.dims
        lo, hi, default = scene.histogram_widths()
        assert 0 < lo <= default <= hi
    scene.reset()
    assert scene.steps == 0


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_run_headless_works_with_no_other_flag(spec):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    out = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "run", spec.name, "--headless", "--steps", str(spec.steps_per_frame)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    for stat in spec.stats:
        assert stat.label in out.stdout


@pytest.mark.gpu
@pytest.mark.parametrize("spec", [s for s in SPECS if s.gpu], ids=[s.name for s in SPECS if s.gpu])
def test_every_scene_runs_verifies_and_colours_by_block_on_the_gpu(spec):
    scene = small_scene(spec, spec.start_preset, backend="gpu")
    assert scene.backend == "gpu" and scene.gpu_kernels_run()
    for variant in spec.gpu.variants:
        scene.knobs.set_variant(variant)
        scene.advance_frame()
    if spec.verifier:
        scene.checks.set_on(True)
        scene.advance_frame()
        assert scene.checks.verification is not None and scene.checks.verification.differing == 0
    if spec.block_colors:
        assert "block" in scene.color_modes
    for mode in scene.color_modes:
        check_view(scene, mode)
    scene.set_backend("cpu")
    scene.advance_frame()
    scene.set_backend("gpu")
    scene.advance_frame()
