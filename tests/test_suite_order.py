"""The suite's own selection: tests that make a kernel fault on purpose run only in a pytest run of their own
(``pytest -m gpu_fault``, bench/device.sh's last call), never inside a run of other tests (a fault makes later
GL draws of CUDA-written data stall on NVIDIA's driver; see conftest.deselect_fault_tests); every other test
keeps its file's order, and no hook orders the suite."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = ["tests/test_user_kernels_heat.py", "tests/test_user_live.py"]
FAULTING = [
    "tests/test_user_kernels_heat.py::test_an_illegal_address_is_a_fault_and_the_next_run_works",
    "tests/test_user_live.py::test_a_kernel_that_faults_or_never_returns_leaves_the_scene_on_its_own_kernel"
    "[heat_illegal_address.cu]",
]


def collected(*args: str) -> list[str]:
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [line for line in listed if "::" in line]


@pytest.mark.parametrize("select", [[], ["-m", "gpu"]], ids=["all", "gpu"])
def test_a_run_of_other_tests_leaves_the_faulting_ones_out_and_keeps_file_order(select):
    ids = collected(*select, *FILES)
    assert ids and not set(FAULTING) & set(ids)
    never = (
        "tests/test_user_live.py::test_a_kernel_that_faults_or_never_returns_leaves_the_scene_on_its_own_kernel"
        "[heat_never_returns.cu]"
    )
    assert never in ids, "its sibling that does not fault stays"
    files = [i.partition("::")[0] for i in ids]
    assert files == sorted(files, key=FILES.index), "file by file, in the order given"


def test_the_faulting_tests_are_collected_when_asked_for():
    assert collected("-m", "gpu_fault", *FILES) == FAULTING
    assert collected(FAULTING[1]) == FAULTING[1:], "or named by node id"
