import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


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
def gl():
    """A standalone EGL OpenGL 3.3 context (no display needed)."""
    import moderngl

    ctx = moderngl.create_standalone_context(backend="egl", require=330)
    yield ctx
    ctx.release()
