"""bench/balls_grid_study.py: states dumped from a running block, and the tests a ball its estimate gives for the
grid's pass, against the CPU twin's count and a count over every pair of balls."""

from __future__ import annotations

import bench_scripts
import numpy as np
import pytest
from test_balls_proximity import fast_cloud

from sim.balls import grid_cpu, world
from sim.balls.grid_setup_cpu import grid_shape
from sim.balls.kernels import GRID_CELLS_PER_BALL, grid_max_cells

study = bench_scripts.load("balls_grid_study")
T, M = np.float32(world.PAIR_LIFETIME), np.float32(world.PROXIMITY_MARGIN)


def along_x(vel: np.ndarray) -> np.ndarray:
    """Each ball's speed along x, the velocities a dumped state gives back."""
    out = np.zeros_like(vel)
    out[:, 0] = np.sqrt((vel[:, :3] ** 2).sum(axis=1))
    return out


def test_dump_writes_each_frames_live_balls(tmp_path):
    paths = study.dump(tmp_path, [0, 4], 3000, "cpu")
    assert [p.name for p in paths] == ["state0.npz", "state4.npz"]
    pos, vel = study.load(paths[1])
    assert 0 < len(pos) <= 3000 and np.isfinite(pos).all()
    assert (pos[:, 3] > 0).all() and (vel[:, 0] >= 0).all() and (vel[:, 1:] == 0).all()
    assert vel[:, 0].max() > 0, "the block falls"


def test_where_the_grid_does_not_split_the_estimate_is_the_twins_count():
    rng = np.random.default_rng()
    n = 4000
    pos = np.column_stack([rng.uniform(-20, 20, (n, 3)), rng.uniform(0.5, 1.0, n)]).astype(np.float32)
    vel = along_x(np.column_stack([rng.normal(0, 0.3, (n, 3)), np.zeros(n)]).astype(np.float32))
    estimate = study.estimate(pos, vel, GRID_CELLS_PER_BALL, 4)
    assert not estimate["split"] and estimate["coarse"] == estimate["fast-fine"] == 0
    _, tests, _ = grid_cpu.grid_pass(pos, vel, T, M)
    assert estimate["slow"] * n == pytest.approx(tests, abs=0.5)


def test_where_it_splits_every_candidate_is_counted_once():
    """The estimate's three searches against every pair of balls: a slow pair in neighbouring fine cells, a pair
    with a fast ball in neighbouring coarse cells (from each side), a fast ball's slow ones within its rings."""
    rng = np.random.default_rng()
    pos, vel = fast_cloud(rng, 3000, 40)
    vel = along_x(vel)
    n = len(pos)
    estimate = study.estimate(pos, vel, GRID_CELLS_PER_BALL, 4)
    shape = grid_shape(pos, vel, T, M, grid_max_cells(n), 4)
    assert estimate["split"] and estimate["fast"] == (vel[:, 0] ** 2 > shape.fast2).sum() >= 40
    fast = vel[:, 0] ** 2 > shape.fast2
    fine = study.cells_of(pos[:, :3], shape.origin, shape.cell, shape.dims)
    coarse = study.cells_of(pos[:, :3], shape.origin, shape.coarse, shape.coarse_dims)

    def apart(c, i, j):
        return np.abs(c[i][:, None, :] - c[j][None, :, :]).max(axis=2)

    everyone, slow = np.arange(n), np.flatnonzero(~fast)
    slow_pairs = (apart(fine, slow, slow) <= 1).sum() - len(slow)
    coarse_pairs = (apart(coarse, everyone, np.flatnonzero(fast)) <= 1).sum() - fast.sum()
    reach = M * (pos[fast, 3] + pos[:, 3].max()) + T * (vel[fast, 0] + np.sqrt(shape.fast2))
    rings = np.maximum(np.ceil((reach * np.float32(1.01) + np.float32(1e-6)) / shape.cell), 1)
    fast_fine = (apart(fine, np.flatnonzero(fast), slow) <= rings[:, None]).sum()
    assert estimate["slow"] * n == pytest.approx(slow_pairs, abs=0.5)
    assert estimate["coarse"] * n == pytest.approx(coarse_pairs, abs=0.5)
    assert estimate["fast-fine"] * n == pytest.approx(fast_fine, abs=0.5)


def test_estimate_prints_a_line_a_limit_and_cut(tmp_path, capsys):
    (path,) = study.dump(tmp_path, [2], 3000, "cpu")
    assert study.main(["estimate", str(path), "--cells", "2,4", "--shifts", "8,4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{path}: ") and len(lines) == 5
    assert [line.split(",")[0].strip() for line in lines[1:]] == ["2 cells a ball"] * 2 + ["4 cells a ball"] * 2
