"""The durbin scene's checks on the CPU: verification marks the entries of a planted wrong solver, passes a
correct one and beyond the direct limit reports the residual; the inspector names an entry, its step and value;
block bands follow their owners; scipy agrees with a finished system; what is refused (block colours,
verification and the GPU backend without a GPU, a system of one entry) keeps the state; the planted wrong
kernel compiles and differs."""

import numpy as np
import pytest
import scipy.linalg
from test_durbin_scene import run_to, series

from sim.durbin import durbin_cpu, inputs, kernels, layout, plots
from sim.registry import create_scene


class PlantedSolver(durbin_cpu.DurbinCpu):
    """A wrong "kernel": every dot product starts 1e-9 off (what -DPLANT_DOT_START does on the GPU)."""

    def step(self, count: int = 1) -> None:
        end = min(self.n, self.k + count)
        while self.k < end:
            k = self.k
            beta = (1 - self.alphas[k - 1] ** 2) * self.betas[k - 1]
            alpha = -(self.r[k] + 1e-9 + self.r[k - 1 :: -1][:k] @ self.y[:k]) / beta
            self.y[:k] = self.y[:k] + alpha * self.y[k - 1 :: -1]
            self.y[k], self.alphas[k], self.betas[k] = alpha, alpha, beta
            self.k += 1


def test_verification_marks_the_entries_of_a_planted_wrong_solver():
    scene = create_scene("durbin", preset="ar", n=40)
    scene.solver = PlantedSolver(scene.r)
    scene._read_back()
    scene.checks.on = True  # the CPU stands in for the GPU here: verification runs the same checks
    scene.controls.set_param("speed", 8.0)
    for _ in range(2):
        scene.advance_frame()
    report = scene.checks.verification
    assert report is not None and report.unit == "entries" and report.passes_checked == 2
    assert report.differing > 0 and report.details["largest difference to the CPU twin"] > 1e-10
    assert report.details["largest difference to scipy"] > 1e-10 and scene.stats()["max_error"] > 1e-10
    marked = np.flatnonzero(scene.checks.mismatch)
    assert marked.size == report.differing and marked.max() < scene.solver.k
    red = series(scene.view("plain"), "y:", "beyond tolerance")
    np.testing.assert_array_equal(red.items, marked)
    rows = scene.inspector.describe_check(int(marked[-1]))
    assert [r[0] for r in rows][:2] == ["y (CPU twin)", "y (scipy)"] and rows[0][1] != rows[0][2]
    assert scene.inspector.describe_check(int(np.flatnonzero(~scene.checks.mismatch)[-1])) == []


def test_verification_passes_a_correct_solver_and_checks_scipy_once_while_idle():
    scene = create_scene("durbin", preset="polybench", n=200)
    scene.checks.on = True
    scene.controls.set_param("speed", 30.0)
    for _ in range(10):
        scene.advance_frame()
    report = scene.checks.verification
    assert scene.solver.k == 200 and report.differing == 0 and report.passes_checked == 7
    assert report.details["largest difference to the CPU twin"] == 0.0
    assert report.details["largest difference to scipy"] < scene.tolerance


def test_verification_beyond_the_direct_limit_reports_the_residual():
    scene = create_scene("durbin", preset="large", n=6000)
    scene.checks.on = True
    scene.controls.set_param("speed", 10_000.0)
    scene.advance_frame()
    details = scene.checks.verification.details
    assert "relative residual |T y + r| / |r|" in details and details["relative residual |T y + r| / |r|"] < 1e-13
    assert scene.checks.verification.differing == 0


def test_describe_names_the_entry_its_step_and_value():
    scene = create_scene("durbin")
    run_to(scene, 8)
    values = scene.inspector.describe(3)
    assert values["coefficient"] == "y[3] of 64" and values["value"] == f"{scene.solver.y[3]:.12g}"
    assert values["written"].startswith("at step 3, as alpha_3 = 0.73") and "last: step 7" in values["written"]
    assert "reflection coefficient 3" in values["kappa"]
    assert scene.inspector.describe(20)["value"] == "not computed yet: step 20 writes it"
    with pytest.raises(IndexError):
        scene.inspector.describe(64)
    lpc_scene = create_scene("durbin", preset="lpc")
    frame = lpc_scene.inspector.describe(30)
    assert frame["frame"] == f"30 of {lpc_scene.lpc.frames}" and frame["largest |pole|"].endswith("(stable)")
    with pytest.raises(IndexError):
        lpc_scene.inspector.describe(lpc_scene.lpc.frames)


def test_block_bands_follow_the_owners():
    owners = layout.owners_two_kernel(99, 2, 32)[:100]
    band = plots.block_band(owners, np.arange(101) - 0.5, -1.0, 0.0, "CUDA block")
    assert len(band) == len(np.unique(owners)) and band[0].label == "CUDA block"
    assert all(s.style == "shaded" and s.label.startswith("##") for s in band[1:])
    covered = np.zeros(200, int)
    for s in band:
        covered += s.y == 0.0  # each span is up (0.0) in exactly one colour's series
    assert np.all(covered == 1)
    y = np.linspace(-1, 1, 100)
    plot = plots.y_plot(y, 100, 100, None, layout.owners_persistent(99, 7)[:100])
    assert sum(s.style == "shaded" for s in plot.series) == len(np.unique(layout.owners_persistent(99, 7)))


def test_without_a_gpu_block_colours_and_verification_are_not_offered():
    scene = create_scene("durbin")
    if not scene.gpu_reason:
        pytest.skip("this machine has a GPU")
    assert scene.color_modes == {"plain": "Plain"} and scene.owners() is None
    with pytest.raises(ValueError, match="switch the recursion to the GPU"):
        scene.checks.set_on(True)


def test_a_system_of_one_entry_is_refused_and_the_old_state_kept():
    scene = create_scene("durbin", preset="ar", n=10)
    with pytest.raises(ValueError, match="N >= 2"):
        scene.load_preset("ar", 1)
    assert scene.r.size == 10 and scene.preset == "ar"


def test_scipy_agrees_with_the_view_of_a_finished_ar_system():
    scene = create_scene("durbin", preset="ar", n=300)
    scene.controls.set_param("speed", 1000.0)
    scene.advance_frame()
    y = series(scene.view("plain"), "y:", "y (k = 300)").y
    reference = scipy.linalg.solve_toeplitz(inputs.toeplitz_column(scene.r), -scene.r)
    assert np.abs(y - reference).max() < 1e-12


def test_backend_switch_without_a_gpu_is_refused_and_keeps_the_state():
    scene = create_scene("durbin")
    if not scene.gpu_reason:
        pytest.skip("this machine has a GPU")
    run_to(scene, 5)
    from sim.gpu.backend import BackendUnavailable

    with pytest.raises(BackendUnavailable):
        scene.set_backend("gpu")
    assert scene.backend == "cpu" and scene.solver.k == 5


@pytest.mark.parametrize(
    "build",
    [
        kernels.two_kernel(),
        kernels.persistent("cluster"),
        kernels.persistent("grid"),
        kernels.batched("register"),
        kernels.batched("warp"),
    ],
    ids=["two-kernel", "cluster", "grid", "batched-register", "batched-warp"],
)
def test_the_planted_wrong_kernel_compiles_and_differs(build):
    """The GPU tests' planted fault (-DPLANT_DOT_START) builds with NVRTC and changes the code."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")
    from test_cuda_sources import compile_cubin

    from sim.gpu import cuda

    source = cuda.source_text(build.source)
    plain = compile_cubin(source, build.source, build.all_options())
    with cuda.planted(build.source, "-DPLANT_DOT_START=1e-9"):
        planted = build.all_options()
        assert planted[-1] == "-DPLANT_DOT_START=1e-9"
        wrong = compile_cubin(source, build.source, planted)
    assert plain != wrong
