"""The CS 267 commands: ``particles`` (the course's binaries: prints n, time, absmin, absavg; -o
writes the trajectory file) and ``particles-check`` (the 2020+ checker)."""

from __future__ import annotations

import argparse
import time

from sim import cli
from sim.cli import Command, UsageError


def add_particles_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-n", type=cli.positive_int, default=1000, help="number of particles (default 1000)")
    p.add_argument("-s", "--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the course's trajectory file")
    p.add_argument("--steps", type=cli.positive_int, default=1000, help="steps (default 1000)")
    p.add_argument("--backend", default="cpu", choices=("cpu", "gpu", "auto"), help="default cpu")
    p.add_argument("--init", default="2020", help="initial state: 2020 (mt19937) or legacy (drand48)")
    p.add_argument("--variant", default="plain", help="GPU variant: plain, tiled or blockscan")
    p.add_argument("--precision", default="fp64", choices=("fp64", "fp32"), help="GPU precision")


def run_particles(args) -> int:
    from sim import create_scene
    from sim.particles.output import TrajectoryWriter
    from sim.particles.world import SAVE_EVERY
    from sim.writer import atomic_output, check_target

    if args.output is not None:
        check_target(args.output, "output file")
    try:
        scene = create_scene("particles", preset=args.init, backend=args.backend, n=args.n, seed=args.seed,
                             variant=args.variant, precision=args.precision)
    except ValueError as exc:
        raise UsageError(str(exc)) from None

    def simulate(writer=None) -> float:
        start = time.perf_counter()
        for step in range(args.steps):
            scene.step()
            if writer is not None and step % SAVE_EVERY == 0:
                writer.frame(*scene.host_positions())
        scene.finish()
        return time.perf_counter() - start

    if args.output is not None:  # written to a temporary file, renamed when complete
        with atomic_output(args.output, what="output file") as stream:
            seconds = simulate(TrajectoryWriter(stream, scene.n, scene.size))
    else:
        seconds = simulate()
    stats = scene.stats_per_step
    print(f"n = {scene.n}, simulation time = {seconds:g} seconds, absmin = {stats.absmin:f}, "
          f"absavg = {stats.absavg:f}")
    for warning in stats.warnings():
        print(warning)
    return 0


def add_check_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="A.out")
    p.add_argument("b", metavar="B.out")


def run_check(args) -> int:
    from sim.particles.output import FormatError, check

    try:
        early, overall, passed = check(args.a, args.b)
    except FormatError as exc:
        raise UsageError(str(exc)) from None
    print(f"mean distance over the first 50 frames: {early:g} (must be < 3e-07)")
    print(f"mean distance over all frames: {overall:g} (must be < 0.025)")
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


COMMANDS = (
    Command("particles", "CS 267 particles, course-compatible: prints n, time, absmin, absavg; -o writes frames",
            add_particles_arguments, run_particles,
            "Runs the CS 267 particle simulation like the course's starters: prints "
            "'n = N, simulation time = T seconds, absmin = A, absavg = B' and the course's warnings."),
    Command("particles-check", "the course's checker: compare two -o files", add_check_arguments, run_check,
            "Mean distance between two trajectory files per frame; passes when the mean over the first 50 "
            "frames < 3e-7 and over all frames < 0.025."),
)
