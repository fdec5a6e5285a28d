"""The balls' grid on the states of a scene as it runs: the tests a ball its pass makes for other cell limits and
fast cuts, estimated on a CPU from states dumped once (on the GPU for a large block).

    python bench/balls_grid_study.py dump OUT_DIR FRAMES [N] [BACKEND]
        run the block preset (N balls, default 1000000, the grid variant, BACKEND gpu) to each of FRAMES
        (comma-separated) and write its live balls to OUT_DIR/state<FRAME>.npz: positions float32, radii and
        speeds float16, 16 bytes a ball, so a 1M-ball state comes back from a device call (16 MiB a file)
    python bench/balls_grid_study.py estimate FILE... [--cells 2,4] [--shifts 8,6,4]
        for each state, cells a ball (the box's limit, kernels.grid_max_cells) and fast cut (FAST_SHIFT): the grid
        the setup chooses (grid_setup_cpu, the GPU's twin) and the tests a ball of its pass, from the cells'
        counts: the slow balls' 27 fine cells, every ball's 27 coarse ones, the fast balls' fine cells within
        their reach (grid.cuh's sweep, grid_fast.cuh). On the 1M block at frames 600-1400 the estimate was within
        1% of the GPU's tests a ball (bench/results/h200-ab-6ac4296-grid-cells.txt says what it chose).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sim.balls import world  # noqa: E402
from sim.balls.grid_setup_cpu import grid_shape  # noqa: E402
from sim.balls.kernels import FAST_SHIFT, GRID_CELLS_PER_BALL  # noqa: E402

T, MARGIN = np.float32(world.PAIR_LIFETIME), np.float32(world.PROXIMITY_MARGIN)


def dump(out: Path, frames: list[int], n: int, backend: str) -> list[Path]:
    from sim.registry import create_scene

    out.mkdir(parents=True, exist_ok=True)
    scene = create_scene("balls", preset="block", n=n, backend=backend, variant="grid")
    written = []
    for frame in range(max(frames) + 1):
        scene.advance_frame()
        if frame in frames:
            pos, vel, _ = scene.state()
            live = pos[:, 1] >= scene.trough.fallen_y
            speed = np.sqrt((vel[live, :3].astype(np.float64) ** 2).sum(axis=1))
            path = out / f"state{frame}.npz"
            half = np.finfo(np.float16).max
            np.savez(
                path,
                xyz=np.ascontiguousarray(pos[live, :3]),
                radius=pos[live, 3].astype(np.float16),
                speed=np.minimum(speed, half).astype(np.float16),
                frame=frame,
            )
            written.append(path)
    return written


def load(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """A dumped state as the twin takes it: pos (n, 4) with radii, vel (n, 4) with each speed along x."""
    with np.load(path) as state:
        xyz, radius, speed = state["xyz"], state["radius"], state["speed"]
    pos = np.column_stack([xyz, radius.astype(np.float32)])
    vel = np.zeros((len(xyz), 4), np.float32)
    vel[:, 0] = speed
    return pos, vel


def box_sums(counts: np.ndarray, cells: np.ndarray, r: int | np.ndarray) -> np.ndarray:
    """The counts over the (2r + 1)^3 cells around each of ``cells`` (z, y, x), clamped to the grid."""
    table = np.zeros(tuple(d + 1 for d in counts.shape), np.int64)
    table[1:, 1:, 1:] = counts.cumsum(0).cumsum(1).cumsum(2)
    top = np.array(counts.shape) - 1
    r = np.asarray(r)[..., None] if np.ndim(r) else r
    lo, hi = np.clip(cells - r, 0, top), np.clip(cells + r, 0, top) + 1
    (z0, y0, x0), (z1, y1, x1) = lo.T, hi.T
    return (
        table[z1, y1, x1] - table[z0, y1, x1] - table[z1, y0, x1] - table[z1, y1, x0]
        + table[z0, y0, x1] + table[z0, y1, x0] + table[z1, y0, x0] - table[z0, y0, x0]
    )  # fmt: skip


def cells_of(xyz: np.ndarray, origin: np.ndarray, side, dims: np.ndarray) -> np.ndarray:
    """Each ball's cell as cell_of clamps it, (z, y, x)."""
    return np.clip(np.floor((xyz - origin) / side).astype(np.int64), 0, dims - 1)[:, ::-1]


def counts_of(cells: np.ndarray, dims: np.ndarray) -> np.ndarray:
    counts = np.zeros(tuple(dims[::-1]), np.int64)
    np.add.at(counts, tuple(cells.T), 1)
    return counts


def estimate(pos: np.ndarray, vel: np.ndarray, cells_a_ball: int, fast_shift: int) -> dict:
    """The grid's choice and its pass's tests a ball, by search: slow (sweep), coarse and fast-fine (sweep_fast)."""
    n = len(pos)
    shape = grid_shape(pos, vel, T, MARGIN, max(cells_a_ball * n, 64), fast_shift)
    speed2 = vel[:, 0] * vel[:, 0]
    fast = speed2 > shape.fast2 if shape.split else np.zeros(n, bool)
    fine = cells_of(pos[:, :3], shape.origin, shape.cell, shape.dims)
    fine_counts = counts_of(fine[~fast], shape.dims)
    tests = {"slow": (box_sums(fine_counts, fine[~fast], 1) - 1).sum(), "coarse": 0, "fast-fine": 0}
    if shape.split:
        coarse = cells_of(pos[:, :3], shape.origin, shape.coarse, shape.coarse_dims)
        tests["coarse"] = (box_sums(counts_of(coarse[fast], shape.coarse_dims), coarse, 1) - fast).sum()
        # a fast ball's reach of the slow balls, as sweep_fast rounds it up to cells
        reach = MARGIN * (pos[fast, 3] + pos[:, 3].max()) + T * (np.sqrt(speed2[fast]) + np.sqrt(shape.fast2))
        rings = np.maximum(np.ceil((reach * np.float32(1.01) + np.float32(1e-6)) / shape.cell), 1).astype(np.int64)
        tests["fast-fine"] = box_sums(fine_counts, fine[fast], np.minimum(rings, shape.dims.max())).sum()
    return {
        "cell": float(shape.cell),
        "split": shape.split,
        "fast": int(fast.sum()),
        **{k: float(v) / n for k, v in tests.items()},
        "tests/ball": sum(float(v) for v in tests.values()) / n,
    }


def numbers(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="balls_grid_study.py", description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    d = verbs.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("frames", type=numbers)
    d.add_argument("n", type=int, nargs="?", default=1000000)
    d.add_argument("backend", nargs="?", default="gpu", choices=("gpu", "cpu"))
    e = verbs.add_parser("estimate")
    e.add_argument("files", type=Path, nargs="+")
    e.add_argument("--cells", type=numbers, default=[GRID_CELLS_PER_BALL])
    e.add_argument("--shifts", type=numbers, default=[FAST_SHIFT])
    args = parser.parse_args(argv)
    if args.verb == "dump":
        for path in dump(args.out, args.frames, args.n, args.backend):
            print(path)
        return 0
    for path in args.files:
        pos, vel = load(path)
        print(f"{path}: {len(pos)} live balls")
        for cells in args.cells:
            for shift in args.shifts:
                e = estimate(pos, vel, cells, shift)
                print(
                    f"  {cells} cells a ball, cut 1/{1 << shift:<4d} cell {e['cell']:6.3f} fast {e['fast']:8d} "
                    f"slow {e['slow']:7.1f} coarse {e['coarse']:6.1f} fast-fine {e['fast-fine']:6.1f} "
                    f"tests/ball {e['tests/ball']:7.1f}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
