"""The process compute-sanitizer watches (``sim.userkernel.sanitizer`` starts it): one launch of the user's
kernel, and an answer file the caller reads.

    python -P -c "...main(request, result)"     request: pickled (source, inputs, block, tool)

The answer is a pickled dict: ``status`` ("ok", "no-gpu", "compile" or "error"), ``message``, ``device``,
``buffers`` (name -> (device pointer, bytes): an address in the tool's report is named by buffer) and
``launch_error``. It is written once before the launch (the buffers are known even if the launch takes
the process down) and again after it.

CuPy's memory pool is off here: every buffer is an allocation of its own, its exact size, so memcheck
knows where each one ends (and pads after it). The outputs start as the sandbox's do, without the
guards' pads (the tool watches the bounds); under initcheck an output the kernel must write all of is
left unwritten, so a read of a cell before the kernel writes it is reported.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys


def _die_with_parent() -> None:
    """Linux: SIGKILL when compute-sanitizer, which started this process, dies."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _write(path: str, answer: dict) -> None:
    partial = f"{path}.partial"
    with open(partial, "wb") as file:
        pickle.dump(answer, file)
    os.replace(partial, path)


def _launch(source, inputs: dict, block, tool: str, answer: dict, result: str) -> None:
    import cupy
    import numpy as np

    from sim.contract import load
    from sim.userkernel.guard import Guarded
    from sim.userkernel.sandbox import _device_errors, _kernel

    cupy.cuda.set_allocator(None)  # no pool: each buffer its own allocation, as memcheck sees it
    adapter = load(source.stage.adapter)()
    kernel = _kernel(source)
    device = {name: cupy.asarray(value) for name, value in inputs.items() if isinstance(value, np.ndarray)}
    for name, out in adapter.outputs(inputs).items():
        start = "unset" if tool == "initcheck" and out.start == "poison" else out.start
        device[name] = Guarded(cupy, name, out.shape, out.dtype, start, pad=0).body
    answer["buffers"] = {name: (int(a.data.ptr), int(a.nbytes)) for name, a in device.items() if a.nbytes}
    grid, threads, shared = adapter.launch(inputs, block)
    args = adapter.args(inputs, device)
    cupy.cuda.Device().synchronize()
    _write(result, answer)
    try:
        kernel(tuple(grid), tuple(threads), args, shared_mem=int(shared))
        cupy.cuda.Device().synchronize()
    except _device_errors() as exc:
        answer["launch_error"] = (str(exc).strip().splitlines() or [""])[0]


def main(request: str, result: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller decides, and kills the process group
    _die_with_parent()
    with open(request, "rb") as file:
        source, inputs, block, tool = pickle.load(file)
    answer = {"status": "ok", "message": "", "device": "", "buffers": {}, "launch_error": ""}
    from sim.gpu.backend import gpu_status
    from sim.userkernel.sandbox import SandboxError

    status = gpu_status()
    try:
        if not status.available:
            answer.update(status="no-gpu", message=f"no GPU to run the kernel on: {status.reason}")
        else:
            answer["device"] = status.device_name
            _launch(source, inputs, block, tool, answer, result)
    except SandboxError as exc:  # the compile, for this device
        answer.update(status="compile" if exc.kind == "compile" else "error", message=str(exc))
    except Exception as exc:  # noqa: BLE001  the adapter's own failure, said in one line
        answer.update(status="error", message=f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}")
    _write(result, answer)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(0)  # after a device error the context is dead: CuPy's destructors would only print failures
