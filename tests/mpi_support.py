"""Programs over MPI ranks, for the tests: the launcher beside this Python (the [mpi] extra's MPICH)
or else the machine's, a clean environment (no rank variables from a launcher the tests may run
under), and Open MPI told that root may run it (GPU machines run tests as root) and that its ranks
start on this host without ssh (a container may have none)."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
MPIEXEC = shutil.which("mpiexec", path=str(pathlib.Path(sys.executable).parent)) or shutil.which("mpiexec")
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "OMPI_", "MPI_LOCAL"))}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CLEAN_ENV.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_plm="^rsh")


def run(argv: list[str], ranks: int | None = None, timeout: int = 120, env: dict | None = None):
    """``argv`` as one plain process (``ranks`` None) or through ``mpiexec -n ranks``; skips the test
    where no mpiexec is found."""
    command = [str(a) for a in argv]
    if ranks is not None:
        if MPIEXEC is None:
            pytest.skip("no mpiexec here (install the [mpi] extra)")
        command = [MPIEXEC, "-n", str(ranks), *command]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env={**CLEAN_ENV, **(env or {})}
    )
    if ranks is not None:  # Open MPI's launcher may end what it forwards with a terminal colour reset
        done.stdout, done.stderr = (ANSI.sub("", text) for text in (done.stdout, done.stderr))
    return done
