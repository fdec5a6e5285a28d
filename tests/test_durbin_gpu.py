"""Every durbin GPU kernel against the CPU twin and scipy on fresh random AR(p) inputs, outputs poisoned
(NaN) before every run (run with pytest -m gpu on a GPU machine)."""

import numpy as np
import pytest
import scipy.linalg

from sim.durbin import durbin_cpu, inputs
from sim.gpu import cuda

pytestmark = pytest.mark.gpu
SINGLE = [
    ("two-kernel", None, None),
    ("persistent", None, None),
    ("persistent", "cluster", None),
    ("persistent", "cluster", 1),
    ("persistent", "cluster", 2),
    ("persistent", "cluster", 8),
    ("persistent", "grid", None),
    ("persistent", "grid", "all"),
]


def rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def ar_input(n, rng=None, bound=0.7):
    rng = rng or np.random.default_rng()
    return inputs.ar_autocorr(n, inputs.random_kappas(rng, bound=bound))


def solver(r, kernel, path, blocks, block=256, **kw):
    from sim.durbin import gpu

    if blocks == "all":
        blocks = gpu.device_properties(0)["multiProcessorCount"]
    return gpu.DurbinGpu(r, kernel, block=block, path=path, blocks=blocks, **kw)


@pytest.mark.parametrize("kernel, path, blocks", SINGLE)
@pytest.mark.parametrize("block", [32, 256, 1024])
@pytest.mark.parametrize("n", [2, 3, 64, 1001, 5003])
def test_single_system_matches_cpu_and_scipy(kernel, path, blocks, block, n):
    r = ar_input(n)
    s = solver(r, kernel, path, blocks, block)
    s.run()
    y = s.result()
    cpu = durbin_cpu.DurbinCpu(r)
    cpu.run()
    assert rel(y, cpu.y) <= 1e-12, s.path
    assert rel(y, scipy.linalg.solve_toeplitz(inputs.toeplitz_column(r), -r)) <= 1e-12
    state = s.snapshot()
    np.testing.assert_array_equal(state["y"], y)
    np.testing.assert_allclose(state["alphas"], cpu.alphas, rtol=0, atol=1e-12)
    np.testing.assert_allclose(state["betas"], cpu.betas, rtol=1e-12)


@pytest.mark.parametrize("kernel, path, blocks", SINGLE)
def test_steps_in_pieces_equal_one_run_and_leave_the_rest_poisoned(kernel, path, blocks):
    rng = np.random.default_rng()
    n = 3000
    r = ar_input(n, rng)
    whole = solver(r, kernel, path, blocks)
    whole.run()
    reference = whole.result()
    pieces = solver(r, kernel, path, blocks)
    while not pieces.done:
        pieces.step(int(rng.integers(1, 700)))
        pieces.synchronize()
        y = pieces.y.get()
        assert not np.isnan(y[: pieces.k]).any() and np.isnan(y[pieces.k :]).all()
        owners = pieces.owners()
        limit = pieces.blocks if kernel == "persistent" else pieces.update_blocks
        assert owners.shape == (pieces.k,) and owners.min() >= 0 and owners.max() < limit
    if kernel == "two-kernel":  # the same launches, graph or not
        np.testing.assert_array_equal(pieces.result(), reference)
    else:  # each launch sums its first dot product in another order
        assert rel(pieces.result(), reference) <= 1e-13
    again = solver(r, kernel, path, blocks)
    again.run()
    np.testing.assert_array_equal(again.result(), reference)  # fixed reduction order: no race, same bits


@pytest.mark.parametrize("kernel, path, blocks", SINGLE)
def test_polybench_32_is_bit_identical(kernel, path, blocks):
    r = inputs.polybench(777, "3.2")
    s = solver(r, kernel, path, blocks, version="3.2")
    s.run()
    y = s.result()
    assert y.view(np.uint64).tolist() == durbin_cpu.solve(r, "3.2").view(np.uint64).tolist()


@pytest.mark.parametrize("kernel, path", [("two-kernel", None), ("persistent", "cluster"), ("persistent", "grid")])
def test_polybench_32_on_other_inputs(kernel, path):
    r = ar_input(500) * 0.25
    s = solver(r, kernel, path, None, version="3.2")
    s.run()
    assert rel(s.result(), durbin_cpu.solve(r, "3.2")) <= 1e-12


@pytest.mark.parametrize("kernel, path", [("two-kernel", None), ("persistent", "cluster"), ("persistent", "grid")])
def test_float32(kernel, path):
    r = ar_input(2000, bound=0.5)
    s = solver(r, kernel, path, None, precision="fp32")
    s.run()
    assert s.result().dtype == np.float32
    assert rel(s.result().astype(np.float64), durbin_cpu.solve(r)) <= 1e-4


@pytest.mark.parametrize("kernel, path", [("two-kernel", None), ("persistent", None)])
def test_long_system_residual(kernel, path):
    rng = np.random.default_rng()
    kappas = inputs.random_kappas(rng)
    n = 150_000
    r = inputs.ar_autocorr(n, kappas)
    s = solver(r, kernel, path, None)
    s.run()
    y = s.result()
    residual = scipy.linalg.matmul_toeplitz(inputs.toeplitz_column(r), y) + r
    assert np.max(np.abs(residual)) / np.max(np.abs(r)) <= 1e-12, s.path
    alphas = s.snapshot()["alphas"]
    np.testing.assert_allclose(alphas[: len(kappas)], kappas, rtol=0, atol=1e-12)
    assert np.abs(alphas[len(kappas) :]).max() <= 1e-12


# --- batched ------------------------------------------------------------------------------------------------
def condition_bound(kappas: np.ndarray) -> float:
    """An upper bound on the condition number of an AR(p) process's Toeplitz autocorrelation matrix of any
    order: its eigenvalues lie within the range of the spectral density, 1 / |A(e^iw)|^2 up to a factor, where
    A is the prediction polynomial the reflection coefficients build (Levinson's step-up)."""
    a = np.array([1.0])
    for k in kappas:
        a = np.append(a, 0.0)
        a = a + k * a[::-1]
    power = np.abs(np.fft.rfft(a, 4096)) ** 2
    return float(power.max() / power.min())


@pytest.mark.parametrize(
    "group, blocks",
    [("register", (32, 64, 256)), ("thread", (32, 64, 128)), ("warp", (32, 128, 256)), ("block", (32, 128, 512))],
)
@pytest.mark.parametrize("order", [2, 3, 17, 32, 33, 100, 257, 1024])
def test_batched_matches_the_cpu_twin(group, blocks, order):
    import cupy

    from sim.durbin import batched_gpu
    from sim.durbin.gpu import KernelError

    rng = np.random.default_rng()
    systems = 301
    kappas = [inputs.random_kappas(rng) for _ in range(systems)]
    rb = np.stack([inputs.ar_autocorr(order, k) for k in kappas])
    y_cpu, a_cpu, b_cpu = durbin_cpu.batched(rb)
    # another summation order moves y by up to about eps x the system's condition number (up to ~1e7 for
    # kappas near +-0.7), so each system's tolerance follows from its bound
    y_tolerance = np.maximum(1e-12, np.finfo(np.float64).eps * np.array([condition_bound(k) for k in kappas]))
    for block in blocks:
        poisoned = (cupy.full(rb.shape, np.nan), cupy.full(rb.shape, np.nan), cupy.full(systems, np.nan))
        try:
            y, a, b = (x.get() for x in batched_gpu.batched(rb, group, block, out=poisoned))
        except KernelError as exc:
            assert ("shared memory" in str(exc) and group == "thread") or (group == "register" and order > 32)
            continue
        if group in ("thread", "register"):  # C summation order on the GPU too
            np.testing.assert_array_equal(y, y_cpu)
            np.testing.assert_array_equal(a, a_cpu)
            np.testing.assert_array_equal(b, b_cpu)
        else:
            assert (np.max(np.abs(y - y_cpu), axis=1) / np.max(np.abs(y_cpu)) <= y_tolerance).all()
            np.testing.assert_allclose(a, a_cpu, rtol=0, atol=1e-12)
            np.testing.assert_allclose(b, b_cpu, rtol=1e-12)


def test_batched_out_must_fit():
    import cupy

    from sim.durbin import batched_gpu
    from sim.durbin.gpu import KernelError

    rb = np.stack([inputs.polybench(32, "4")] * 5)
    for out in (
        (cupy.empty((5, 31)), cupy.empty((5, 32)), cupy.empty(5)),
        (cupy.empty((5, 32)), cupy.empty((5, 32)), cupy.empty(5, np.float32)),
        (cupy.empty((32, 5)).T, cupy.empty((5, 32)), cupy.empty(5)),
    ):
        with pytest.raises(KernelError, match="out= must be"):
            batched_gpu.batched(rb, "register", out=out)


@pytest.mark.parametrize("group", ["register", "thread", "warp", "block"])
def test_batched_polybench_32_and_fp32(group):
    from sim.durbin import batched_gpu

    rb = np.stack([inputs.polybench(30, "3.2")] * 70)
    y = batched_gpu.batched(rb, group, version="3.2")[0].get()
    assert y.view(np.uint64).tolist() == durbin_cpu.batched(rb, "3.2")[0].view(np.uint64).tolist()
    rng = np.random.default_rng()
    rb = np.stack([inputs.ar_autocorr(24, inputs.random_kappas(rng, bound=0.5)) for _ in range(200)])
    y32 = batched_gpu.batched(rb, group, precision="fp32")[0].get()
    assert y32.dtype == np.float32 and np.max(np.abs(y32 - durbin_cpu.batched(rb)[0])) <= 1e-4


# --- commands -----------------------------------------------------------------------------------------------


def test_durbin_command_on_the_gpu(cli):
    out = cli(
        "durbin",
        "20000",
        "--version",
        "4",
        "--input",
        "ar",
        "--backend",
        "gpu",
        "--kernel",
        "all",
        "--compare",
        "--hash",
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "kernel two-kernel" in out.stdout and "kernel persistent" in out.stdout
    assert out.stdout.count("(ok, tolerance 1e-10)") == 2 and out.stdout.count("hash (") == 2
    out = cli("durbin", "--dataset", "MINI", "--backend", "gpu", "--hash", "--dump", "--kernel", "persistent-grid")
    cpu = cli("durbin", "--dataset", "MINI", "--hash", "--dump")
    assert out.returncode == 0 and out.stderr == cpu.stderr
    assert out.stdout.splitlines()[-1] == cpu.stdout.splitlines()[-1]


def test_lpc_on_the_gpu_matches_the_cpu(cli, tmp_path):
    from tests.test_durbin_cli import ar_signal, write_wav

    wav = write_wav(tmp_path / "a.wav", ar_signal(3.0))
    outputs = {}
    for backend in ("cpu", "gpu"):
        out = cli(
            "lpc",
            str(wav),
            "--order",
            "32",
            "--backend",
            backend,
            "--compare",
            "--output",
            str(tmp_path / f"{backend}.npy"),
        )
        assert out.returncode == 0, out.stdout + out.stderr
        outputs[backend] = np.load(tmp_path / f"{backend}.npy")
    np.testing.assert_allclose(outputs["gpu"]["r"], outputs["cpu"]["r"], rtol=0, atol=1e-12)  # cuFFT vs pocketfft
    for field in ("a", "k", "error"):  # Durbin amplifies those differences by about cond(T)
        np.testing.assert_allclose(outputs["gpu"][field], outputs["cpu"][field], rtol=0, atol=1e-8)


# --- the grid barrier's watchdog (run apart, -k silent: a broken watchdog would hang) -----------------------
def test_silent_block_times_out_instead_of_hanging():
    from sim.durbin import gpu

    with cuda.planted("sim/durbin/durbin.cu", "-DPLANT_SILENT_BLOCK"):
        s = solver(ar_input(5000), "persistent", "grid", 4)
        s.run()
        with pytest.raises(gpu.KernelError, match="timed out"):
            s.synchronize()
