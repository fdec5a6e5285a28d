"""Scaling benchmarks over MPI ranks: ``mpiexec -n R python main.py bench SCENE ... --json F``.

One launch measures every rank count 1, 2, 4, ... up to R (and R): the first r ranks form a
communicator of their own while the others wait. Strong scaling: each size of ``--sizes`` is the
whole problem; weak scaling: the smallest size is the work per rank. With one rank the product's
one-process code runs, so the speedups are against what one GPU (or the CPU) does alone.

A scene that splits its work over ranks runs its benchmark's request over them (``sim.contract.Bench.over_ranks``:
a function of the request and the spec); this module holds what every scene's runs share: the
sub-communicators, the efficiencies, the device of each rank and the published report (tables.py).

Records (JSON ``results``): scaling, n, ranks, the total time, speedup and efficiency against one rank,
and ``per_rank``: each rank's own figures.
"""

from __future__ import annotations

import sys

import numpy as np

from sim.cmdline import bench_report
from sim.cmdline.cli import UsageError
from sim.contract import SceneSpec
from sim.gpu.backend import BackendUnavailable, gpu_status
from sim.gpu.cuda import device_properties
from sim.mpi import end, gpu_of
from sim.mpi.links import HostLink, gpu_link
from sim.mpi.tables import Columns, table
from sim.registry import SCENES


def run(request, spec: SceneSpec) -> int:
    """``bench`` over several ranks: the scene's benchmark's scaling runs (``over_ranks``: its request, with
    ``baseline`` and ``json``); a benchmark without any is refused (exit 2)."""
    over_ranks = spec.benchmark().over_ranks
    if over_ranks is None:
        over = " or ".join(f"bench {s.name}" for s in SCENES.values() if s.benchmark().over_ranks)
        raise UsageError(f"bench {spec.name} runs in one process; over MPI ranks: {over}")
    if request.baseline is not None:
        raise UsageError(
            "--baseline compares one process's configurations with an earlier JSON; the scaling "
            "tables over MPI ranks have nothing to compare it with: leave it out"
        )
    return over_ranks(request, spec)


def rank_counts(size: int) -> list[int]:
    """1, 2, 4, ... below ``size``, then ``size``."""
    counts, r = [], 1
    while r < size:
        counts.append(r)
        r *= 2
    return counts + [size]


class Ranks:
    """The sub-communicators (first r ranks) and their links, made once for every rank count."""

    def __init__(self, comm, counts: list[int], gpu: bool, device: int):
        self.comm, self.subs = comm, {}
        for r in counts:
            sub = comm.split(r)  # every rank takes part; the ones past r get None
            if sub is not None:
                self.subs[r] = (sub, gpu_link(sub, device) if gpu and r > 1 else HostLink(sub))
        self.describe = self.subs[counts[-1]][1].describe() if comm.rank < counts[-1] else ""

    def close(self) -> None:
        for sub, link in self.subs.values():
            link.close()
            sub.free()


def efficiency(records: list[dict], key: str) -> None:
    """speedup and efficiency of each record against the one-rank record of its group."""
    for r in records:
        base = next(
            b
            for b in records
            if b["ranks"] == 1
            and b["scaling"] == r["scaling"]
            and (b["n"] == r["n"] if r["scaling"] == "strong" else True)
            and b["config"] == r["config"]
        )
        ratio = base[key] / r[key] if r[key] else 0.0
        r["speedup"] = ratio if r["scaling"] == "strong" else None
        r["efficiency"] = ratio / r["ranks"] if r["scaling"] == "strong" else ratio


def finish(
    request, comm, ranks: Ranks, device: int, gpu: bool, records: list[dict], workload: str, columns: Columns, exact
) -> int:
    """Every rank ends the run; rank 0 adds the efficiencies, publishes the report (its table in the scene's
    ``columns``) and exits 1 unless every record is ``exact`` (the one-rank result)."""
    names = _names(comm, device, gpu)  # (every rank takes part)
    ranks.close()
    end()
    if not comm.is_root:
        return 0
    efficiency(records, columns.time_key)
    report = _report(bench_report.report(workload, records), comm, ranks.describe, names, gpu)
    bench_report.publish(report, table(report, columns), request.json)
    return 0 if all(exact(r) for r in records) else 1


def rank_device(comm, gpu: bool) -> int:
    """This rank's GPU, made current (0 on the CPU); no GPU is a BackendUnavailable."""
    if not gpu:
        return 0
    if not gpu_status().available:
        raise BackendUnavailable(f"the GPU scaling benchmark needs a GPU: {gpu_status().reason}")
    import cupy

    device = gpu_of(comm)
    cupy.cuda.Device(device).use()
    return device


def sync(gpu: bool) -> None:
    """Wait for the current stream (on the GPU) before reading a clock."""
    if gpu:
        import cupy

        cupy.cuda.get_current_stream().synchronize()


def say(text: str) -> None:
    print(f"  {text}", file=sys.stderr, flush=True)


def _report(report: dict, comm, transport: str, names: list[str], gpu: bool) -> dict:
    """The shared report plus where each rank ran."""
    report.update(
        ranks=comm.size,
        hosts=comm.hosts,
        transport=transport,
        rank_devices=[{"rank": q, "device": name} for q, name in enumerate(names)],
    )
    if gpu:
        report["device"] = f"{comm.size} x {names[0]}" if len(set(names)) == 1 else ", ".join(names)
    return report


def _names(comm, device: int, gpu: bool) -> list[str]:
    """Each rank's device name (a collective: every rank calls it)."""
    if not gpu:
        return ["CPU"] * comm.size
    name = device_properties(device)["name"]
    raw = np.frombuffer(name.encode()[:63].ljust(64, b"\0"), np.uint8)
    return [bytes(row).rstrip(b"\0").decode() for row in comm.allgather(raw)]
