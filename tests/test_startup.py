"""Start-up stays light: reading the command line compiles nothing and loads no GPU library."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAVY = ("numba", "cupy", "cupyx")


def heavy_modules(importtime_log: str) -> list[str]:
    """The heavy packages named in a ``python -X importtime`` log."""
    names = (line.rpartition("|")[2].strip() for line in importtime_log.splitlines() if line.startswith("import time:"))
    return sorted({name for name in names if name.partition(".")[0] in HEAVY})


def test_help_imports_no_numba_or_cupy():
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "main.py", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert "usage: kernel-lab" in done.stdout
    assert heavy_modules(done.stderr) == []


def test_every_scenes_parser_and_help_import_no_numba_or_cupy():
    """Every scene's parser (view, run, bench and its course commands) and each command's help."""
    probe = (
        "import sys, main\n"
        "for name in main.SCENES:\n"
        "    main.build_parser(name)\n"
        "    for argv in (['run', name, '--help'], ['bench', name, '--help']):\n"
        "        try:\n"
        "            main.main(argv)\n"
        "        except SystemExit:\n"
        "            pass\n"
        "for command in main.course_commands():\n"
        "    try:\n"
        "        main.main([command.name, '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(sorted(m for m in sys.modules if m.partition('.')[0] in {HEAVY!r}), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"
