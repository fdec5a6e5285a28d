"""How ranks move arrays: a link offers ``exchange`` (point-to-point messages, all at once) and
``allreduce`` (in place) on the arrays of its backend.

- ``HostLink``: numpy arrays over MPI (the CPU backend; any communicator).
- GPU links (CuPy arrays on the rank's device), chosen at start-up by ``gpu_link``:
  ``NcclLink`` (NCCL through cupy.cuda.nccl: the unique id broadcast over MPI, send/recv inside a
  group, all-reduce; everything queued on the current stream, no host wait) where CuPy has NCCL;
  else ``CudaMpiLink`` (device pointers handed to a CUDA-aware MPI) where the environment says the
  MPI library is CUDA-aware; else ``StagedLink`` (copies through the host around plain MPI). The
  two MPI links synchronise the stream before MPI touches a buffer.
``KERNEL_LAB_TRANSPORT=nccl|cuda-mpi|host`` forces a choice (to compare them).
"""

from __future__ import annotations

import os

import numpy as np

from sim.cmdline.cli import UsageError
from sim.mpi.comm import Comm, MpiComm

TRANSPORTS = ("nccl", "cuda-mpi", "host")
# Variables with which MPI libraries announce (or are told to use) CUDA-aware transfers
CUDA_AWARE_ENV = {
    "OMPI_MCA_opal_cuda_support": "true",
    "MPICH_GPU_SUPPORT_ENABLED": "1",
    "MPIR_CVAR_ENABLE_GPU": "1",
    "MV2_USE_CUDA": "1",
    "I_MPI_OFFLOAD": "1",
}


class HostLink:
    """numpy arrays over the communicator."""

    name = "MPI"

    def __init__(self, comm: Comm):
        self.comm = comm

    def exchange(self, sends, recvs) -> None:
        self.comm.exchange(sends, recvs)

    def allreduce(self, a: np.ndarray, op: str = "sum") -> None:
        a[...] = self.comm.allreduce(a, op)

    def describe(self) -> str:
        return f"MPI ({self.comm.library})" if self.comm.size > 1 else "one process"

    def close(self) -> None:
        pass


class StagedLink(HostLink):
    """CuPy arrays copied to the host, sent over MPI, copied back."""

    name = "host"

    def __init__(self, comm: Comm, why: str = ""):
        super().__init__(comm)
        self.why = why

    def exchange(self, sends, recvs) -> None:
        import cupy

        cupy.cuda.get_current_stream().synchronize()
        host_sends = [(peer, cupy.asnumpy(a)) for peer, a in sends]
        host_recvs = [(peer, np.empty(a.shape, a.dtype)) for peer, a in recvs]
        self.comm.exchange(host_sends, host_recvs)
        for (_, device), (_, host) in zip(recvs, host_recvs, strict=True):
            if host.size:
                device.set(host)

    def allreduce(self, a, op: str = "sum") -> None:
        import cupy

        cupy.cuda.get_current_stream().synchronize()
        a.set(self.comm.allreduce(cupy.asnumpy(a), op))

    def describe(self) -> str:
        return f"MPI through host memory ({self.comm.library})" + (f"; {self.why}" if self.why else "")


class CudaMpiLink(HostLink):
    """CuPy arrays handed to a CUDA-aware MPI (mpi4py reads __cuda_array_interface__)."""

    name = "cuda-mpi"
    comm: MpiComm  # handed only where MPI runs over several ranks (``gpu_link``)

    def exchange(self, sends, recvs) -> None:
        import cupy

        cupy.cuda.get_current_stream().synchronize()
        self.comm.exchange(sends, recvs)

    def allreduce(self, a, op: str = "sum") -> None:
        import cupy

        cupy.cuda.get_current_stream().synchronize()
        out = cupy.empty_like(a)
        self.comm._c.Allreduce(a, out, op=self.comm._op(op))
        a[...] = out

    def describe(self) -> str:
        return f"CUDA-aware MPI ({self.comm.library})"


class NcclLink:
    """NCCL through CuPy: one communicator per (MPI communicator, device)."""

    name = "nccl"

    def __init__(self, comm: Comm, device: int):
        import cupy
        from cupy.cuda import nccl

        self.comm, self.device, self._nccl = comm, device, nccl
        local = nccl.get_unique_id()  # a tuple of 128 signed chars, or bytes in newer CuPy
        uid = np.frombuffer(bytes(b & 0xFF for b in local) if isinstance(local, tuple) else local, np.uint8).copy()
        comm.bcast(uid)  # rank 0's id, over MPI
        uid_arg = tuple(int(v) for v in uid.astype(np.int8)) if isinstance(local, tuple) else uid.tobytes()
        with cupy.cuda.Device(device):
            self._comm = nccl.NcclCommunicator(comm.size, uid_arg, comm.rank)
        self.version = nccl.get_version()
        self._types = {
            np.dtype(np.uint8): nccl.NCCL_UINT8,
            np.dtype(np.int32): nccl.NCCL_INT32,
            np.dtype(np.int64): nccl.NCCL_INT64,
            np.dtype(np.uint64): nccl.NCCL_UINT64,
            np.dtype(np.float32): nccl.NCCL_FLOAT32,
            np.dtype(np.float64): nccl.NCCL_FLOAT64,
        }
        self._ops = {"sum": nccl.NCCL_SUM, "min": nccl.NCCL_MIN, "max": nccl.NCCL_MAX}

    def exchange(self, sends, recvs) -> None:
        import cupy

        stream = cupy.cuda.get_current_stream().ptr
        self._nccl.groupStart()
        try:
            for peer, a in recvs:
                if a.size:
                    self._comm.recv(_pointer(a), a.nbytes, self._nccl.NCCL_UINT8, peer, stream)
            for peer, a in sends:
                if a.size:
                    self._comm.send(_pointer(a), a.nbytes, self._nccl.NCCL_UINT8, peer, stream)
        finally:
            self._nccl.groupEnd()

    def allreduce(self, a, op: str = "sum") -> None:
        import cupy

        if a.dtype not in self._types:
            raise ValueError(f"NCCL reduces {', '.join(map(str, self._types))}, not {a.dtype}")
        self._comm.allReduce(
            _pointer(a), _pointer(a), a.size, self._types[a.dtype], self._ops[op], cupy.cuda.get_current_stream().ptr
        )

    def describe(self) -> str:
        v = self.version
        return f"NCCL {v // 10000}.{v // 100 % 100}.{v % 100} (unique id over {self.comm.library})"

    def close(self) -> None:
        self._comm.destroy()


def _pointer(a) -> int:
    if not a.flags.c_contiguous:
        raise ValueError("messages are contiguous arrays")
    return a.data.ptr


def nccl_available() -> tuple[bool, str]:
    try:
        from cupy.cuda import nccl
    except Exception as exc:  # no CuPy, or a CuPy without its NCCL module
        return False, f"no NCCL ({type(exc).__name__})"
    if not getattr(nccl, "available", False):
        return False, "CuPy found no NCCL library (install nvidia-nccl-cu13 or cupy's NCCL)"
    return True, ""


def cuda_aware_mpi() -> bool:
    return any(os.environ.get(name, "").lower() == value for name, value in CUDA_AWARE_ENV.items())


def forced_transport() -> str:
    """``KERNEL_LAB_TRANSPORT``: "" (the best one available) or one of TRANSPORTS; any other value is a
    UsageError, checked when a command starts, not when (or whether) a GPU link is made."""
    forced = os.environ.get("KERNEL_LAB_TRANSPORT", "").strip().lower()
    if forced and forced not in TRANSPORTS:
        raise UsageError(f"KERNEL_LAB_TRANSPORT={forced!r}: choose from {', '.join(TRANSPORTS)}, or unset it")
    return forced


def gpu_link(comm: Comm, device: int):
    """The link for CuPy arrays on ``device``: NCCL, else a CUDA-aware MPI, else through the host."""
    forced = forced_transport()
    nccl_ok, why = nccl_available()
    if nccl_ok and comm.local_size > _gpus():
        nccl_ok, why = False, f"{comm.local_size} ranks share this host's {_gpus()} GPU(s): NCCL needs one GPU a rank"
    if forced == "nccl" and not nccl_ok:
        raise RuntimeError(f"KERNEL_LAB_TRANSPORT=nccl but {why}")
    if (forced or "nccl") == "nccl" and nccl_ok and comm.size > 1:
        return NcclLink(comm, device)
    if forced == "cuda-mpi" or (not forced and cuda_aware_mpi()):
        return CudaMpiLink(comm)
    return StagedLink(comm, "" if forced else why)


def _gpus() -> int:
    import cupy

    return cupy.cuda.runtime.getDeviceCount()
