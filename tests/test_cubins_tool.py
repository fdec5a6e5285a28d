"""bench/cubins.py: one digest a build, the same for a source that differs only in comments and line numbers,
different when a line of code changes."""

import bench_scripts
import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")

from sim.gpu import cuda  # noqa: E402
from sim.particles import kernels  # noqa: E402

BUILD = kernels.step("plain", "fp64", 128, False)


def tool():
    return bench_scripts.load("cubins", "cubins_tool")


def test_a_comment_keeps_the_digest_and_a_changed_constant_does_not(tmp_path):
    cubins = tool()
    before = cubins.digest(BUILD)
    assert len(before) == 16 and int(before, 16) >= 0
    text = cuda.source_path(BUILD.source).read_text()
    commented = tmp_path / "commented.cu"
    commented.write_text("// three lines of comment\n// move every line of the kernel\n// down by three\n" + text)
    with cuda.replaced_source(BUILD.source, commented):
        assert cubins.digest(BUILD) == before
    changed = tmp_path / "changed.cu"
    changed.write_text(text.replace("#define DT ((REAL)0.0005)", "#define DT ((REAL)0.001)"))
    with cuda.replaced_source(BUILD.source, changed):
        assert cubins.digest(BUILD) != before


def test_one_line_a_build_in_a_stable_order_and_a_failure_named():
    cubins = tool()
    statistics = kernels.step("plain", "fp64", 128, True)
    found = cubins.lines([statistics, BUILD, BUILD])
    assert found == cubins.lines([BUILD, statistics])
    assert [line.split("  ", 1)[1] for line in found] == [
        "sim/particles/binning.cu -DREAL=double -DBLOCK=128",
        "sim/particles/binning.cu -DREAL=double -DBLOCK=128 -DSTATS",
    ]
    broken = cuda.Build(BUILD.source, (*BUILD.options, "-DREAL=no_such_type"))
    assert cubins.digest(broken).startswith("failed: ")
