"""``bench sdh`` with the CPU standing in for the GPU: a kernel that disagrees is reported and timed,
the JSON marks it, and the run exits 1."""

import argparse
import dataclasses
import json
import sys
import types

from sim.cmdline.cli import parsed
from sim.gpu import backend
from sim.gpu.measure import Timing
from sim.sdh import bench, sdh_cpu
from sim.sdh.kernels import KERNELS


def test_a_wrong_kernel_is_timed_marked_and_fails_the_run(monkeypatch, tmp_path, capsys):
    launched = []

    def histogram(points, width, buckets, kernel, block):
        launched.append((kernel, block))
        counts = sdh_cpu.histogram(points, width, buckets)
        if kernel == "tensor":  # a planted wrong count
            counts[1] += 1
            counts[2] -= 1
        return counts, Timing(2.0, 0.01, 12)

    fake = types.SimpleNamespace(KERNELS=KERNELS, KernelError=ValueError, measured_histogram=histogram)
    monkeypatch.setitem(sys.modules, "sim.sdh.gpu", fake)
    monkeypatch.setattr("sim.sdh.gpu", fake, raising=False)
    monkeypatch.setattr(backend, "gpu_status", lambda: backend.GpuStatus(True, "stand-in"))
    monkeypatch.setattr("sim.cmdline.bench.release_memory", lambda: None)
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    parser.add_argument("--json")

    def request(*argv) -> bench.SdhBenchRequest:
        return parsed(bench.SdhBenchRequest, parser.parse_args(argv), scene="sdh", baseline=None)

    out = tmp_path / "sdh.json"
    args = request("-n", "300", "--kernel", "fast,tensor,tiled", "--block", "64", "--json", str(out))
    assert bench.run(args) == 1
    printed = capsys.readouterr()
    assert "kernel tensor block 64 disagrees at n=300" in printed.err
    assert "2 ± 0.01 (12)" in printed.out, "the table: median ± error (runs)"
    results = json.loads(out.read_text())["results"]
    assert [(r["kernel"], r["exact"]) for r in results] == [("fast", True), ("tensor", False), ("tiled", True)]
    assert (results[0]["kernel_ms"], results[0]["kernel_ms_err"], results[0]["repeats"]) == (2.0, 0.01, 12)
    assert bench.run(dataclasses.replace(args, kernel=["fast", "tiled"])) == 0
    launched.clear()  # every kernel at every block, in the order asked
    args = request("-n", "300", "--kernel", "fast,tensor", "--block", "64,128", "--json", str(out))
    assert bench.run(args) == 1
    assert launched == [("fast", 64), ("fast", 128), ("tensor", 64), ("tensor", 128)]
    assert "min_blocks" not in json.loads(out.read_text())["results"][0]


def test_the_command_runs_tensor_kernels_by_name_and_all_means_the_kernels_ranks_can_split():
    from sim.sdh import cli as sdh_cli
    from sim.sdh.kernels import RANK_KERNELS

    parser = argparse.ArgumentParser()
    sdh_cli.add_arguments(parser)

    def request(*argv) -> sdh_cli.SdhRequest:
        return parsed(sdh_cli.SdhRequest, parser.parse_args(argv))

    _, kernels, _ = sdh_cli._checked(request("1000", "500", "--backend", "gpu", "--kernel", "all"))
    assert kernels == list(RANK_KERNELS)
    _, kernels, _ = sdh_cli._checked(request("1000", "500", "--backend", "gpu", "--kernel", "tensor,fast"))
    assert kernels == ["tensor", "fast"]
