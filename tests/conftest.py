import os
import shutil
import signal
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def pytest_configure(config):
    """Ctrl-C tests need SIGINT delivered: a run started in the background of a script inherits it
    ignored (and passes that on to every program it starts), so the tests restore Python's handler."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config, items):
    """GPU tests run only where CuPy sees a device (pytest -m gpu on the GPU machine)."""
    from sim.backend import gpu_status

    status = gpu_status()
    if status.available:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {status.reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs, to fill a disk on purpose (needs root; skipped otherwise)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


@pytest.fixture
def gl():
    """A standalone EGL OpenGL 3.3 context (no display needed)."""
    import moderngl

    ctx = moderngl.create_standalone_context(backend="egl", require=330)
    yield ctx
    ctx.release()


@pytest.fixture(scope="session")
def c_reference(tmp_path_factory):
    """PolyBench durbin (3.2 and 4.x) in C, built with ``cc`` without FMA contraction: the twin's reference."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (cc) on this machine")
    exe = tmp_path_factory.mktemp("durbin") / "durbin_ref"
    source = os.path.join(ROOT, "tests", "data", "durbin_ref.c")
    subprocess.run([cc, "-O2", "-ffp-contract=off", "-o", str(exe), source], check=True)
    return exe
