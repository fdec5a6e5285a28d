"""CUDA–OpenGL interop: CUDA kernels write straight into the viewer's GL buffers.

``GLBufferRegistration`` registers moderngl buffers with CUDA (``cuda.bindings.runtime``) and
maps them for one frame at a time, as CuPy arrays over the mapped memory. Every CUDA call's
error code is checked; a failure raises ``InteropError`` naming the call.

CuPy and cuda-bindings are imported inside the functions that need them, so CPU-only machines
never load them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import moderngl


class InteropError(RuntimeError):
    """CUDA–GL interop cannot be used (not installed, GL context not on the CUDA device, ...)."""


def _runtime():
    try:
        from cuda.bindings import runtime
    except Exception as exc:  # ImportError, or a broken install raising on import
        raise InteropError(f"cuda-bindings is not installed ({type(exc).__name__}: {exc})") from exc
    return runtime


def _check(call: str, result: tuple) -> tuple:
    """cuda.bindings calls return (error, *values): raise unless the error is cudaSuccess."""
    runtime = _runtime()
    error, *values = result
    if error != runtime.cudaError_t.cudaSuccess:
        name = runtime.cudaGetErrorName(error)[1]
        text = runtime.cudaGetErrorString(error)[1]
        name = name.decode() if isinstance(name, bytes) else str(name)
        text = text.decode() if isinstance(text, bytes) else str(text)
        raise InteropError(f"{call} failed: {name} ({text})")
    return tuple(values)


class GLBufferRegistration:
    """GL buffers registered with CUDA, by default for write-discard access: CUDA overwrites, never
    reads (``write_only=False`` when CUDA reads them too).

    Registration holds the GL buffer names (``glo``); when the buffers are reallocated the
    registration is stale (``matches`` says so) and must be closed before the old buffers are
    released, then made again.
    """

    def __init__(self, buffers: Sequence[moderngl.Buffer], write_only: bool = True):
        runtime = _runtime()
        kinds = runtime.cudaGraphicsRegisterFlags
        flags = kinds.cudaGraphicsRegisterFlagsWriteDiscard if write_only else kinds.cudaGraphicsRegisterFlagsNone
        self.glos = tuple(int(buf.glo) for buf in buffers)
        self.sizes = tuple(int(buf.size) for buf in buffers)
        self._resources: list = []
        self._mapped = False
        try:
            for glo in self.glos:
                (resource,) = _check(
                    f"cudaGraphicsGLRegisterBuffer(buffer {glo})", runtime.cudaGraphicsGLRegisterBuffer(glo, flags)
                )
                if resource is None or int(resource) == 0:
                    raise InteropError(f"cudaGraphicsGLRegisterBuffer(buffer {glo}) returned a null handle")
                self._resources.append(resource)
        except BaseException:
            self.close()
            raise

    def matches(self, buffers: Sequence[moderngl.Buffer]) -> bool:
        """True while ``buffers`` are the very GL buffers registered here."""
        return bool(self._resources) and self.glos == tuple(int(buf.glo) for buf in buffers)

    @contextmanager
    def mapped(self, stream_ptr: int) -> Iterator[list[tuple[int, int]]]:
        """Map every buffer on CUDA stream ``stream_ptr``; yields [(device pointer, bytes)].

        Mapping orders the GL commands issued before it ahead of later CUDA work on the stream;
        unmapping orders that CUDA work ahead of later GL commands (the draw): no host sync.
        """
        if not self._resources:
            raise InteropError("the GL buffers are not registered with CUDA")
        if self._mapped:
            raise InteropError("the GL buffers are already mapped")
        runtime = _runtime()
        done: list = []
        try:
            # One resource per call: the bindings take a single handle (or a raw pointer to an array).
            for glo, resource in zip(self.glos, self._resources, strict=True):
                _check(
                    f"cudaGraphicsMapResources(buffer {glo})", runtime.cudaGraphicsMapResources(1, resource, stream_ptr)
                )
                done.append((glo, resource))
            self._mapped = True
            pointers = []
            for glo, resource in done:
                ptr, size = _check(
                    f"cudaGraphicsResourceGetMappedPointer(buffer {glo})",
                    runtime.cudaGraphicsResourceGetMappedPointer(resource),
                )
                pointers.append((int(ptr), int(size)))
            yield pointers
        finally:
            self._mapped = False
            errors = []
            for glo, resource in reversed(done):
                try:
                    _check(
                        f"cudaGraphicsUnmapResources(buffer {glo})",
                        runtime.cudaGraphicsUnmapResources(1, resource, stream_ptr),
                    )
                except InteropError as exc:
                    errors.append(str(exc))
            if errors:
                raise InteropError("; ".join(errors))

    def close(self) -> None:
        """Unregister (call while the GL buffers and their context still exist)."""
        resources, self._resources = self._resources, []
        if not resources:
            return
        runtime = _runtime()
        errors = []
        for glo, resource in zip(self.glos, resources, strict=False):
            try:
                _check(
                    f"cudaGraphicsUnregisterResource(buffer {glo})", runtime.cudaGraphicsUnregisterResource(resource)
                )
            except InteropError as exc:
                errors.append(str(exc))
        if errors:
            raise InteropError("; ".join(errors))


def cupy_view(ptr: int, size: int, shape: tuple[int, ...], dtype, owner):
    """A CuPy array over ``size`` bytes of device memory at ``ptr`` that ``owner`` keeps valid."""
    import cupy

    dtype = cupy.dtype(dtype)
    needed = dtype.itemsize
    for extent in shape:
        needed *= int(extent)
    if needed > size:
        raise InteropError(f"mapped buffer holds {size} bytes, {needed} needed for {shape} {dtype}")
    # The device is given, not looked up: the pointer is GL memory mapped into the current context.
    memory = cupy.cuda.UnownedMemory(ptr, size, owner, cupy.cuda.Device().id)
    return cupy.ndarray(shape, dtype, cupy.cuda.MemoryPointer(memory, 0))


def current_stream_ptr() -> int:
    """CuPy's current stream, on which the scene's render kernels run."""
    try:
        import cupy

        return int(cupy.cuda.get_current_stream().ptr)
    except Exception as exc:  # no CuPy, or no usable device behind it
        raise InteropError(f"no CUDA stream from CuPy: {type(exc).__name__}: {exc}") from exc


class RegistrationHolder:
    """Holds at most one ``GLBufferRegistration`` (``_registration``) and lets go of it before the GL
    buffers it covers are released or reallocated."""

    _registration: GLBufferRegistration | None = None

    def _unregister(self) -> None:
        registration, self._registration = self._registration, None
        if registration is not None:
            registration.close()

    def _unregister_quietly(self) -> None:
        try:
            self._unregister()
        except InteropError:
            pass  # already falling back: the first error is the one worth reporting


class InteropFeed(RegistrationHolder):
    """A feed that writes device views into GL buffers through interop until it falls back to host uploads
    for good (``fallback_reason`` says why: interop failed here, or a GPU fault made it unsafe)."""

    fallback_reason: str | None = None

    def fall_back(self, reason: str) -> None:
        """Host uploads from the next update on; the first reason is kept."""
        if self.fallback_reason is None:
            self.fallback_reason = reason
        self._unregister_quietly()
