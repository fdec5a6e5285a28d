"""Why the GPU cannot be used, told by what is missing: no NVIDIA driver, a driver that sees no GPU, or
a GPU with its driver but no CuPy (the only case where installing the [gpu] extra helps)."""

import ctypes
import sys
import types

import pytest

from sim.gpu import backend


class FakeDriver:
    """libcuda's two calls the probe makes: cuInit's return code and the device count it finds."""

    def __init__(self, init: int = 0, devices: int = 1):
        self.init, self.devices = init, devices

    def cuInit(self, flags):  # noqa: N802 (the driver's name)
        return self.init

    def cuDeviceGetCount(self, ref):  # noqa: N802
        ref._obj.value = self.devices
        return 0


@pytest.fixture
def status(monkeypatch):
    """gpu_status() asked afresh, with the driver library ``driver`` (None: not there) and CuPy ``cupy``
    (None: not installed)."""

    def ask(driver, cupy=None):
        def open_driver(library):
            if driver is None:
                raise OSError(f"{library}: cannot open shared object file")
            return driver

        monkeypatch.setattr(backend, "_open_driver", open_driver)
        monkeypatch.setitem(sys.modules, "cupy", cupy)
        backend.gpu_status.cache_clear()
        return backend.gpu_status()

    yield ask
    backend.gpu_status.cache_clear()


def _cupy_whose_runtime_fails():
    def fails():
        raise RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version")

    runtime = types.SimpleNamespace(getDeviceCount=fails)
    return types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime))


def test_no_driver_says_so_and_does_not_suggest_cupy(status):
    got = status(None)
    assert not got.available
    assert "no NVIDIA GPU driver" in got.reason and backend.DRIVER_LIBRARY in got.reason
    assert "CuPy" not in got.reason and "install" not in got.reason


def test_a_driver_without_a_gpu_says_no_gpu(status):
    for driver in (FakeDriver(init=backend.CUDA_ERROR_NO_DEVICE), FakeDriver(devices=0)):
        got = status(driver)
        assert got.reason == "no NVIDIA GPU found (the NVIDIA driver is installed but sees no GPU)"


def test_a_driver_that_fails_to_start_names_its_error(status):
    got = status(FakeDriver(init=999))
    assert "cuInit error 999" in got.reason and "CuPy" not in got.reason


def test_a_gpu_without_cupy_suggests_the_gpu_extra(status):
    got = status(FakeDriver(devices=2))
    assert got.reason.startswith("CuPy is not installed (") and "install the [gpu] extra" in got.reason


def test_cupy_without_a_driver_blames_the_missing_driver_not_its_version(status):
    got = status(None, _cupy_whose_runtime_fails())
    assert "no NVIDIA GPU driver" in got.reason and "insufficient" not in got.reason


def test_cupy_with_a_driver_keeps_the_runtime_error(status):
    got = status(FakeDriver(), _cupy_whose_runtime_fails())
    assert got.reason.startswith("no usable CUDA device: cudaErrorInsufficientDriver")


def _has_driver() -> bool:
    try:
        ctypes.CDLL(backend.DRIVER_LIBRARY)
    except OSError:
        return False
    return True


@pytest.mark.skipif(_has_driver(), reason="this machine has an NVIDIA driver")
def test_commands_on_a_machine_without_a_driver_do_not_suggest_cupy(cli):
    out = cli("run", "balls", "--headless", "--steps", "6", "--backend", "gpu")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip() == (
        f"kernel-lab run: GPU backend unavailable: no NVIDIA GPU driver on this machine "
        f"({backend.DRIVER_LIBRARY} not found): the GPU backend needs an NVIDIA GPU"
    )


@pytest.mark.gpu
def test_on_a_gpu_machine_the_driver_probe_finds_the_gpu_cupy_uses():
    backend.gpu_status.cache_clear()
    try:
        assert backend.nvidia_driver_problem() == ""
        status = backend.gpu_status()
        assert status.available and status.reason == status.device_name != ""
    finally:
        backend.gpu_status.cache_clear()
