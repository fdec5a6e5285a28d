"""The suite's own order: tests that make a kernel fault on purpose run after every other test (a fault
makes later GL draws of CUDA-written data stall on NVIDIA's driver; see conftest.fault_tests_last)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_tests_that_make_a_kernel_fault_are_collected_last():
    files = ["tests/test_user_kernels.py", "tests/test_user_live.py", "tests/test_viewer_field.py"]
    listed = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
    ids = [line for line in listed if "::" in line]
    faulting = ["tests/test_user_kernels.py::test_an_illegal_address_is_a_fault_and_the_next_run_works",
                "tests/test_user_live.py::test_a_kernel_that_faults_or_never_returns_leaves_the_scene_on_its_own_kernel"
                "[heat_illegal_address.cu]"]
    assert ids[-2:] == faulting
    viewer = [n for n, i in enumerate(ids) if i.startswith("tests/test_viewer_field.py::")]
    never = "tests/test_user_live.py::test_a_kernel_that_faults_or_never_returns_leaves_the_scene_on_its_own_kernel" \
            "[heat_never_returns.cu]"
    assert viewer and ids.index(never) < viewer[0] and viewer[-1] == len(ids) - 3, "the others keep file order"
