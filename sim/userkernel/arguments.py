"""The command lines of your own kernel's commands: the arguments and help texts of ``template``,
``check`` and ``bench --kernel-file``, added to the parser by ``sim.cmdline.arguments``; the request a
parsed one makes (``requests``) is what ``commands`` runs.
"""

from __future__ import annotations

import argparse

from sim.cmdline import cli
from sim.userkernel import check_baseline, sanitize_check

CHECK_REPEATS = 20  # timed launches a case (after a warm-up)
BENCH_REPEATS = 100


def stages_text() -> str:
    """Every replaceable stage, for help texts: "heat step (one explicit heat step ...)"."""
    from sim.registry import SCENES

    found = [f"{s.name} {stage.name} ({stage.summary})" for s in SCENES.values() for stage in s.user_stages]
    return "; ".join(found) or "none"


# --- template -----------------------------------------------------------------------------------------------
def add_template_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("scene", help="the scene whose stage you write")
    p.add_argument("stage", nargs="?", help="the stage (default: the scene's first; the stages are listed above)")
    p.add_argument("-o", "--output", metavar="FILE", help="write it to FILE (default: print it)")
    p.add_argument("--force", action="store_true", help="with -o: replace FILE if it exists")


# --- check and bench: shared --------------------------------------------------------------------------------
def _seconds(text: str) -> float:
    value = cli.number(text, "--time-limit")
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"--time-limit must be above 0 and at most 3600 seconds, got {text}")
    return value


def _add_kernel_arguments(p: argparse.ArgumentParser, repeats: int) -> None:
    p.add_argument("scene", help="the scene whose stage the kernel replaces")
    p.add_argument("--kernel-file", required=True, metavar="FILE", help="your kernel (.cu), read as text")
    p.add_argument("--stage", help="the stage it replaces (default: the scene's first); stages: " + stages_text())
    p.add_argument(
        "--block", type=cli.block, help="CUDA block: threads (256) or a 2D shape (32x8); default the stage's"
    )
    p.add_argument(
        "--repeats",
        type=cli.positive_int,
        default=repeats,
        help=f"timed launches after a warm-up; the median counts (default {repeats})",
    )
    p.add_argument(
        "--time-limit",
        type=_seconds,
        default=5.0,
        metavar="S",
        help="seconds one launch may take before it is stopped (default 5)",
    )


# --- check ------------------------------------------------------------------------------------------------
def add_check_arguments(p: argparse.ArgumentParser) -> None:
    _add_kernel_arguments(p, CHECK_REPEATS)
    p.add_argument(
        "--sizes", type=cli.counts, help="comma-separated item counts (default: the stage's edge sizes and a large one)"
    )
    p.add_argument(
        "--seeds", type=_seeds, default=3, metavar="K", help="random inputs for each size, seeds 0..K-1 (default 3)"
    )
    p.add_argument("--json", metavar="FILE", help="write the results as JSON to FILE, or - for stdout")
    p.add_argument(
        "--baseline",
        metavar="OLD.json",
        type=check_baseline.argument,
        help="an earlier check --json of the same stage: print each case's kernel time and correctness then and now",
    )
    sanitize_check.add_argument(p)
    p.add_argument("--ptx", metavar="FILE", help="write the PTX NVRTC makes of the kernel to FILE")
    p.add_argument(
        "--sass", metavar="FILE", help="write its SASS to FILE (needs cuobjdump or nvdisasm, from the CUDA toolkit)"
    )


def _seeds(text: str) -> int:
    """--seeds K: seeds 0..K-1, each a generator's 32-bit seed (so K is at most 2^32)."""
    count = cli.positive_int(text)
    if count > cli.SEED_LIMIT:
        raise argparse.ArgumentTypeError(
            f"must be at most {cli.SEED_LIMIT:,} (seeds 0..K-1 are 32-bit), got {cli.count_text(count)}"
        )
    return count


# --- bench --kernel-file ------------------------------------------------------------------------------------
def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    """``bench``'s own --json and --quiet come from main.py."""
    _add_kernel_arguments(p, BENCH_REPEATS)
