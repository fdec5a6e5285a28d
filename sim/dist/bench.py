"""Scaling benchmarks over MPI ranks: ``mpiexec -n R python main.py bench sdh|particles ... --json F``.

One launch measures every rank count 1, 2, 4, ... up to R (and R): the first r ranks form a
communicator of their own while the others wait. Strong scaling: each size of ``--sizes`` is the
whole problem. Weak scaling: the smallest size is the work per rank (particles: n per rank; the
histogram: sqrt(r) times the atoms, the same pairs per rank). With one rank the product's one-process
code runs (the single-GPU histogram launch, ParticlesGpu or the CPU step), so the speedups are
against what one GPU does alone. Every histogram must equal the one-rank histogram; on the CPU every
particle state must be bit-identical to the one-rank state.

Records (JSON ``results``): scaling, n, ranks, the total time, speedup and efficiency against one rank,
and ``per_rank``: each rank's own times (kernel or stages), particles and halo bytes per step.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from sim import resources
from sim.cli import UsageError
from sim.cuda import device_properties
from sim.dist.launch import check_interrupts
from sim.dist.tables import table

STAGE_KEYS = ("forces+move", "bin", "ghosts", "counts", "migrate")
EXCHANGE = ("ghosts", "counts", "migrate")


def rank_counts(size: int) -> list[int]:
    """1, 2, 4, ... below ``size``, then ``size``."""
    counts, r = [], 1
    while r < size:
        counts.append(r)
        r *= 2
    return counts + [size]


def weak_atoms(n: int, ranks: int) -> int:
    """Atoms whose pairs per rank over ``ranks`` equal n's pairs on one: n * sqrt(ranks), rounded."""
    return int(round(n * ranks ** 0.5))


class Ranks:
    """The sub-communicators (first r ranks) and their links, made once for every rank count."""

    def __init__(self, comm, counts: list[int], gpu: bool, device: int):
        from sim.dist.links import HostLink, gpu_link

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
        base = next(b for b in records if b["ranks"] == 1 and b["scaling"] == r["scaling"] and
                    (b["n"] == r["n"] if r["scaling"] == "strong" else True) and b["config"] == r["config"])
        ratio = base[key] / r[key] if r[key] else 0.0
        r["speedup"] = ratio if r["scaling"] == "strong" else None
        r["efficiency"] = ratio / r["ranks"] if r["scaling"] == "strong" else ratio


# --- sdh ----------------------------------------------------------------------------------------------
def sdh(args) -> int:
    """The histogram's scaling tables (called by sim/sdh/bench.py with several ranks or --backend cpu)."""
    from sim import cli, dist
    from sim.dist import sdh as dsdh
    from sim.sdh import data

    comm = dist.world()
    gpu = args.backend == "gpu"
    if not 0 < args.width < float("inf"):
        raise UsageError(f"bucket width must be positive, got {args.width}")
    buckets = data.bucket_count(args.width)
    kernels = cli.choices(args.kernel, _sdh_kernels(), "kernel") if gpu else ["cpu"]
    blocks = args.block if gpu else [0]
    counts = rank_counts(comm.size)
    check_sdh(args, counts, buckets, kernels if gpu else [], len(blocks))
    device = _device(comm, gpu)
    if gpu:
        from sim.sdh.cli import runnable  # all: those that can run at this width (the tensor kernel's counters)

        largest = max(max(args.count), weak_atoms(min(args.count), comm.size))  # the tensor kernel's 32-bit counters
        kernels = runnable(kernels, args.kernel == ["all"], largest, buckets, blocks, device,
                           say=comm.is_root)
    dist.begin()
    ranks = Ranks(comm, counts, gpu, device)
    runs = [("strong", n, r) for n in args.count for r in counts]
    runs += [("weak", min(args.count), r) for r in counts] if comm.size > 1 else []  # one rank: the strong run
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
                        results = [dsdh.histogram(sub, link, points, args.width, buckets, args.backend, kernel, block,
                                                  device, None if gpu else progress) for _ in range(repeats)]
                        if gpu:  # one launch a histogram
                            progress.advance(_root_pairs(n, r) * repeats)
                        result = sorted(results, key=lambda x: x.wall_ms)[len(results) // 2]
                        if comm.is_root:
                            reference = references.setdefault(n, result.counts)
                            exact = bool(np.array_equal(result.counts, reference)
                                         and int(result.counts.sum()) == data.pair_count(n))
                            record = {"scaling": scaling, "n": n, "ranks": r, "w": args.width, "backend": args.backend,
                                      "kernel": kernel if gpu else None, "block": block if gpu else None,
                                      "config": f"{kernel} block {block}" if gpu else "CPU", "total_ms": result.wall_ms,
                                      "pairs_per_s": data.pair_count(n) / (result.wall_ms * 1e-3),
                                      "per_rank": [{"rank": q, "own_ms": float(ms)} for q, ms in
                                                   enumerate(result.rank_ms)],
                                      "histogram_equals_one_rank": exact}
                            _say(f"{scaling} n={n:,} ranks={r} {kernel if gpu else 'cpu'}: {result.wall_ms:.2f} ms"
                                 + ("" if exact else "  HISTOGRAM DIFFERS"))
                    comm.barrier()
                    check_interrupts(comm)
                    if record:
                        records.append(record)
    return _finish(args, comm, ranks, device, gpu, records, "sdh-scaling", "total_ms",
                   lambda r: r["histogram_equals_one_rank"])


def _root_pairs(n: int, ranks: int) -> int:
    """The pairs rank 0 counts in a histogram of n atoms over ``ranks`` ranks (what its bar shows)."""
    from sim.dist import sdh as dsdh

    return dsdh.share_pairs(n, dsdh.shares(n, ranks)[0])


def sdh_repeats(n: int) -> int:
    """Timed runs of each size (the median counts); one where a run is long."""
    from sim.sdh import data

    return 3 if data.pair_count(n) < 1e13 else 1


def check_sdh(args, counts: list[int], buckets: int, kernels: list[str], blocks: int) -> None:
    """Refuse (exit 2) scaling tables whose runs cannot fit or could not finish, by the ``sdh`` command's
    estimate per process: a whole histogram of each size for each rank count (the ranks may share this
    machine), and the weak runs' growing sizes."""
    from sim.sdh.cli import histogram_estimate

    backend = "gpu" if kernels else "cpu"
    runs = [(n, sdh_repeats(n) * len(counts) * blocks) for n in args.count]
    if len(counts) > 1:
        runs += [(weak_atoms(min(args.count), r), sdh_repeats(min(args.count)) * blocks) for r in counts]
    resources.check_in_turn([histogram_estimate(n, buckets, backend, kernels, runs=k, label="bench sdh")
                             for n, k in runs], f"bench sdh: {len(runs)} sizes on the {backend.upper()}")


def _sdh_kernels():
    from sim.sdh.kernels import RANK_KERNELS

    return RANK_KERNELS


# --- particles ------------------------------------------------------------------------------------------
def particles(args, spec) -> int:
    """The particles' scaling tables (called by ``bench`` with several ranks)."""
    from sim import cli, dist
    from sim.backend import choose_backend
    from sim.dist.particles import check_ranks

    if spec.name != "particles":
        raise UsageError(f"bench {spec.name} runs in one process; over MPI ranks: bench particles or bench sdh")
    comm = dist.world()
    backend, _ = choose_backend(args.backend, ("cpu", "gpu"))
    gpu = backend == "gpu"
    sizes = args.count or [spec.preset(spec.default_preset).count]
    knobs = spec.gpu
    variants = cli.choices(args.variant, knobs.variants, "variant") if gpu and args.variant else [knobs.default_variant]
    blocks = (args.block or [knobs.default_block]) if gpu else [knobs.default_block]
    precisions = cli.choices(args.precision, ("fp64", "fp32"), "precision") if gpu and args.precision else ["fp64"]
    if not gpu and (args.variant or args.block or args.precision):
        raise UsageError("--variant, --block and --precision apply to the GPU backend only")
    counts = rank_counts(comm.size)
    for n in sizes:
        check_ranks(n, comm.size, gpu)
    check_particles(args, spec, sizes, counts, gpu, len(variants) * len(blocks) * len(precisions))
    device = _device(comm, gpu)
    dist.begin()
    ranks = Ranks(comm, counts, gpu, device)
    runs = [("strong", n, r) for n in sizes for r in counts] + [("weak", min(sizes), r) for r in counts]
    configs = [(v, b, p) for v in variants for b in blocks for p in precisions]
    drawn: dict[int, tuple] = {}  # each size's starting state, drawn once per rank (100M: 3.2 GB, some 20 s)
    records = []
    with resources.Progress("scaling runs", len(runs) * len(configs), "runs", show=comm.is_root) as progress:
        for variant, block, precision in configs:
            finals: dict[int, np.ndarray] = {}
            for scaling, n0, r in runs:
                n = n0 if scaling == "strong" else n0 * r
                record = None
                if comm.rank < r:
                    record = _particles_run(ranks.subs[r], args, n, gpu, variant, block, precision, device, finals,
                                            drawn)
                comm.barrier()
                check_interrupts(comm)
                if record:
                    record.update(scaling=scaling, config=f"{variant} block {block} {precision}" if gpu else "CPU")
                    records.append(record)
                    _say(f"{scaling} n={n:,} ranks={r} {backend}: {record['step_ms']:.3f} ms/step"
                         + ("" if record["identical_to_one_rank"] in (True, None) else "  STATE DIFFERS"))
                progress.advance(1)
    return _finish(args, comm, ranks, device, gpu, records, "particles-scaling", "step_ms",
                   lambda r: r["identical_to_one_rank"] in (True, None))


def check_particles(args, spec, sizes: list[int], counts: list[int], gpu: bool, configs: int) -> None:
    """Refuse (exit 2) scaling tables whose runs cannot fit or could not finish, by the scene's estimate per
    process: each size's warm-up and timed steps for each rank count and configuration (the ranks may share
    this machine), and the weak runs' growing sizes."""
    steps = args.warmup + args.steps
    runs = [(n, len(counts)) for n in sizes] + [(min(sizes) * r, 1) for r in counts]
    each = [resources.scene_estimate(spec, n, gpu, steps * k * configs) for n, k in runs]
    resources.check_in_turn(each, f"bench {spec.name}: {len(runs)} sizes over {counts[-1]} ranks")


def _finish(args, comm, ranks, device, gpu, records, workload: str, time_key: str, exact) -> int:
    """Every rank ends the run; rank 0 adds the efficiencies, publishes the report and exits 1 unless
    every record is ``exact`` (the one-rank histogram or state)."""
    from sim import bench, dist

    names = _names(comm, device, gpu)  # (every rank takes part)
    ranks.close()
    dist.end()
    if not comm.is_root:
        return 0
    efficiency(records, time_key)
    report = _report(bench.report(workload, records), comm, ranks.describe, names, gpu)
    bench.publish(report, table(report), args.json)
    return 0 if all(exact(r) for r in records) else 1


def _particles_run(sub_link, args, n: int, gpu: bool, variant: str, block: int, precision: str, device: int,
                   finals: dict, drawn: dict) -> dict | None:
    """One timed run on the first r ranks; the record on rank 0 (None elsewhere)."""
    from sim.dist.particles import gather_state, start_rank
    from sim.particles import world
    from sim.particles.init import INITS

    sub, link = sub_link
    steps, warmup = args.steps, args.warmup
    seed = 1 if args.seed is None else args.seed
    init = (args.preset or ["2020"])[0]
    if n not in drawn:
        drawn[n] = INITS[init](n, seed)
    if sub.size == 1:
        return _one_process(args, n, gpu, variant, block, precision, device, finals, drawn[n])
    rank = start_rank(sub, link, init, n, seed, gpu, warmup + steps, variant, precision, block, device, stats=False,
                      drawn=drawn[n])
    for _ in range(warmup):
        rank.step()
    _sync(gpu)
    rank.timer.flush()
    rank.timer.clear()
    sent_before = rank.bytes_sent
    sub.barrier()
    start = time.perf_counter()
    for _ in range(steps):
        rank.step()
    _sync(gpu)
    sub.barrier()
    wall = time.perf_counter() - start
    rank.timer.flush()
    own = [rank.n, (rank.bytes_sent - sent_before) / steps, getattr(rank, "everywhere_steps", 0)]
    own += [rank.timer.median(k) for k in STAGE_KEYS]
    table = sub.allgather(np.array(own, np.float64))
    state = gather_state(sub, rank, n) if not gpu else None
    if not sub.is_root:
        return None
    identical = None if gpu or n not in finals else bool(np.array_equal(state.view(np.uint64),
                                                                         finals[n].view(np.uint64)))
    per_rank = [{"rank": q, "particles": int(row[0]), "halo_bytes_per_step": row[1], "slow_steps": int(row[2]),
                 "stage_ms": dict(zip(STAGE_KEYS, row[3:].tolist(), strict=True)),
                 "exchange_ms": float(sum(row[3 + STAGE_KEYS.index(k)] for k in EXCHANGE))}
                for q, row in enumerate(table)]
    return {"n": n, "ranks": sub.size, "backend": "gpu" if gpu else "cpu", "variant": variant if gpu else None,
            "block": block if gpu else None, "precision": precision if gpu else None, "steps": steps,
            "wall_s": wall, "step_ms": wall / steps * 1e3, "per_rank": per_rank,
            "halo_bytes_per_step": float(sum(p["halo_bytes_per_step"] for p in per_rank)),
            "identical_to_one_rank": identical, "dt": world.DT}


def _one_process(args, n, gpu, variant, block, precision, device, finals, drawn) -> dict:
    """One rank: the product's one-process step (ParticlesGpu, or the CPU step)."""
    from sim.cuda import stage_timer
    from sim.particles import binning_cpu, pipeline_cpu, world

    x, y, vx, vy = (a.copy() for a in drawn)  # the CPU step moves them in place
    size = world.box_size(n)
    timer = stage_timer("gpu" if gpu else "cpu", ("bin", "forces+move"))
    if gpu:
        from sim.particles.gpu import ParticlesGpu

        state = ParticlesGpu(x, y, vx, vy, size, variant, precision, block, stats=False, device=device)
        step = lambda: state.step(timer)  # noqa: E731
    else:
        state = pipeline_cpu.HostParticles(x, y, vx, vy)
        nbins = binning_cpu.bin_count(size)
        step = lambda: pipeline_cpu.step(state, size, nbins, timer)  # noqa: E731
    for _ in range(args.warmup):
        step()
        timer.frame_done()
    _sync(gpu)
    timer.flush()
    timer.clear()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
        timer.frame_done()
    _sync(gpu)
    wall = time.perf_counter() - start
    timer.flush()
    if not gpu:
        finals[n] = np.column_stack([state.x, state.y, state.vx, state.vy])
    stages = {k: timer.median(k) for k in STAGE_KEYS}
    return {"n": n, "ranks": 1, "backend": "gpu" if gpu else "cpu", "variant": variant if gpu else None,
            "block": block if gpu else None, "precision": precision if gpu else None, "steps": args.steps,
            "wall_s": wall, "step_ms": wall / args.steps * 1e3, "halo_bytes_per_step": 0.0,
            "per_rank": [{"rank": 0, "particles": n, "halo_bytes_per_step": 0.0, "slow_steps": 0, "stage_ms": stages,
                          "exchange_ms": 0.0}], "identical_to_one_rank": None if gpu else True, "dt": world.DT}


# --- shared ---------------------------------------------------------------------------------------------
def _device(comm, gpu: bool) -> int:
    if not gpu:
        return 0
    from sim.backend import BackendUnavailable, gpu_status

    if not gpu_status().available:
        raise BackendUnavailable(f"the GPU scaling benchmark needs a GPU: {gpu_status().reason}")
    import cupy

    from sim.dist import gpu_of

    device = gpu_of(comm)
    cupy.cuda.Device(device).use()
    return device


def _sync(gpu: bool) -> None:
    if gpu:
        import cupy

        cupy.cuda.get_current_stream().synchronize()


def _say(text: str) -> None:
    print(f"  {text}", file=sys.stderr, flush=True)


def _report(report: dict, comm, transport: str, names: list[str], gpu: bool) -> dict:
    """The shared report plus where each rank ran."""
    report.update(ranks=comm.size, hosts=comm.hosts, transport=transport,
                  rank_devices=[{"rank": q, "device": name} for q, name in enumerate(names)])
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
