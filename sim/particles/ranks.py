"""The CS 267 particles over ranks: ``mpiexec -n R python main.py particles ...``.

Every rank draws the starter's whole initial state (the draws are sequential) and keeps the
particles of its strip (strips.py); the steps run on each rank's share (ranks_cpu.py on the
CPU, ranks_gpu.py on the GPU); every tenth step's frame is gathered to rank 0 and written in id
order; the distance statistics are reduced over the ranks per step and folded as one process
folds them. Rank 0 prints the course's line. On the CPU the positions are bit-identical to one
process's; absmin is exact and absavg is the same sum taken in another order (last bits only).
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from sim import mpi
from sim.cmdline import cli, resources
from sim.cmdline.cli import UsageError
from sim.cmdline.writer import atomic_output
from sim.gpu.backend import BackendUnavailable, gpu_status
from sim.mpi.links import HostLink, gpu_link
from sim.particles import world
from sim.particles.distances import DistanceStats
from sim.particles.kernels import VARIANTS
from sim.particles.output import TrajectoryWriter
from sim.particles.ranks_gpu import GHOST_ROWS, GpuRank, bins_per_side, rows_of
from sim.particles.strips import Strips

if TYPE_CHECKING:  # the request type only: no import cycle
    from sim.particles.cli import ParticlesRequest


def strip_rows(n: int, on_gpu: bool) -> int:
    """Bin rows of the box of ``n`` particles on the backend (the strips' unit)."""
    from sim.particles.binning_cpu import bin_count  # (numba: loaded when a CPU rank runs)

    size = world.box_size(n)
    return bins_per_side(size) if on_gpu else bin_count(size)


def check_ranks(n: int, ranks: int, on_gpu: bool) -> None:
    """Refused before any rank starts: a box with fewer bin rows than the ranks need (a CPU rank one; a GPU
    rank with neighbours GHOST_ROWS, the rows of each neighbour it reads)."""
    rows = strip_rows(n, on_gpu)
    each = GHOST_ROWS if on_gpu and ranks > 1 else 1
    if rows < ranks * each:
        need = "at least one" if each == 1 else f"at least {each}: a GPU rank reads {each} of each neighbour's rows"
        raise UsageError(
            f"{n:,} particles make {rows} bin rows, fewer than the {ranks} ranks need (each takes {need}): use "
            "fewer ranks or more particles"
        )


def start_rank(
    comm,
    link,
    init: str,
    n: int,
    seed: int,
    on_gpu: bool,
    steps: int,
    variant: str = "plain",
    precision: str = "fp64",
    block: int = 256,
    device: int = 0,
    stats: bool = True,
    drawn=None,
):
    """This rank's share of the starter's initial state (``drawn``: (x, y, vx, vy) already drawn), ready to
    step (the CPU step always measures the distance statistics; the GPU's only with ``stats``)."""
    from sim.particles.init import INITS  # (numba: loaded when ranks start)
    from sim.particles.ranks_cpu import CpuRank, bin_rows

    x, y, vx, vy = drawn if drawn is not None else INITS[init](n, seed)
    size = world.box_size(n)
    rows = rows_of(y, size, precision) if on_gpu else bin_rows(y, size, strip_rows(n, False))
    mine = np.flatnonzero(Strips(strip_rows(n, on_gpu), comm.size).owners(rows) == comm.rank)
    share = (x[mine], y[mine], vx[mine], vy[mine], mine)
    del x, y, vx, vy
    if on_gpu:
        return GpuRank(comm, link, *share, size, steps, variant, precision, block, stats, device)
    return CpuRank(comm, *share, size)


def gather_state(comm, rank, n: int, columns: int = 5) -> np.ndarray | None:
    """(n, columns - 1) float64 on rank 0: x, y (and vx, vy) of every particle in id order."""
    mine = rank.state()[:columns]
    rows = np.column_stack([mine[0].astype(np.float64), *mine[1:]])
    every = comm.gatherv(rows)
    if every is None:
        return None
    out = np.empty((n, columns - 1))
    out[every[:, 0].astype(np.int64)] = every[:, 1:]
    return out


def run_steps(
    comm, rank, steps: int, n: int, frames: bool = False, writer=None, progress=None
) -> tuple[float, np.ndarray]:
    """``steps`` steps; with ``frames``, every rank's positions gathered after every SAVE_EVERY-th step and
    written by rank 0's ``writer``. (seconds, per-step statistics (steps, 3): closest pair, sum of pair
    distances, pairs, over all ranks)."""
    local = np.empty((steps, 3))
    comm.barrier()
    start = time.perf_counter()
    for step in range(steps):
        stats = rank.step()
        if stats is not None:
            local[step] = stats
        if frames and step % world.SAVE_EVERY == 0:
            xy = gather_state(comm, rank, n, columns=3)
            if xy is not None:
                writer.frame(xy[:, 0], xy[:, 1])
        if progress is not None:
            progress.advance(1)
        mpi.check_interrupts(comm)
    if hasattr(rank, "step_stats"):  # kept on the device until now
        local = rank.step_stats()
        import cupy

        cupy.cuda.get_current_stream().synchronize()
    comm.barrier()
    seconds = time.perf_counter() - start
    total = np.column_stack(
        [
            comm.allreduce(np.ascontiguousarray(local[:, 0]), "min"),
            comm.allreduce(np.ascontiguousarray(local[:, 1]), "sum"),
            comm.allreduce(np.ascontiguousarray(local[:, 2]), "sum"),
        ]
    )
    return seconds, total


def fold(per_step: np.ndarray):
    """The starters' absmin / absavg from per-step (closest pair, sum, pairs), in step order."""
    stats = DistanceStats()
    for dmin, dsum, pairs in per_step.tolist():
        stats.add_step(dmin, dsum, int(pairs))
    return stats


def run(request: ParticlesRequest, init: str, on_gpu: bool, need: resources.Estimate) -> int:
    """``particles`` on every rank of an MPI launch: the one-process output, printed and written by rank 0."""
    comm = mpi.world()
    resources.check(dataclasses.replace(need, seconds=need.seconds / (comm.size if on_gpu else comm.hosts)))
    check_ranks(request.n, comm.size, on_gpu)
    options: dict[str, Any] = {}
    device = 0
    if on_gpu:
        if not gpu_status().available:
            raise BackendUnavailable(f"GPU backend unavailable: {gpu_status().reason}")
        options = {
            "variant": cli.choice(request.variant or "plain", VARIANTS, "variant"),
            "precision": request.precision or "fp64",
        }
        import cupy

        device = mpi.gpu_of(comm)
        cupy.cuda.Device(device).use()
    mpi.begin()
    link = gpu_link(comm, device) if on_gpu else HostLink(comm)
    root = comm.is_root
    if root:
        where = f"GPU {device} of each" if on_gpu else "the CPU"
        print(
            f"  {comm.size} ranks on {comm.hosts} host(s), {where}, strips of bin rows; messages: {link.describe()}",
            file=sys.stderr,
            flush=True,
        )
    rank = start_rank(comm, link, init, request.n, request.seed, on_gpu, request.steps, device=device, **options)
    output = atomic_output(request.output, what="output file") if request.output is not None and root else None
    with output or contextlib.nullcontext() as stream:
        writer = TrajectoryWriter(stream, request.n, world.box_size(request.n)) if stream is not None else None
        with resources.Progress("particles", request.steps, "steps", show=need.long and root) as progress:
            seconds, per_step = run_steps(
                comm, rank, request.steps, request.n, request.output is not None, writer, progress
            )
    link.close()
    mpi.end()
    if root:
        stats = fold(per_step)
        print(
            f"n = {request.n}, simulation time = {seconds:g} seconds, absmin = {stats.absmin:f}, "
            f"absavg = {stats.absavg:f}"
        )
        for warning in stats.warnings():
            print(warning)
    return 0
