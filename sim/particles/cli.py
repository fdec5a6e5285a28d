"""The CS 267 commands: ``particles`` (the course's binaries: prints n, time, absmin, absavg; -o
writes the trajectory file) and ``particles-check`` (the 2020+ checker).

Refused before any work (exit 2): a seed outside 0..2^32-1, an unknown --init, --variant or --precision
when the GPU kernels will not run, an output path sim.cmdline.writer refuses, and a run whose memory or output
size exceeds what this machine has. A run estimated past ``resources.NOTICE_SECONDS`` says how long it
will take and shows progress; Ctrl-C stops it between steps (a step of 2M particles takes about 0.4 s
here) with exit 130, the previous output kept.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

from sim import mpi
from sim.cmdline import cli, interrupts, resources
from sim.cmdline.cli import Command, UsageError
from sim.gpu.cuda import ceil_div
from sim.particles import SPEC, ranks

PARTICLE_STEPS_PER_SECOND_PER_THREAD, GPU_PARTICLE_STEPS_PER_SECOND = SPEC.pace  # the scene's (run and bench)
HOST_BYTES_PER_PARTICLE = 200  # measured peak 185 (state, bins, statistics, initial draws) at 2M
GPU_BYTES_PER_PARTICLE = 100  # measured 90 in CuPy's pool (bench/results/h200-particles-gpu.json)
FRAME_SECONDS_PER_PARTICLE = 0.45e-6  # formatting one 'x y' line
LINE_BYTES = 14  # a little below the 16-17 bytes of a typical 'x y' line
GPU_ONLY = ("variant", "precision")  # arguments that only the GPU kernels take


@dataclass(frozen=True)
class ParticlesRequest:
    """``particles``'s arguments as parsed (``add_particles_arguments``)."""

    n: int
    seed: int
    output: str | None
    steps: int
    backend: str
    init: str
    variant: str | None
    precision: str | None


@dataclass(frozen=True)
class TrajectoryCheckRequest:
    """``particles-check``'s two files."""

    a: str
    b: str


def add_particles_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-n", type=cli.positive_int, default=1000, help="number of particles (default 1000)")
    p.add_argument("-s", "--seed", type=cli.seed, default=1, help="random seed, 0..2^32-1 (default 1)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the course's trajectory file")
    p.add_argument("--steps", type=cli.positive_int, default=1000, help="steps (default 1000)")
    p.add_argument("--backend", default="cpu", choices=("cpu", "gpu", "auto"), help="default cpu")
    p.add_argument("--init", default="2020", help="initial state: 2020 (mt19937) or legacy (drand48)")
    p.add_argument("--variant", help="GPU: force kernel variant, plain (default), tiled, blockscan or texture")
    p.add_argument("--precision", choices=("fp64", "fp32"), help="GPU: float precision (default fp64)")


def _on_gpu(request: ParticlesRequest) -> bool:
    """Will the GPU kernels run? UsageError for GPU-only options that would be ignored."""
    from sim.gpu.backend import gpu_status

    on_gpu = request.backend == "gpu" or (request.backend == "auto" and gpu_status().available)
    given = [name for name in GPU_ONLY if getattr(request, name) is not None]
    if given and not on_gpu:
        why = "" if request.backend == "cpu" else f" (auto chose the CPU: {gpu_status().reason})"
        names = " and ".join(f"--{name}" for name in given)
        raise UsageError(
            f"{names} appl{'ies' if len(given) == 1 else 'y'} to the GPU backend only{why}: "
            "add --backend gpu, or leave " + ("it" if len(given) == 1 else "them") + " out"
        )
    return on_gpu


def estimate(request: ParticlesRequest, on_gpu: bool) -> resources.Estimate:
    """Memory, time and output size of ``particles`` with these arguments on this machine."""
    from sim.particles.world import SAVE_EVERY

    n, steps = request.n, request.steps
    frames = ceil_div(steps, SAVE_EVERY) if request.output is not None else 0
    if on_gpu:
        seconds = n * steps / GPU_PARTICLE_STEPS_PER_SECOND
    else:
        seconds = n * steps / (PARTICLE_STEPS_PER_SECOND_PER_THREAD * resources.cpu_threads())
    seconds += steps * resources.STEP_SECONDS  # what a step costs however few the particles
    where = "the GPU" if on_gpu else "the CPU"
    return resources.Estimate(
        f"particles: {cli.count_text(n)} particles x {cli.count_text(steps)} steps on {where}",
        memory=HOST_BYTES_PER_PARTICLE * n + (100 * n if frames else 0),  # + a frame's text
        seconds=seconds + frames * n * FRAME_SECONDS_PER_PARTICLE,
        gpu_memory=GPU_BYTES_PER_PARTICLE * n if on_gpu else 0,
        disk=frames * n * LINE_BYTES,
        disk_path=request.output,
    )


def run_particles(request: ParticlesRequest) -> int:
    from sim.cmdline.writer import atomic_output, check_target
    from sim.particles.init import INITS
    from sim.registry import create_scene

    init = cli.choice(request.init, tuple(INITS), "init")
    on_gpu = _on_gpu(request)
    if request.output is not None:
        check_target(request.output, "output file")
    need = estimate(request, on_gpu)
    if mpi.world().size > 1:  # mpiexec -n R: the box in strips, one per rank; rank 0 prints and writes
        return ranks.run(request, init, on_gpu, need)
    resources.check(need)
    options = {name: getattr(request, name) for name in GPU_ONLY}
    try:
        scene = create_scene(
            "particles",
            preset=init,
            backend=request.backend,
            n=request.n,
            seed=request.seed,
            **{k: v for k, v in options.items() if v is not None},
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if request.output is not None:  # written to a temporary file, renamed when complete
        with atomic_output(request.output, what="output file") as stream:
            seconds = simulate(scene, request.steps, need, stream)
    else:
        seconds = simulate(scene, request.steps, need)
    stats = scene.stats_per_step
    print(f"n = {scene.n}, simulation time = {seconds:g} seconds, absmin = {stats.absmin:f}, absavg = {stats.absavg:f}")
    for warning in stats.warnings():
        print(warning)
    return 0


def simulate(scene, steps: int, need: resources.Estimate, stream=None) -> float:
    """Run ``steps`` steps, a frame into ``stream`` after every SAVE_EVERY-th; the seconds it took."""
    from sim.particles.output import TrajectoryWriter
    from sim.particles.world import SAVE_EVERY

    writer = TrajectoryWriter(stream, scene.n, scene.size) if stream is not None else None
    start = time.perf_counter()
    with resources.Progress("particles", steps, "steps", show=need.long) as progress:
        for step in range(steps):
            scene.run_frame(1)
            if writer is not None and step % SAVE_EVERY == 0:
                writer.frame(*scene.host_positions())
            progress.advance(1)
            interrupts.check()  # a signal stops the run here, between steps
        scene.finish()
    return time.perf_counter() - start


def add_check_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="A.out")
    p.add_argument("b", metavar="B.out")


def run_check(request: TrajectoryCheckRequest) -> int:
    from sim.particles.output import FormatError, check

    try:
        early, overall, passed = check(request.a, request.b)
    except FormatError as exc:
        raise UsageError(str(exc)) from None
    print(f"mean distance over the first 50 frames: {early:g} (must be < 3e-07)")
    print(f"mean distance over all frames: {overall:g} (must be < 0.025)")
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


COMMANDS = (
    Command(
        "particles",
        "CS 267 particles, course-compatible: prints n, time, absmin, absavg; -o writes frames",
        add_particles_arguments,
        run_particles,
        "Runs the CS 267 particle simulation like the course's starters: prints "
        "'n = N, simulation time = T seconds, absmin = A, absavg = B' and the course's warnings.",
        request=ParticlesRequest,
    ),
    Command(
        "particles-check",
        "the course's checker: compare two -o files",
        add_check_arguments,
        run_check,
        "Mean distance between two trajectory files per frame; passes when the mean over the first 50 "
        "frames < 3e-7 and over all frames < 0.025. Both files are streamed: constant memory.",
        request=TrajectoryCheckRequest,
    ),
)
