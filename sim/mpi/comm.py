"""Ranks and the host-side messages between them: MPI through mpi4py, or one process.

A launcher (``mpiexec -n R``) starts R copies of kernel-lab and tells each its rank in the
environment; ``launched_size()`` reads that without importing mpi4py, so a plain ``python main.py``
never loads an MPI library. ``world()`` is this process's communicator: ``Comm`` (one rank, every
operation a copy) or ``MpiComm`` (mpi4py, imported only when the launch has more than one rank).

Every operation takes and returns numpy arrays and uses mpi4py's buffer forms (Allreduce, Alltoall,
Gatherv, Isend/Irecv on arrays), never the pickling ones.
"""

from __future__ import annotations

import functools
import os
import warnings

import numpy as np

# What the launchers set: MPICH/Hydra (and Intel MPI, Slurm's PMI), Open MPI, MVAPICH
ENV_SIZE = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")
ENV_RANK = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK")
OPS = ("sum", "min", "max")


class LaunchError(RuntimeError):
    """The environment names several ranks, but this process is not one of them (no launcher, another MPI,
    no mpi4py): one line, exit 2."""


def _env_name(names: tuple[str, ...]) -> str | None:
    """The first of ``names`` set to a whole number."""
    return next((name for name in names if os.environ.get(name, "").strip().isdigit()), None)


def _env_int(names: tuple[str, ...], default: int) -> int:
    name = _env_name(names)
    return int(os.environ[name]) if name else default


def launched_size() -> int:
    """Ranks the launcher started (1 without a launcher)."""
    return max(1, _env_int(ENV_SIZE, 1))


def launched_rank() -> int:
    return _env_int(ENV_RANK, 0)


class Comm:
    """One rank: the communicator of a plain run. Its methods mean what MpiComm's do with one rank."""

    rank = 0
    size = 1
    local_rank = 0  # rank among the ranks of this host: picks the GPU
    local_size = 1
    hosts = 1
    library = "one process"

    @property
    def is_root(self) -> bool:
        return self.rank == 0

    def barrier(self) -> None:
        pass

    def allreduce(self, a: np.ndarray, op: str = "sum") -> np.ndarray:
        _check_op(op)
        return np.array(a, copy=True)

    def allgather(self, a: np.ndarray) -> np.ndarray:
        """(size, *a.shape): every rank's ``a``, in rank order, on every rank."""
        return np.ascontiguousarray(a)[None].copy()

    def alltoall(self, a: np.ndarray) -> np.ndarray:
        """``a[q]`` goes to rank q; returns what each rank sent here, by sender."""
        return np.array(a, copy=True)

    def gatherv(self, a: np.ndarray) -> np.ndarray | None:
        """Every rank's rows of ``a`` (same trailing shape and dtype), concatenated in rank order on
        rank 0; None on the others."""
        return np.array(a, copy=True)

    def bcast(self, a: np.ndarray) -> np.ndarray:
        """Rank 0's ``a`` (an array of the same shape and dtype on every rank), filled in place."""
        return a

    def exchange(self, sends: list[tuple[int, np.ndarray]], recvs: list[tuple[int, np.ndarray]]) -> None:
        """Point-to-point messages, all at once: each ``(peer, array)`` of ``sends`` to that peer,
        each of ``recvs`` filled from that peer. Messages between two ranks pair up in list order;
        both sides must agree on the sizes. Empty arrays are skipped on both sides."""
        own = [a for peer, a in sends if peer == self.rank and a.size]
        mine = [a for peer, a in recvs if peer == self.rank and a.size]
        if len(own) != len(mine) or any(peer != self.rank for peer, a in (*sends, *recvs) if a.size):
            raise ValueError("one rank has no peers")
        for src, dst in zip(own, mine, strict=True):
            dst[...] = src

    def split(self, size: int) -> Comm | None:
        """The first ``size`` ranks as a communicator of their own (None on the other ranks)."""
        if size != 1:
            raise ValueError(f"one rank cannot make a communicator of {size}")
        return self

    def free(self) -> None:
        pass

    def abort(self, code: int) -> None:
        os._exit(code)


def _check_op(op: str) -> None:
    if op not in OPS:
        raise ValueError(f"unknown reduction {op!r} (choose from {', '.join(OPS)})")


class MpiComm(Comm):
    """Ranks through mpi4py (its buffer forms only)."""

    def __init__(self, comm, mpi):
        self._c = comm
        self._mpi = mpi
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        node = comm.Split_type(mpi.COMM_TYPE_SHARED, key=self.rank)
        self.local_rank, self.local_size = node.Get_rank(), node.Get_size()
        node.Free()
        leaders = self.allreduce(np.array([1 if self.local_rank == 0 else 0], np.int64))
        self.hosts = int(leaders[0])
        version = mpi.Get_library_version().strip().splitlines()
        self.library = " ".join(version[0].split()) if version else "MPI"  # "MPICH Version: 5.0.2"

    def _op(self, op: str):
        _check_op(op)
        return {"sum": self._mpi.SUM, "min": self._mpi.MIN, "max": self._mpi.MAX}[op]

    def barrier(self) -> None:
        self._c.Barrier()

    def allreduce(self, a: np.ndarray, op: str = "sum") -> np.ndarray:
        a = np.ascontiguousarray(a)
        out = np.empty_like(a)
        self._c.Allreduce(a, out, op=self._op(op))
        return out

    def allgather(self, a: np.ndarray) -> np.ndarray:
        a = np.ascontiguousarray(a)
        out = np.empty((self.size, *a.shape), a.dtype)
        self._c.Allgather(a, out)
        return out

    def alltoall(self, a: np.ndarray) -> np.ndarray:
        a = np.ascontiguousarray(a)
        if a.shape[0] != self.size:
            raise ValueError(f"alltoall needs one entry per rank ({self.size}), got {a.shape[0]}")
        out = np.empty_like(a)
        self._c.Alltoall(a, out)
        return out

    def gatherv(self, a: np.ndarray) -> np.ndarray | None:
        a = np.ascontiguousarray(a)
        rows = self.allgather(np.array([a.shape[0]], np.int64))[:, 0]
        per_row = int(np.prod(a.shape[1:], dtype=np.int64))
        if not self.is_root:
            self._c.Gatherv(a, None, root=0)
            return None
        out = np.empty((int(rows.sum()), *a.shape[1:]), a.dtype)
        self._c.Gatherv(a, (out, rows * per_row), root=0)
        return out

    def bcast(self, a: np.ndarray) -> np.ndarray:
        self._c.Bcast(a, root=0)
        return a

    def exchange(self, sends, recvs) -> None:
        sent: dict[int, int] = {}
        got: dict[int, int] = {}
        requests = []
        for peer, a in recvs:  # the k-th message between two ranks carries tag k
            if a.size:
                requests.append(self._c.Irecv(_contiguous(a), source=peer, tag=got.setdefault(peer, 0)))
                got[peer] += 1
        for peer, a in sends:
            if a.size:
                requests.append(self._c.Isend(_contiguous(a), dest=peer, tag=sent.setdefault(peer, 0)))
                sent[peer] += 1
        self._mpi.Request.Waitall(requests)

    def split(self, size: int) -> Comm | None:
        if not 1 <= size <= self.size:
            raise ValueError(f"cannot take {size} of {self.size} ranks")
        sub = self._c.Split(0 if self.rank < size else self._mpi.UNDEFINED, key=self.rank)
        if sub == self._mpi.COMM_NULL:
            return None
        return MpiComm(sub, self._mpi)

    def free(self) -> None:
        if self._c != self._mpi.COMM_WORLD:
            self._c.Free()

    def abort(self, code: int) -> None:
        self._mpi.COMM_WORLD.Abort(code)


def _contiguous(a: np.ndarray) -> np.ndarray:
    if not a.flags.c_contiguous:
        raise ValueError("messages are contiguous arrays (a slice of rows, not of columns)")
    return a


@functools.lru_cache(maxsize=1)
def world() -> Comm:
    """This process's communicator; mpi4py is imported only when the launch has several ranks."""
    if launched_size() <= 1:
        return Comm()
    said = f"{_env_name(ENV_SIZE)}={launched_size()}"
    try:
        with warnings.catch_warnings():  # another MPI's launcher: mpi4py's warning, then the mismatch below
            warnings.simplefilter("ignore", RuntimeWarning)
            from mpi4py import MPI
    except ImportError as exc:
        raise LaunchError(
            f"{said} says this is rank {launched_rank()} of {launched_size()} of an MPI launch, but "
            f"mpi4py cannot be imported ({exc}): install the [mpi] extra"
        ) from None
    comm = MpiComm(MPI.COMM_WORLD, MPI)
    if comm.size != launched_size():
        raise LaunchError(
            f"{said} says this is one of {launched_size()} MPI ranks, but MPI has {comm.size}: start "
            f"it with mpiexec -n {launched_size()} from mpi4py's MPI (the [mpi] extra's is "
            f".venv/bin/mpiexec), or unset {_env_name(ENV_SIZE)}"
        )
    return comm
