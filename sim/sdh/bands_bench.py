"""The histogram's strong and weak scaling over MPI ranks (``mpiexec -n R python main.py bench sdh``), and
``bench sdh --backend cpu``'s table in one process.

Strong scaling: each size of ``--sizes`` is the whole histogram; weak scaling: sqrt(r) times the
smallest size's atoms, the same pairs per rank. With one rank the single-GPU histogram launch (or the
CPU histogram) runs. Every histogram must equal the one-rank histogram.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim import mpi
from sim.cmdline import cli, resources
from sim.cmdline.cli import UsageError
from sim.mpi.bench import Ranks, finish, rank_counts, rank_device, say
from sim.mpi.tables import SAME, Columns
from sim.sdh import bands, data
from sim.sdh.cli import histogram_estimate, runnable
from sim.sdh.kernels import RANK_KERNELS

if TYPE_CHECKING:  # the request type only: no import cycle
    from sim.sdh.bench import SdhBenchRequest

COLUMNS = Columns(
    "total_ms",
    "total ms",
    "atoms",
    setting=lambda first: f", W = {first['w']:g}",
    tail_heading=" exact",
    tail=lambda r: f" {SAME[r['histogram_equals_one_rank']]}",
    rank_line=lambda p: f"own part {p['own_ms']:.3f} ms",
)


def run(request: SdhBenchRequest) -> int:
    """The histogram's scaling tables (arguments checked by sim/sdh/bench.py)."""
    comm = mpi.world()
    backend, width = request.backend, request.width
    gpu = backend == "gpu"
    if not 0 < request.width < float("inf"):
        raise UsageError(f"bucket width must be positive, got {request.width}")
    buckets = data.bucket_count(request.width)
    kernels = cli.choices(request.gpu_kernels, RANK_KERNELS, "kernel") if gpu else ["cpu"]
    blocks = request.gpu_blocks if gpu else [0]
    counts = rank_counts(comm.size)
    check_sdh(request, counts, buckets, kernels if gpu else [], len(blocks))
    device = rank_device(comm, gpu)
    if gpu:  # all: those that can run at this width and size (the tensor kernel's 32-bit counters)
        largest = max(max(request.count), weak_atoms(min(request.count), comm.size))
        kernels = runnable(kernels, request.kernel == ["all"], largest, buckets, blocks, device, say=comm.is_root)
    mpi.begin()
    ranks = Ranks(comm, counts, gpu, device)
    runs = [("strong", n, r) for n in request.count for r in counts]
    runs += [("weak", min(request.count), r) for r in counts] if comm.size > 1 else []  # one rank: the strong run
    records = []
    sizes = [(n0 if scaling == "strong" else weak_atoms(n0, r), r) for scaling, n0, r in runs]
    pairs = len(kernels) * len(blocks) * sum(_root_pairs(n, r) * sdh_repeats(n) for n, r in sizes)
    with resources.Progress("scaling runs (rank 0's pairs)", pairs, "pairs", show=comm.is_root) as progress:
        for kernel in kernels:
            for block in blocks:
                references: dict[int, np.ndarray] = {}
                for scaling, n0, r in runs:
                    n = n0 if scaling == "strong" else weak_atoms(n0, r)
                    record = None
                    if comm.rank < r:
                        sub, link = ranks.subs[r]
                        points = data.atoms(n)
                        repeats = sdh_repeats(n)
                        results = [
                            bands.histogram(
                                sub,
                                link,
                                points,
                                width,
                                buckets,
                                backend,
                                kernel,
                                block,
                                device,
                                None if gpu else progress,
                            )
                            for _ in range(repeats)
                        ]
                        if gpu:  # one launch a histogram
                            progress.advance(_root_pairs(n, r) * repeats)
                        result = sorted(results, key=lambda x: x.wall_ms)[len(results) // 2]
                        if comm.is_root:
                            reference = references.setdefault(n, result.counts)
                            exact = bool(
                                np.array_equal(result.counts, reference)
                                and int(result.counts.sum()) == data.pair_count(n)
                            )
                            record = {
                                "scaling": scaling,
                                "n": n,
                                "ranks": r,
                                "w": width,
                                "backend": backend,
                                "kernel": kernel if gpu else None,
                                "block": block if gpu else None,
                                "config": f"{kernel} block {block}" if gpu else "CPU",
                                "total_ms": result.wall_ms,
                                "pairs_per_s": data.pair_count(n) / (result.wall_ms * 1e-3),
                                "per_rank": [{"rank": q, "own_ms": float(ms)} for q, ms in enumerate(result.rank_ms)],
                                "histogram_equals_one_rank": exact,
                            }
                            say(
                                f"{scaling} n={n:,} ranks={r} {kernel if gpu else 'cpu'}: {result.wall_ms:.2f} ms"
                                + ("" if exact else "  HISTOGRAM DIFFERS")
                            )
                    comm.barrier()
                    mpi.check_interrupts(comm)
                    if record:
                        records.append(record)
    return finish(
        request, comm, ranks, device, gpu, records, "sdh-scaling", COLUMNS, lambda r: r["histogram_equals_one_rank"]
    )


def _root_pairs(n: int, ranks: int) -> int:
    """The pairs rank 0 counts in a histogram of n atoms over ``ranks`` ranks (what its bar shows)."""
    return bands.share_pairs(n, bands.shares(n, ranks)[0])


def sdh_repeats(n: int) -> int:
    """Timed runs of each size (the median counts); one where a run is long."""
    return 3 if data.pair_count(n) < 1e13 else 1


def check_sdh(request: SdhBenchRequest, counts: list[int], buckets: int, kernels: list[str], blocks: int) -> None:
    """Refuse (exit 2) scaling tables whose runs cannot fit or could not finish, by the ``sdh`` command's
    estimate per process: a whole histogram of each size for each rank count (the ranks may share this
    machine), and the weak runs' growing sizes."""
    backend = "gpu" if kernels else "cpu"
    runs = [(n, sdh_repeats(n) * len(counts) * blocks) for n in request.count]
    if len(counts) > 1:
        runs += [(weak_atoms(min(request.count), r), sdh_repeats(min(request.count)) * blocks) for r in counts]
    resources.check_in_turn(
        [histogram_estimate(n, buckets, backend, kernels, runs=k, label="bench sdh") for n, k in runs],
        f"bench sdh: {len(runs)} sizes on the {backend.upper()}",
    )


def weak_atoms(n: int, ranks: int) -> int:
    """Atoms whose pairs per rank over ``ranks`` equal n's pairs on one: n * sqrt(ranks), rounded."""
    return int(round(n * ranks**0.5))
