"""The durbin viewer scene on the CPU: registered with its commands, builds and bench; presets, steps at any
speed, what the plots show against the solver's own values (large systems decimated, the AR process and its
spectrum), dragged reflection coefficients and the AR order slider, the LPC mode's plots and controls, reset,
and the LPC plots taking a learner's garbage coefficients. Its checks: tests/test_durbin_scene_checks.py."""

import numpy as np
import pytest

from sim.contract import PointerEvent, Series
from sim.durbin import SPEC, durbin_cpu, inputs, lpc, plots
from sim.durbin.scene import DurbinScene
from sim.registry import SCENES, create_scene


def series(view, plot_title: str, label: str) -> Series:
    plot = next(p for p in view.plots if p.title.startswith(plot_title))
    return next(s for s in plot.series if s.label.startswith(label))


def run_to(scene, k: int) -> None:
    while scene.solver.k < k:
        scene.run_frame(1)


def test_registered_with_its_commands_builds_and_bench():
    assert SCENES["durbin"] is SPEC and SPEC.view == "plots"
    assert {p.name for p in SPEC.presets} == {"ar", "polybench", "large", "lpc"}
    assert SPEC.gpu.variants[0] == SPEC.gpu.default_variant == "persistent"
    from sim.registry import all_builds, course_commands

    assert {"durbin", "lpc"} <= {c.name for c in course_commands()}
    assert any(b.source == "sim/durbin/durbin.cu" for b in all_builds())
    assert not any("PLANT" in o for b in all_builds() for o in b.options), "no planted fault in a product build"


@pytest.mark.parametrize("preset, n", [("ar", None), ("ar", 5), ("polybench", 300), ("large", 3000), ("lpc", None)])
def test_every_preset_loads_steps_and_draws(preset, n):
    scene = create_scene("durbin", preset=preset, n=n)
    scene.controls.set_param("speed", 50.0) if scene.lpc is None else None
    for _ in range(3):
        scene.advance_frame()
    steps = min(150, scene.r.size - 1) if scene.lpc is None else int(3 * scene.settings.play)  # a step: k -> k + 1
    assert scene.steps == steps and set(scene.timer.names) >= {"recursion", "read back", "plots"}
    view = scene.view("plain")
    assert view.plots and all(np.isfinite(np.asarray(s.y, float)).all() for p in view.plots for s in p.series)
    stats = scene.stats()
    assert all(stat.key in stats for stat in SPEC.stats)
    if scene.lpc is None:
        assert scene.solver.k == min(1 + 150, scene.r.size) and stats["k"].startswith(f"{scene.solver.k:,} of")
        assert stats["steps_per_s"] > 0 and stats["us_per_step"] > 0
    else:
        assert stats["frames"] == scene.lpc.frames and stats["batch_ms"] > 0


def test_speed_below_one_steps_every_few_frames_and_s_steps_once():
    scene = create_scene("durbin")  # ar: 0.25 steps per frame
    assert scene.settings.speed == 0.25 and scene.solver.k == 1
    for _ in range(8):
        scene.advance_frame()
    assert scene.solver.k == 3
    scene.run_frame(1)
    assert scene.solver.k == 4


def test_the_plots_show_the_solvers_values():
    scene = create_scene("durbin", preset="polybench", n=300)
    run_to(scene, 200)
    solver = scene.solver
    view = scene.view("plain")
    y = series(view, "y:", "y (k = 200)")
    np.testing.assert_array_equal(y.y, solver.y[y.items])
    np.testing.assert_array_equal(y.items, np.arange(200))
    alphas = series(view, "alpha", "alpha")
    np.testing.assert_array_equal(alphas.y, solver.alphas[:200])
    assert alphas.style == "bars" and view.plots[1].y_limits is None  # |alpha| > 1: no fixed limits
    betas = series(view, "beta", "|beta| (red: beta < 0")
    np.testing.assert_array_equal(betas.y, np.abs(solver.betas[betas.items]))
    assert betas.y[0] == 1.0 and view.plots[2].y_log
    negative = series(view, "beta", "beta < 0")
    np.testing.assert_array_equal(negative.items, np.flatnonzero(solver.betas[:200] < 0))
    r = series(view, "r:", "r")
    np.testing.assert_array_equal(r.y, inputs.polybench(300, "4"))


def test_large_systems_are_decimated_keeping_their_extremes():
    scene = create_scene("durbin", preset="large", n=50_000)
    scene.controls.set_param("speed", 10_000.0)
    scene.advance_frame()
    view = scene.view("plain")
    y = series(view, "y:", "y (k = 10,001)")
    assert len(y.x) <= plots.POINTS and np.all(np.diff(y.items) >= 0)
    k = scene.solver.k
    assert y.y.max() == scene.solver.y[:k].max() and y.y.min() == scene.solver.y[:k].min()
    np.testing.assert_array_equal(y.y, scene.solver.y[y.items])


def test_decimation_keeps_a_spike():
    values = np.sin(np.arange(100_000) / 900.0)
    values[31_337] = 7.0
    index = plots.decimate(values, 1000)
    assert index.size <= 1000 and 31_337 in index and np.all(np.diff(index) >= 0)
    np.testing.assert_array_equal(plots.decimate(values[:500], 1000), np.arange(500))


def test_the_recursion_returns_the_kappas_and_the_spectrum_of_the_ar_process():
    scene = create_scene("durbin")
    run_to(scene, 64)
    kappas = scene.kappas
    np.testing.assert_allclose(scene.solver.alphas[: kappas.size], kappas, atol=1e-12)
    assert np.abs(scene.solver.y[kappas.size :]).max() < 1e-12
    np.testing.assert_allclose(scene.solver.y[: kappas.size], plots.step_up(kappas), atol=1e-12)
    spectrum = series(scene.view("plain"), "spectrum", "beta / |A")
    true = plots.ar_spectrum(plots.step_up(kappas), plots.prediction_errors(kappas)[-1])[1]
    np.testing.assert_allclose(spectrum.y, true, rtol=1e-9)
    assert spectrum.y.mean() == pytest.approx(1.0, rel=0.02), "the normalised spectrum's mean is r_0 = 1"
    periodogram = series(scene.view("plain"), "spectrum", "periodogram")
    ratio = np.median(periodogram.y / np.interp(periodogram.x, spectrum.x, spectrum.y))
    assert 0.7 < ratio < 1.3, "the realisation's periodogram follows the model"


def test_the_ar_process_stays_on_the_spectrum_plot_and_says_when_the_model_reaches_its_order():
    scene = create_scene("durbin", preset="ar")
    order = scene.kappas.size
    labels = []
    for k in (order - 1, order, order + 3):
        run_to(scene, k)
        reference = series(scene.view("plain"), "spectrum", f"AR({order}) process")
        labels.append(reference.label)
        true = plots.ar_spectrum(plots.step_up(scene.kappas), plots.prediction_errors(scene.kappas)[-1])[1]
        np.testing.assert_allclose(reference.y, true, rtol=1e-12)
    assert labels[0] == f"AR({order}) process: the true model, order {order}"
    assert labels[1] == labels[2] == f"AR({order}) process: order {order} reached, the model from y lies on it"


def test_dragging_a_kappa_changes_the_spectrum_and_replays_to_the_same_k():
    scene = create_scene("durbin")
    run_to(scene, 10)
    view = scene.view("plain")
    points = view.plots[1].drag_points
    assert [p.id for p in points] == [f"kappa{i}" for i in range(4)] and points[2].y == pytest.approx(-0.18)
    spectrum, noise = series(view, "spectrum", "beta / |A").y.copy(), series(view, "spectrum", "periodogram").y.copy()
    scene.pointer(PointerEvent("point", 2.4, 0.6, target="kappa2"))
    after = scene.view("plain")
    assert scene.kappas[2] == 0.6 and scene.solver.k == 10
    assert np.abs(series(after, "spectrum", "beta / |A").y - spectrum).max() > 0.1
    assert np.abs(series(after, "spectrum", "periodogram").y - noise).max() > 0.1
    assert scene.solver.alphas[2] == pytest.approx(0.6, abs=1e-12)
    np.testing.assert_array_equal(scene.r, inputs.ar_autocorr(64, scene.kappas))
    scene.pointer(PointerEvent("point", 0.0, -3.0, target="kappa0"))
    assert scene.kappas[0] == -0.99, "kept inside the unit interval"
    scene.pointer(PointerEvent("point", 0.0, 0.5, target="kappa9"))  # no such point: nothing changes
    scene.controls.set_tool(False)
    scene.pointer(PointerEvent("point", 0.0, 0.5, target="kappa0"))
    assert scene.kappas[0] == -0.99 and scene.view("plain").plots[1].drag_points == []


def test_the_ar_order_slider_adds_and_removes_kappas():
    scene = create_scene("durbin")
    assert [p.name for p in scene.params] == ["speed", "p"]
    scene.controls.set_param("p", 6.4)
    assert scene.kappas.size == 6 and np.all(scene.kappas[4:] == 0) and scene.settings.p == 6
    scene.controls.set_param("p", 2)
    np.testing.assert_array_equal(scene.kappas, [-0.79, 0.5])
    assert len(scene.view("plain").plots[1].drag_points) == 2
    assert [p.name for p in create_scene("durbin", preset="large", n=10_000).params] == ["speed"]


def test_lpc_mode_plots_are_consistent():
    scene = create_scene("durbin", preset="lpc")
    mode = scene.lpc
    audio = lpc.read_wav(str(__import__("assets").path("sounds/vowels.wav")))
    assert audio.rate == 16_000 and 1.0 <= audio.samples.size / audio.rate <= 2.0
    R = lpc.autocorrelation(audio.samples, mode.length, mode.hop, mode.frames, 16)
    y, alphas, _ = durbin_cpu.batched(lpc.normalised(R))
    np.testing.assert_array_equal(mode.y, y)
    for frame in range(mode.frames):
        assert np.abs(mode.poles(frame)).max() < 1, f"frame {frame}: the autocorrelation method's A(z) is stable"
        errors = mode.errors(frame)
        assert errors[0] == 1 and np.all(np.diff(errors) <= 0), "the error never grows with the order"
    frame = scene.frame
    view = scene.view("plain")
    poles = series(view, "frame", "poles")
    np.testing.assert_allclose(np.sort_complex(poles.x + 1j * poles.y), np.sort_complex(mode.poles(frame)))
    error = series(view, f"frame {frame}: prediction", "E_m")
    np.testing.assert_allclose(error.y, np.concatenate([[1.0], np.cumprod(1 - alphas[frame] ** 2)]))
    envelope = series(view, f"frame {frame}: spectrum", "E_p R_0")
    power = mode.envelope(frame)
    full = np.concatenate([power, power[-2:0:-1]])  # both halves of the spectrum
    assert full.mean() == pytest.approx(mode.r0[frame], rel=0.02), "the model's R_0 matches the frame's"
    np.testing.assert_allclose(envelope.y, 10 * np.log10(power))
    spectrogram = view.plots[0]
    assert spectrogram.heatmap.shape == (257, mode.frames)


def test_lpc_frame_drag_order_slider_and_play():
    scene = create_scene("durbin", preset="lpc")
    scene.pointer(PointerEvent("point", 1.0, 3.0, target="frame"))
    assert scene.frame == scene.lpc.nearest_frame(1.0) and abs(scene.lpc.centres[scene.frame] - 1.0) < 0.01
    scene.controls.set_param("order", 40)
    assert scene.lpc.y.shape == (scene.lpc.frames, 40) and scene.n == scene.lpc.frames * 40
    assert series(scene.view("plain"), f"frame {scene.frame}: reflection", "alpha").y.size == 40
    scene.controls.set_param("play", 1.0)
    before = scene.frame
    scene.advance_frame()
    assert scene.frame == before + 1
    assert [p.name for p in scene.params] == ["order", "frame", "play"]
    assert scene.params[1].hi == scene.lpc.frames - 1


def test_the_scene_class_is_the_registered_one():
    assert isinstance(create_scene("durbin"), DurbinScene)


def test_reset_restarts_the_recursion_and_keeps_the_sliders():
    scene = create_scene("durbin")
    scene.controls.set_param("speed", 3.0)
    scene.pointer(PointerEvent("point", 1.0, 0.2, target="kappa1"))
    run_to(scene, 9)
    scene.reset()
    assert scene.solver.k == 1 and scene.settings.speed == 3.0
    np.testing.assert_array_equal(scene.kappas, [-0.79, 0.5, -0.18, 0.73])  # the preset's process again
    scene.load_preset("polybench")
    assert scene.settings.speed == 2.0, "another preset brings its own speed"
    lpc_scene = create_scene("durbin", preset="lpc")
    lpc_scene.controls.set_param("order", 24)
    lpc_scene.reset()
    assert lpc_scene.lpc.order == 24


@pytest.mark.parametrize("garbage", [np.nan, np.inf, -1e300], ids=["nan", "inf", "huge"])
def test_lpc_plots_take_a_learners_garbage_coefficients_and_say_so(garbage):
    import warnings

    s = create_scene("durbin", preset="lpc")
    s.advance_frame()
    s.lpc.y[:, 3] = garbage  # what a kernel one recursion step short, or racing, can leave
    s.lpc.alphas[:, -1] = garbage
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning noise on the terminal either
        for frame in (0, s.lpc.frames - 1):
            plots = s.lpc.plots(frame, None, None, False)
            z_plane = next(p for p in plots if "poles" in p.title)
            poles = next(series for series in z_plane.series if series.label == "poles")
            reason = [series.label for series in z_plane.series if "no roots" in series.label]
            if np.isfinite(garbage):
                assert poles.x.size in (0, s.lpc.order) and ("none" in z_plane.title) == bool(reason)
            else:
                assert poles.x.size == 0 and z_plane.title.endswith("none (see the legend)") and reason
        s.stats()
