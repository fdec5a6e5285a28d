"""The particles' strong and weak scaling over MPI ranks (``mpiexec -n R python main.py bench particles``: the
benchmark's ``over_ranks``, sim/particles/bench.py).

Strong scaling: each size of ``--sizes`` is the whole box; weak scaling: the smallest size is the
particles per rank. With one rank the product's one-process step runs (ParticlesGpu or the CPU step);
on the CPU every rank count's final state must be bit-identical to the one-rank state. Records add
each rank's particles, halo bytes per step and stage times.
"""

from __future__ import annotations

import time

import numpy as np

from sim import mpi
from sim.cmdline import cli, resources
from sim.cmdline.cli import UsageError
from sim.cmdline.requests import BenchRequest, Block
from sim.contract import SceneSpec
from sim.gpu.backend import choose_backend
from sim.gpu.cuda import stage_timer
from sim.mpi.bench import Ranks, finish, rank_counts, rank_device, say, sync
from sim.mpi.tables import SAME, Columns
from sim.particles import binning_cpu, pipeline_cpu, world
from sim.particles.init import INITS
from sim.particles.ranks import check_ranks, gather_state, start_rank

STAGE_KEYS = ("forces+move", "bin", "ghosts", "counts", "migrate")
EXCHANGE = ("ghosts", "counts", "migrate")


def _rank_line(p: dict) -> str:
    stages = ", ".join(f"{k} {v:.3f}" for k, v in p["stage_ms"].items() if v)
    return f"{p['particles']:,} particles; ms/step: {stages}; exchange {p['exchange_ms']:.3f}"


COLUMNS = Columns(
    "step_ms",
    "ms/step",
    "particles",
    setting=lambda first: f", {first['steps']} steps",
    tail_heading=f" {'halo KB/step':>12} same bits",
    tail=lambda r: f" {r['halo_bytes_per_step'] / 1e3:>12.1f} {SAME[r['identical_to_one_rank']]}",
    rank_line=_rank_line,
)


def scaling(request: BenchRequest, spec: SceneSpec) -> int:
    """The particles' scaling tables (``bench particles`` with several ranks)."""
    comm = mpi.world()
    backend, _ = choose_backend(request.backend, ("cpu", "gpu"))
    gpu = backend == "gpu"
    sizes = request.count or [_default_count(spec)]
    knobs = spec.gpu_knobs
    given_variants, given_precisions = request.variant, request.options.get("precision")
    variants = (
        cli.choices(given_variants, knobs.variants, "variant") if gpu and given_variants else [knobs.default_variant]
    )
    blocks = [_threads(b) for b in request.block or [knobs.default_block]] if gpu else [knobs.default_block]
    precisions = cli.choices(given_precisions, ("fp64", "fp32"), "precision") if gpu and given_precisions else ["fp64"]
    if not gpu and (given_variants or request.block or given_precisions):
        raise UsageError("--variant, --block and --precision apply to the GPU backend only")
    counts = rank_counts(comm.size)
    for n in sizes:
        check_ranks(n, comm.size, gpu)
    check_particles(request, spec, sizes, counts, gpu, len(variants) * len(blocks) * len(precisions))
    device = rank_device(comm, gpu)
    mpi.begin()
    ranks = Ranks(comm, counts, gpu, device)
    runs = [("strong", n, r) for n in sizes for r in counts] + [("weak", min(sizes), r) for r in counts]
    configs = [(v, b, p) for v in variants for b in blocks for p in precisions]
    drawn: dict[int, tuple] = {}  # each size's starting state, drawn once per rank (100M: 3.2 GB, some 20 s)
    records = []
    with resources.Progress("scaling runs", len(runs) * len(configs), "runs", show=comm.is_root) as progress:
        for variant, block, precision in configs:
            finals: dict[int, np.ndarray] = {}
            for kind, n0, r in runs:
                n = n0 if kind == "strong" else n0 * r
                record = None
                if comm.rank < r:
                    record = _run(ranks.subs[r], request, n, gpu, variant, block, precision, device, finals, drawn)
                comm.barrier()
                mpi.check_interrupts(comm)
                if record:
                    record.update(scaling=kind, config=f"{variant} block {block} {precision}" if gpu else "CPU")
                    records.append(record)
                    say(
                        f"{kind} n={n:,} ranks={r} {backend}: {record['step_ms']:.3f} ms/step"
                        + ("" if record["identical_to_one_rank"] in (True, None) else "  STATE DIFFERS")
                    )
                progress.advance(1)
    return finish(
        request,
        comm,
        ranks,
        device,
        gpu,
        records,
        "particles-scaling",
        COLUMNS,
        lambda r: r["identical_to_one_rank"] in (True, None),
    )


def _default_count(spec: SceneSpec) -> int:
    """The default preset's particles: the size of a table given no --sizes."""
    count = spec.preset(spec.default_preset).count
    if count is None:
        raise UsageError(f"preset {spec.default_preset} has no particle count: give the sizes (--sizes)")
    return count


def _threads(block: Block) -> int:
    """A block of the particles' kernels: a thread count (they run one-dimensional blocks)."""
    if not isinstance(block, int):
        raise UsageError(f"a particles block is a thread count such as 256, got {cli.block_text(block)}")
    return block


def check_particles(request: BenchRequest, spec, sizes: list[int], counts: list[int], gpu: bool, configs: int) -> None:
    """Refuse (exit 2) scaling tables whose runs cannot fit or could not finish, by the scene's estimate per
    process: each size's warm-up and timed steps for each rank count and configuration (the ranks may share
    this machine), and the weak runs' growing sizes."""
    steps = request.warmup + request.steps
    runs = [(n, len(counts)) for n in sizes] + [(min(sizes) * r, 1) for r in counts]
    each = [resources.scene_estimate(spec, n, gpu, steps * k * configs) for n, k in runs]
    resources.check_in_turn(each, f"bench {spec.name}: {len(runs)} sizes over {counts[-1]} ranks")


def _run(
    sub_link,
    request: BenchRequest,
    n: int,
    gpu: bool,
    variant: str,
    block: int,
    precision: str,
    device: int,
    finals: dict,
    drawn: dict,
) -> dict | None:
    """One timed run on the first r ranks; the record on rank 0 (None elsewhere)."""
    sub, link = sub_link
    steps, warmup = request.steps, request.warmup
    seed = 1 if request.seed is None else request.seed
    init = (request.preset or ["2020"])[0]
    if n not in drawn:
        drawn[n] = INITS[init](n, seed)
    if sub.size == 1:
        return _one_process(request, n, gpu, variant, block, precision, device, finals, drawn[n])
    rank = start_rank(
        sub, link, init, n, seed, gpu, warmup + steps, variant, precision, block, device, stats=False, drawn=drawn[n]
    )
    for _ in range(warmup):
        rank.step()
    sync(gpu)
    rank.timer.flush()
    rank.timer.clear()
    sent_before, renumbered_before = rank.bytes_sent, getattr(rank, "renumbered_steps", 0)
    sub.barrier()
    start = time.perf_counter()
    for _ in range(steps):
        rank.step()
    sync(gpu)
    sub.barrier()
    wall = time.perf_counter() - start
    rank.timer.flush()
    # (a GPU rank renumbers only some steps; -1: a CPU rank, which bins every step)
    renumbered = rank.renumbered_steps - renumbered_before if hasattr(rank, "renumbered_steps") else -1
    own = [rank.n, (rank.bytes_sent - sent_before) / steps, getattr(rank, "everywhere_steps", 0), renumbered]
    own += [rank.timer.median(k) for k in STAGE_KEYS]
    table = sub.allgather(np.array(own, np.float64))
    state = gather_state(sub, rank, n) if not gpu else None
    if not sub.is_root:
        return None
    identical = None
    if state is not None and n in finals:  # the CPU's state, gathered on rank 0
        identical = bool(np.array_equal(state.view(np.uint64), finals[n].view(np.uint64)))
    per_rank = [
        {
            "rank": q,
            "particles": int(row[0]),
            "halo_bytes_per_step": row[1],
            "slow_steps": int(row[2]),
            "renumbered_steps": int(row[3]) if row[3] >= 0 else None,
            "stage_ms": dict(zip(STAGE_KEYS, row[4:].tolist(), strict=True)),
            "exchange_ms": float(sum(row[4 + STAGE_KEYS.index(k)] for k in EXCHANGE)),
        }
        for q, row in enumerate(table)
    ]
    return {
        "n": n,
        "ranks": sub.size,
        "backend": "gpu" if gpu else "cpu",
        "variant": variant if gpu else None,
        "block": block if gpu else None,
        "precision": precision if gpu else None,
        "steps": steps,
        "wall_s": wall,
        "step_ms": wall / steps * 1e3,
        "per_rank": per_rank,
        "halo_bytes_per_step": float(sum(p["halo_bytes_per_step"] for p in per_rank)),
        "identical_to_one_rank": identical,
        "dt": world.DT,
    }


def _one_process(request: BenchRequest, n, gpu, variant, block, precision, device, finals, drawn) -> dict:
    """One rank: the product's one-process step (ParticlesGpu, or the CPU step)."""
    x, y, vx, vy = (a.copy() for a in drawn)  # the CPU step moves them in place
    size = world.box_size(n)
    timer = stage_timer("gpu" if gpu else "cpu", ("bin", "forces+move"))
    host: pipeline_cpu.HostParticles | None = None  # the CPU's state, compared across rank counts
    if gpu:
        from sim.particles.gpu import ParticlesGpu

        particles = ParticlesGpu(x, y, vx, vy, size, variant, precision, block, stats=False, device=device)
        step = lambda: particles.step(timer)  # noqa: E731
    else:
        host = moved = pipeline_cpu.HostParticles(x, y, vx, vy)
        nbins = binning_cpu.bin_count(size)
        step = lambda: pipeline_cpu.step(moved, size, nbins, timer)  # noqa: E731
    for _ in range(request.warmup):
        step()
        timer.frame_done()
    sync(gpu)
    timer.flush()
    timer.clear()
    start = time.perf_counter()
    for _ in range(request.steps):
        step()
        timer.frame_done()
    sync(gpu)
    wall = time.perf_counter() - start
    timer.flush()
    if host is not None:
        finals[n] = np.column_stack([host.x, host.y, host.vx, host.vy])
    stages = {k: timer.median(k) for k in STAGE_KEYS}
    return {
        "n": n,
        "ranks": 1,
        "backend": "gpu" if gpu else "cpu",
        "variant": variant if gpu else None,
        "block": block if gpu else None,
        "precision": precision if gpu else None,
        "steps": request.steps,
        "wall_s": wall,
        "step_ms": wall / request.steps * 1e3,
        "halo_bytes_per_step": 0.0,
        "per_rank": [
            {
                "rank": 0,
                "particles": n,
                "halo_bytes_per_step": 0.0,
                "slow_steps": 0,
                "stage_ms": stages,
                "exchange_ms": 0.0,
            }
        ],
        "identical_to_one_rank": None if gpu else True,
        "dt": world.DT,
    }
