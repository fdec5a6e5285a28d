"""Where one GPU's particles step goes, kernel by kernel (plain fp64, block 128, the 2020 preset, statistics off).

    python3 bench/particles_kernels.py times [N]     each kernel of 400 steps timed alone (CUDA events around
                                                    eager launches, a sync a step): the step by row, the step
                                                    through the index right after a binning, and the binning's
                                                    count, scan and place (a step foreseen to bin counts
                                                    itself; a binning it missed counts after); then what a
                                                    step that does not bin pays for the binning's launches,
                                                    replayed as a CUDA graph
    python3 bench/particles_kernels.py binning [N]  one binning after 30 steps, between cudaProfilerStart and
                                                    Stop: under `ncu --profile-from-start off` its five kernels

N defaults to 10M. The frame's own figure (its steps as one CUDA graph) is `main.py bench particles`; these are
the parts, eager launches and their gaps included.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sim import create_scene  # noqa: E402
from sim.gpu.timing import NULL_TIMER  # noqa: E402

STAGES = ("forces+move", "rebin_count", "scan", "rebin_place")


def particles(n: int):
    """The scene's GPU state at n particles, statistics off (as the course's timed runs and the bench)."""
    scene = create_scene("particles", n=n, backend="gpu", variant="plain", block=128)
    if scene.stats_on:
        scene.controls.toggles["statistics"] = False
        scene.toggle_changed("statistics")
    return scene.gpu


def recorded(g, run) -> list:
    """The launches ``run()`` makes through g's kernels, not made: (kernel name, kernel, arguments) each."""
    made, real = [], g.k

    class Recorder(dict):
        def __getitem__(self, name):
            return lambda *args, **options: made.append((name, real[name], args, options))

    g.k = g.count_scan.k = Recorder()
    try:
        run()
    finally:
        g.k = g.count_scan.k = real
    return made


def launches(g) -> dict:
    """A step's launches as callables in order: the step, then the binning's count, scan and place
    (ParticlesGpu.step and _rebin's launches, taken from _rebin on the state as it is when called)."""

    def step():
        fn, grid, block, args = g.prepared_step()
        fn(grid, block, args)
        g.cur = 1 - g.cur

    def part(first: str, last: str):
        def call():
            made = recorded(g, g._rebin)
            names = [launch[0] for launch in made]
            for _, kernel, args, options in made[names.index(first) : names.index(last) + 1]:
                kernel(*args, **options)

        return call

    scan = part("scan_reduce", "scan_tiles")
    return dict(
        zip(STAGES, (step, part("rebin_count", "rebin_count"), scan, part("rebin_place", "rebin_place")), strict=True)
    )


def times(n: int) -> None:
    import cupy

    g = particles(n)
    for _ in range(30):
        g.step(NULL_TIMER)
    calls = launches(g)
    events = [cupy.cuda.Event() for _ in range(len(STAGES) + 1)]
    rows = []
    for _ in range(400):
        before = g.calm.get()
        through, counts = int(before[0]), int(before[4])  # the step reads through the index; it counts
        events[0].record()
        for k, call in enumerate(calls.values()):
            call()
            events[k + 1].record()
        events[-1].synchronize()
        binned = int(g.calm[0].get())
        rows.append(
            (through, counts, binned, *(cupy.cuda.get_elapsed_time(events[k], events[k + 1]) for k in range(4)))
        )
    a = np.array(rows)
    print(f"{n:,} particles, 400 steps, {int(a[:, 2].sum())} binnings; median us a launch (eager)")
    print(f"  {'step':28s}" + "".join(f"{s:>13s}" for s in STAGES))
    kinds = (
        ("by row, not binning", (a[:, 0] == 0) & (a[:, 2] == 0)),
        ("through the index", a[:, 0] == 1),
        ("binning, the step counted", (a[:, 1] == 1) & (a[:, 2] == 1)),
        ("binning, counted after", (a[:, 1] == 0) & (a[:, 2] == 1)),
    )
    for label, rows_of in kinds:
        if rows_of.any():
            medians = np.median(a[rows_of][:, 3:], axis=0) * 1e3
            print(f"  {label + f' ({rows_of.sum()})':28s}" + "".join(f"{m:13.1f}" for m in medians))
    means = a[:, 3:].mean(axis=0) * 1e3
    print(f"  {'mean a step':28s}" + "".join(f"{m:13.1f}" for m in means) + f"   total {means.sum():.1f}")
    idle(g, calls)


def idle(g, calls) -> None:
    """Each of the binning's launches on a step that does not bin, 20 to a CUDA graph, us a launch."""
    import cupy

    stream = cupy.cuda.Stream(non_blocking=True)

    def calm():  # no drift, no count foreseen: the launches find nothing to bin
        g.calm[2:5] = 0
        cupy.cuda.runtime.deviceSynchronize()

    def per_launch(call, repeats=20) -> float:
        calm()
        with stream:
            stream.begin_capture()
            for _ in range(repeats):
                call()
            graph = stream.end_capture()
        graph.launch(stream)
        stream.synchronize()
        begin, end, samples = cupy.cuda.Event(), cupy.cuda.Event(), []
        for _ in range(7):
            calm()
            begin.record(stream)
            graph.launch(stream)
            end.record(stream)
            end.synchronize()
            samples.append(cupy.cuda.get_elapsed_time(begin, end) * 1e3 / repeats)
        return float(np.median(samples))

    print("a step that does not bin, in a CUDA graph: us a launch")
    for name in STAGES[1:]:
        print(f"  {name:28s}{per_launch(calls[name]):13.2f}")
    print(f"  {'the three':28s}{per_launch(g._rebin):13.2f}")


def binning(n: int) -> None:
    import cupy

    g = particles(n)
    for _ in range(30):
        g.step(NULL_TIMER)
    g.forget_numbering()  # the next binning launches bin whatever the drift, counting too
    cupy.cuda.runtime.deviceSynchronize()
    cupy.cuda.profiler.start()
    g._rebin()
    cupy.cuda.runtime.deviceSynchronize()
    cupy.cuda.profiler.stop()
    print("binned:", bool(g.calm[0].get()))


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what not in ("times", "binning"):
        sys.exit(__doc__)
    count = int(float(sys.argv[2])) if len(sys.argv) > 2 else 10_000_000
    (times if what == "times" else binning)(count)
