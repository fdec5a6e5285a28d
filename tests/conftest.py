import contextlib
import io
import os
import select
import shutil
import signal
import subprocess
import sys
import warnings
from typing import NamedTuple

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# numba's parallel loops run on OpenMP, whose idle workers spin: on a machine whose cores are busy (CI's 2 cores
# with a test's subprocesses or Xvfb, a shared box) a spinning worker holds the core the working one needs, and a
# launch that takes 76 us with sleeping workers took 8 ms (a 3000-step heat run: 0.07 s against 24 s). Set before
# numba loads the OpenMP runtime, and inherited by every command a test starts.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _one_gpu_per_worker() -> None:
    """A parallel GPU run on a machine of several GPUs (bench/device.sh sets KERNEL_LAB_TEST_GPUS to their
    number): worker k sees GPU k mod that number only, as its device 0, so the workers' kernels and windows
    do not share a GPU. Set before CuPy or a GL context starts."""
    worker, gpus = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("KERNEL_LAB_TEST_GPUS", "")
    if worker.startswith("gw") and worker[2:].isdigit() and gpus.isdigit() and int(gpus) > 1:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(int(worker[2:]) % int(gpus))


_one_gpu_per_worker()


def pytest_configure(config):
    """Ctrl-C tests need SIGINT delivered: a run started in the background of a script inherits it
    ignored (and passes that on to every program it starts), so the tests restore Python's handler. A
    worker of a parallel run (pytest-xdist) gets an X server of its own."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("DISPLAY"):
        own_display(config)


def own_display(config) -> None:
    """Window tests move the pointer and type with xdotool, and with no window manager focus follows the
    pointer: two workers' windows on one screen take each other's keys. Each worker starts its own Xvfb
    (as xvfb-run does: no window manager, the same screen), on a display number the server picks itself
    (``-displayfd``: no two servers race for one), and its windows and commands use it. ``-noreset``: an X
    server resets when its last client leaves, and a window opened during the reset cannot connect."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        return
    read, write = os.pipe()
    server = subprocess.Popen(
        [xvfb, "-displayfd", str(write), "-screen", "0", "1920x1080x24", "-nolisten", "tcp", "-noreset"],
        pass_fds=(write,),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    number = b""
    with os.fdopen(read, "rb") as said:
        while select.select([said], [], [], 30)[0]:  # the number and a newline once it listens
            chunk = os.read(said.fileno(), 16)
            number += chunk
            if not chunk or number.endswith(b"\n"):
                break
    if server.poll() is None and number.strip().isdigit():
        os.environ["DISPLAY"] = f":{int(number)}"
        os.environ.pop("XAUTHORITY", None)  # xvfb-run's cookie is for its own display
        config.add_cleanup(server.terminate)
    else:
        server.kill()


def asks_for_faults(config, item) -> bool:
    """Whether the run asks for this fault test: its ``-m`` expression names ``gpu_fault``, or the test's
    own node id is on the command line."""
    if "gpu_fault" in (config.option.markexpr or ""):
        return True
    for arg in config.args:
        path, named, rest = arg.partition("::")
        if named:
            wanted = f"{os.path.relpath(os.path.abspath(path), config.rootpath)}::{rest}".replace(os.sep, "/")
            if item.nodeid == wanted or item.nodeid.startswith((wanted + "[", wanted + "::")):
                return True
    return False


def deselect_fault_tests(config, items) -> None:
    """Tests marked ``gpu_fault`` make a kernel fault on purpose (an illegal address: an MMU fault, Xid 31).
    After one, NVIDIA's driver (H100, 580) makes the first GL draw of CUDA-written data in every later GL
    context on that GPU wait 15-19 s in glFinish, in any process, and a context of the faulting process can
    draw wrong pictures: so they run only in a pytest run of their own (``pytest -m gpu_fault``, or named by
    node id), after the other GPU tests (bench/device.sh), never inside a run of other tests."""
    unasked = [
        item for item in items if item.get_closest_marker("gpu_fault") is not None and not asks_for_faults(config, item)
    ]
    if unasked:
        config.hook.pytest_deselected(items=unasked)
        items[:] = [item for item in items if item not in unasked]


def pytest_collection_modifyitems(config, items):
    """GPU tests run only where CuPy sees a device (pytest -m gpu on the GPU machine); tests that make a
    kernel fault run only when asked for (pytest -m gpu_fault)."""
    from sim.gpu.backend import gpu_status

    deselect_fault_tests(config, items)
    status = gpu_status()
    if status.available:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {status.reason}")
    for item in items:
        if item.get_closest_marker("gpu") is not None:  # the marker, not a test or parameter named gpu
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def not_quiet():
    """Every test starts and ends with progress bars allowed (a --quiet command in-process sets it)."""
    from sim.cmdline import progress

    progress.set_quiet(False)
    yield
    progress.set_quiet(False)


@pytest.fixture
def balls_window(tmp_path):
    """A window of 600 balls, or pyglet's headless (EGL) window where there is no display (a GPU
    machine); its screenshots and recordings go under tmp_path."""
    from sim import create_scene
    from viewer.window.app import Viewer
    from viewer.window.display import display_problem

    try:
        v = Viewer(
            create_scene("balls", preset="block", n=600, seed=2),
            900,
            601,
            visible=display_problem() is None,
            max_fps=None,
            screenshot_dir=tmp_path / "screenshots",
            recording_dir=tmp_path / "recordings",
        )
    except Exception as exc:  # noqa: BLE001  no window of either kind here
        pytest.skip(f"no window: {exc}")
    for _ in range(3):
        v.tick()
    yield v
    v.close()


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs, to fill a disk on purpose (needs root; skipped otherwise)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True).returncode
        != 0
    ):
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


@pytest.fixture
def gl():
    """A standalone EGL OpenGL context, 4.3 where offered, else 3.3 (no display needed)."""
    from viewer.gpu.egl import standalone_context

    ctx = standalone_context()
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


class Ran(NamedTuple):
    """What a command left: its exit code and everything it printed."""

    returncode: int
    stdout: str
    stderr: str


def run_main(*args) -> Ran:
    """``main.py ARGS`` in this process (the start-up of a new interpreter is what most tests would pay
    for); an exception the command does not turn into an exit code fails the test with its traceback."""
    import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        process_warnings()
        try:
            code = main.main([str(a) for a in args])
        except SystemExit as exc:  # argparse's own errors and --help
            code = exc.code
    return Ran(code, out.getvalue(), err.getvalue())


def process_warnings() -> None:
    """Warnings print on stderr as in a process of their own (Python's default filters), not into
    pytest's summary: tests that assert a command warns of nothing see them."""
    warnings.resetwarnings()
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.simplefilter("ignore", category)
    warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: sys.stderr.write(
        warnings.formatwarning(message, category, filename, lineno, line)
    )


@pytest.fixture(scope="session")
def cli():
    """``cli("run", "balls", ...)`` -> Ran(returncode, stdout, stderr), run in this process; session-wide so
    that a module's fixtures can run a command once for all its tests."""
    return run_main


@pytest.fixture
def gate_folders(tmp_path):
    """The regression gate's out/ and results/ folders with its test reports (tests/gate_reports.py)."""
    from gate_reports import make_folders

    return make_folders(tmp_path)
