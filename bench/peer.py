"""Run a peer yardstick with its timing done by the product's harness (sim.gpu.measure).

    python3 bench/peer.py PEERS_DIR/peer_heat.py --n 10000 --json OUT.json   (the peer's own options)

The peers time themselves (a few repeats, or one pair of events around many steps); run through here,
each of their timings is the harness's instead: warm-up, then repeats until the median's 95% interval is
under 1% or the time budget ends, the L2 cache flushed between repeats where the working set fits, so
that the product and its peers are timed the same way. How each peer is wrapped:

- ``timed(fn, reps)`` (heat, sdh: the median of CUDA-event timings) and ``timed(fn)`` (durbin: one run by
  the host clock, ``fn`` waits for the device) are replaced by the harness on the same clock. Durbin's
  two-kernel recursion accumulates into its buffers, so a second run would not solve the same system: it
  keeps a single run (no error).
- ``bench(n, ...)`` (balls, particles: events around ``steps`` steps) runs as the peer wrote it (its stage
  split, its checks), then a fresh simulation of the same size is warmed up and its steps are timed by
  the harness, one step a repeat; ``ms_per_step`` and the rates are the harness's (the peer's own figure
  stays as ``own_ms_per_step``).

The peer's JSON then gains ``<figure>_err`` and ``repeats`` for each timed row, as the product's records.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sim.gpu import measure as harness  # noqa: E402

CLOCKS = {"events": lambda: harness.EventClock(), "host": lambda: harness.HostClock()}
STEP_WARMUP = 10  # the peers' own warm-up steps


@dataclass(frozen=True)
class Wrap:
    """How a peer is timed: ``timed`` replaced (``clock``; rows matched in order after ``skip`` timings that
    are not rows) or ``bench`` replaced (``make`` builds its simulation; ``rate`` the per-second figure)."""

    figures: tuple[str, ...]
    clock: str = "events"
    skip: int = 0
    make: str | None = None
    rate: str | None = None


PEERS = {
    "peer_heat.py": Wrap(("ms_per_step",), skip=1),  # the first timing is the copy rate
    "peer_sdh.py": Wrap(("kernel_ms",)),
    "peer_durbin.py": Wrap(("s", "us_per_step"), clock="host"),
    "peer_balls.py": Wrap(("ms_per_step",), make="balls", rate="ball_steps_per_s"),
    "peer_particles.py": Wrap(("ms_per_step", "s_per_1000_steps"), make="particles", rate="particle_steps_per_s"),
}


def load(path: str):
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def l2_flush(module, wait: bool):
    """The harness's L2 flush for what the peer holds on the device (CuPy's pool), or None; with ``wait`` (a
    host clock) the flush is waited for, so that it stays out of the time."""
    flush = harness.l2_flush(module.cp.get_default_memory_pool().used_bytes())
    if flush is None or not wait:
        return flush

    def flush_and_wait() -> None:
        flush()
        module.cp.cuda.get_current_stream().synchronize()

    return flush_and_wait


def replace_timed(module, wrap: Wrap, timings: list) -> None:
    """The peer's ``timed`` as the harness: the same return value (its median), every timing kept."""

    def timed(fn, reps=None):
        once = getattr(fn, "__name__", "") == "run" and wrap.clock == "host"  # durbin's two-kernel: not repeatable
        timing, last = harness.measure_returning(
            fn,
            CLOCKS[wrap.clock](),
            flush=l2_flush(module, wrap.clock == "host"),
            warmup=0 if once else 1,
            max_repeats=1 if once else harness.MAX_REPEATS,
        )
        timings.append(timing)
        if wrap.clock == "host":  # durbin: (what fn returned, seconds)
            return last, timing.median * 1e-3
        return timing.median

    module.timed = timed


def replace_bench(module, wrap: Wrap) -> None:
    """The peer's ``bench`` as written, then its steps timed again by the harness on a fresh simulation."""
    original = module.bench

    def bench(n, *args, **kwargs):
        record = original(n, *args, **kwargs)
        sim = (
            module.Balls(*module.scene(n))
            if wrap.make == "balls"
            else module.Particles(*module.init_state(n), record["method"])
        )
        for _ in range(STEP_WARMUP):
            sim.step()
        timing = harness.measure(
            sim.step, CLOCKS[wrap.clock](), flush=l2_flush(module, False), warmup=0, min_repeats=STEP_WARMUP
        )
        record["own_ms_per_step"] = record["ms_per_step"]
        record.update(timing.fields("ms_per_step"))
        if "s_per_1000_steps" in record:
            record.update(s_per_1000_steps=timing.median, s_per_1000_steps_err=timing.error)
        record[wrap.rate] = n / (timing.median * 1e-3)
        print(f"harness: n={n:,} {timing.text()} ms/step (the peer's own {record['own_ms_per_step']:.4g})", flush=True)
        del sim
        module.cp.get_default_memory_pool().free_all_blocks()
        return record

    module.bench = bench


def add_errors(path: str, wrap: Wrap, timings: list) -> None:
    """The peer's JSON rows, in order, matched to the harness's timings: ``<figure>_err`` and ``repeats``."""
    with open(path) as f:
        report = json.load(f)
    rows = [r for r in report.get("results", []) if any(f in r for f in wrap.figures)]
    for row, timing in zip(rows, timings[wrap.skip :], strict=False):
        for figure in wrap.figures:
            if figure in row and isinstance(row[figure], (int, float)):
                row[f"{figure}_err"] = None if timing.error is None else row[figure] * timing.error / timing.median
        row["repeats"] = timing.repeats
    report["timed_by"] = "sim.gpu.measure"
    with open(path, "w") as f:
        json.dump(report, f, indent=1)


def json_target(args: list[str]) -> str | None:
    for i, arg in enumerate(args):
        if arg == "--json" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--json="):
            return arg.split("=", 1)[1]
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(f"usage: bench/peer.py PEER.py [the peer's options]; peers: {', '.join(PEERS)}", file=sys.stderr)
        return 2
    path, args = argv[0], argv[1:]
    wrap = PEERS.get(os.path.basename(path))
    if wrap is None:
        print(f"bench/peer.py: {path}: not a peer this harness knows ({', '.join(PEERS)})", file=sys.stderr)
        return 2
    module = load(path)
    timings: list[harness.Timing] = []
    if wrap.make:
        replace_bench(module, wrap)
    else:
        replace_timed(module, wrap, timings)
    saved, sys.argv = sys.argv, [path, *args]
    try:
        code = module.main() or 0
    finally:
        sys.argv = saved
    target = json_target(args)
    if timings and target and os.path.exists(target):
        add_errors(target, wrap, timings)
    return code


if __name__ == "__main__":
    sys.exit(main())
