"""Scaling benchmarks over MPI ranks: the tables and the JSON (per-rank times, totals, speedup and
efficiency), run on CPU ranks here and on GPUs by pytest -m gpu."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import sys
import types

import pytest
from mpi_support import run

from sim.heat.bench import BENCH as HEAT_BENCH

ROOT = pathlib.Path(__file__).resolve().parent.parent


def bench(*args, ranks: int = 1, timeout: int = 240, env=None):
    return run([sys.executable, ROOT / "main.py", "bench", *args], ranks if ranks > 1 else None, timeout, env)


def test_particles_strong_and_weak_scaling_on_cpu_ranks(tmp_path):
    path = tmp_path / "p.json"
    done = bench("particles", "--sizes", "2000,4000", "--steps", "20", "--warmup", "2", "--json", str(path), ranks=3)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(path.read_text())
    assert report["workload"] == "particles-scaling" and report["ranks"] == 3 and report["hosts"] == 1
    results = report["results"]
    strong = [(r["n"], r["ranks"]) for r in results if r["scaling"] == "strong"]
    assert strong == [(2000, 1), (2000, 2), (2000, 3), (4000, 1), (4000, 2), (4000, 3)]
    assert [(r["n"], r["ranks"]) for r in results if r["scaling"] == "weak"] == [(2000, 1), (4000, 2), (6000, 3)]
    for r in results:
        assert len(r["per_rank"]) == r["ranks"] and sum(p["particles"] for p in r["per_rank"]) == r["n"]
        assert r["step_ms"] > 0 and r["efficiency"] > 0
        assert (r["halo_bytes_per_step"] > 0) == (r["ranks"] > 1)
        if r["scaling"] == "strong":
            assert r["identical_to_one_rank"] is True, "CPU ranks: the one-rank state, bit for bit"
            assert r["speedup"] == pytest.approx(r["efficiency"] * r["ranks"])
        if r["ranks"] > 1:
            assert all(p["stage_ms"]["forces+move"] > 0 and p["exchange_ms"] > 0 for p in r["per_rank"])
            assert all(p["renumbered_steps"] is None for p in r["per_rank"]), "CPU ranks bin every step"
    assert "strong scaling, n = 4,000" in done.stdout and "weak scaling" in done.stdout
    assert done.stdout.count("particles-scaling on") == 1, "one table, from rank 0"


def test_sdh_scaling_on_cpu_ranks(tmp_path):
    path = tmp_path / "s.json"
    done = bench("sdh", "--backend", "cpu", "--sizes", "3000", "--json", str(path), ranks=2)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(path.read_text())["results"]
    assert [(r["scaling"], r["n"], r["ranks"]) for r in results] == [
        ("strong", 3000, 1),
        ("strong", 3000, 2),
        ("weak", 3000, 1),
        ("weak", 4243, 2),
    ]
    assert all(r["histogram_equals_one_rank"] for r in results)
    assert all(len(r["per_rank"]) == r["ranks"] and r["total_ms"] > 0 for r in results)


def test_sdh_cpu_scaling_in_one_process_is_the_one_rank_row():
    done = bench("sdh", "--backend", "cpu", "--sizes", "2000")
    assert done.returncode == 0, done.stderr
    assert "strong scaling, n = 2,000" in done.stdout and "weak" not in done.stdout


def test_scenes_without_a_distributed_step_are_refused_over_ranks():
    done = bench("balls", ranks=2)
    assert done.returncode == 2 and done.stderr.count("runs in one process") == 1


def _two_ranks(monkeypatch):
    """``main`` as under mpiexec -n 2 (its communicator's size alone: the scene's bench is replaced)."""
    import main

    monkeypatch.setattr(main, "world", lambda: types.SimpleNamespace(size=2))
    return main


def declared(args, spec) -> int:
    """Scaling runs a benchmark declares (``HEAT_OVER_RANKS``)."""
    print(f"scaling {spec.name} over ranks, sizes {args.sizes}")
    return 7


HEAT_OVER_RANKS = dataclasses.replace(HEAT_BENCH, over_ranks=declared)  # the heat scene's benchmark, with scaling runs


def test_bench_over_ranks_runs_the_scaling_runs_the_benchmark_declares(monkeypatch, capsys):
    from sim import registry

    main = _two_ranks(monkeypatch)
    monkeypatch.setitem(
        registry.SCENES, "heat", dataclasses.replace(registry.SCENES["heat"], bench="test_mpi_bench:HEAT_OVER_RANKS")
    )
    assert main.main(["bench", "heat", "--sizes", "64"]) == 7
    assert "scaling heat over ranks, sizes [64]" in capsys.readouterr().out
    assert (
        main.main(
            ["bench", "heat", "--sizes", "64", "--baseline", str(ROOT / "bench" / "results" / "h100-heat-c1220c0.json")]
        )
        == 2
    )
    assert "the scaling tables over MPI ranks have nothing to compare it with" in capsys.readouterr().err
    assert main.main(["bench", "balls"]) == 2  # declares none: refused, naming those that do
    assert (
        "bench balls runs in one process; over MPI ranks: bench particles or bench sdh or bench heat"
        in capsys.readouterr().err
    )


def test_density_shares_the_particles_physics_but_not_their_scaling_runs(monkeypatch, capsys):
    main = _two_ranks(monkeypatch)
    assert main.main(["bench", "density"]) == 2
    assert "bench density runs in one process; over MPI ranks: bench particles or bench sdh" in capsys.readouterr().err


@pytest.mark.gpu
def test_gpu_scaling_tables(tmp_path):
    import cupy

    env = {"KERNEL_LAB_TRANSPORT": "host"} if cupy.cuda.runtime.getDeviceCount() < 2 else None
    sdh = bench("sdh", "--sizes", "200000", "--kernel", "fast", "--json", str(tmp_path / "s.json"), ranks=2, env=env)
    assert sdh.returncode == 0, sdh.stderr[-3000:]
    assert all(r["histogram_equals_one_rank"] for r in json.loads((tmp_path / "s.json").read_text())["results"])
    particles = bench(
        "particles",
        "--backend",
        "gpu",
        "--sizes",
        "300000",
        "--steps",
        "50",
        "--json",
        str(tmp_path / "p.json"),
        ranks=2,
        env=env,
    )
    assert particles.returncode == 0, particles.stderr[-3000:]
    results = json.loads((tmp_path / "p.json").read_text())["results"]
    assert all(sum(p["particles"] for p in r["per_rank"]) == r["n"] for r in results)
    ranked = [p for r in results if r["ranks"] > 1 for p in r["per_rank"]]
    assert ranked and all(0 < p["renumbered_steps"] <= 50 for p in ranked), "renumbered on some of the 50 steps"
