"""bench/regress.py's steps and headlines: they come from the scenes (SceneSpec.gate), the same as when they were
listed here; bench/regress.sh runs each with its folders."""

from __future__ import annotations

import json
import os
import sys

import pytest
from gate_reports import ROOT, M, regress

FIGURES = [
    "balls 10M grid, ms/step",
    "particles 10M plain fp64, ms/step",
    "sdh 512000 tensor, ms",
    "heat 10000^2 temporal k8 32x4, ms/step",
    "durbin 200000 persistent-grid, us/step",
    "durbin 100000x32 batched-register, ms",
    "frame 1M balls 1920x1080 panel open, ms",
    "frame 1M balls 1920x1080 panel open picking, ms",
    "frame heat 10000^2 1920x1080 panel open, ms",
]
FRAME_BALLS = "$py -m viewer.bench.frame -n 1000000 --size 1920x1080 --backend gpu --headless --frames 60 --pick"
FRAME_HEAT = (
    "$py -m viewer.bench.frame --scene heat --preset large -n 100000000 --size 1920x1080 --backend gpu "
    "--headless --frames 60"
)
STEPS = [
    (
        "balls 10M grid",
        "$py main.py bench balls --backend gpu --preset block -n 10000000 --variant grid --block 128 "
        '--steps 120 --json "$out/balls.json"',
    ),
    (
        "peer balls 10M",
        '$py bench/peer.py "$peers/peer_balls.py" --sizes 10000000 --steps 60 --json "$out/peer-balls.json"',
    ),
    (
        "particles 10M plain",
        "$py main.py bench particles --backend gpu --sizes 10000000 --variant plain --block 128 "
        '--steps 1000 --json "$out/particles.json"',
    ),
    (
        "peer particles 10M",
        '$py bench/peer.py "$peers/peer_particles.py" --sizes 10000000 --methods counting '
        '--steps 1000 --json "$out/peer-particles.json"',
    ),
    ("sdh 512000 tensor", '$py main.py bench sdh -n 512000 --kernel tensor --block 256 --json "$out/sdh.json"'),
    (
        "peer sdh 512000",
        '$py bench/peer.py "$peers/peer_sdh.py" --sizes 512000 --naive-max 0 --json "$out/peer-sdh.json"',
    ),
    (
        "heat 10000^2 temporal",
        '$py main.py bench heat --sizes 10000 --kernel temporal --block 32x4 --k 8 --steps 200 --json "$out/heat.json"',
    ),
    ("peer heat 10000^2", '$py bench/peer.py "$peers/peer_heat.py" --n 10000 --json "$out/peer-heat.json"'),
    (
        "durbin 200000 and 100000x32",
        '$py main.py bench durbin --sizes 200000 --kernel persistent-grid --batch 100000x32 --json "$out/durbin.json"',
    ),
    (
        "peer durbin",
        '$py bench/peer.py "$peers/peer_durbin.py" --sizes 200000 --scipy-max 0 --json "$out/peer-durbin.json"',
    ),
    ("frame 1M balls 1920x1080, picking (run 1)", FRAME_BALLS + ' --json "$out/frame.json"'),
    ("frame heat 10000^2 1920x1080 (run 1)", FRAME_HEAT + ' --json "$out/frame-heat.json"'),
    ("frame 1M balls 1920x1080, picking (run 2)", FRAME_BALLS + ' --json "$out/frame-run2.json"'),
    ("frame heat 10000^2 1920x1080 (run 2)", FRAME_HEAT + ' --json "$out/frame-heat-run2.json"'),
]


def test_the_scenes_declare_the_same_figures_and_steps():
    assert [h.name for h in regress.HEADLINES] == FIGURES
    assert regress.commands() == STEPS
    files = {h.name: (h.workload, h.file, h.peer_file) for h in regress.HEADLINES}
    assert files["balls 10M grid, ms/step"] == ("balls", "balls", "peer-balls.json")
    assert files["durbin 100000x32 batched-register, ms"] == ("durbin", "durbin", "peer-durbin.json")
    assert files["frame 1M balls 1920x1080 panel open picking, ms"] == ("frame", "frame", None)
    assert files["frame heat 10000^2 1920x1080 panel open, ms"] == ("frame", "frame-heat", None)


def test_commands_prints_a_label_and_a_tab_before_each_step(capsys):
    assert regress.main(["--commands"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [tuple(line.split("\t")) for line in lines] == STEPS


def test_a_record_without_options_ran_with_the_default_precision():
    """The particles figure is fp64's: a record that names no options (from before the option) counts as
    fp64, an fp32 record never does; the durbin batch figure is the record's seconds in ms."""
    particles = next(h for h in regress.HEADLINES if h.name.startswith("particles"))
    record = {"scene": "particles", "n": 10 * M, "backend": "gpu", "variant": "plain", "block": 128, "step_ms": 0.5}
    assert particles.pick(record) and particles.pick(record | {"options": {"precision": "fp64"}})
    assert not particles.pick(record | {"options": {"precision": "fp32"}})
    assert not particles.pick(record | {"block": 256})
    batch = next(h for h in regress.HEADLINES if h.name.startswith("durbin 100000x32"))
    assert batch.ms({"s": 0.25}) == pytest.approx(250.0) and batch.err({"s_err": 0.002}) == pytest.approx(2.0)
    assert batch.peer_ms({"s": 0.5}) == pytest.approx(500.0)
    assert batch.peer_pick({"batch": 100000, "order": 32, "method": "cupy-vectorised"})


STUB = """#!{python}
import json, os, sys
if sys.argv[1:2] == ["bench/regress.py"]:
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
with open({log!r}, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
"""


def test_regress_sh_runs_every_step_with_its_folders(tmp_path):
    """bench/regress.sh runs bench/regress.py --commands' steps in order, $out and $peers filled in (quoted: a
    space in a folder's name stays one argument), then the table: nothing measured here, exit 2."""
    import subprocess

    log, stub = tmp_path / "argv.jsonl", tmp_path / "python"
    stub.write_text(STUB.format(python=sys.executable, log=str(log)))
    stub.chmod(0o755)
    out, peers = tmp_path / "out dir", tmp_path / "peer scripts"
    peers.mkdir()
    done = subprocess.run(
        ["bash", os.path.join(ROOT, "bench", "regress.sh"), str(out), str(peers)],
        env=os.environ | {"PYTHON": str(stub)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    ran = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(ran) == len(STEPS)
    assert ran[0][:3] == ["main.py", "bench", "balls"] and ran[0][-2:] == ["--json", f"{out}/balls.json"]
    assert ran[1][:2] == ["bench/peer.py", f"{peers}/peer_balls.py"]
    assert ran[-1][:2] == ["-m", "viewer.bench.frame"] and ran[-1][-1] == f"{out}/frame-heat-run2.json"
    text = (out / "regress-log.txt").read_text()
    assert [line[3 : line.index(" (at ")] for line in text.splitlines() if line.startswith("== ")] == [
        label for label, _ in STEPS
    ] + ["table"]
    assert "not measured: balls 10M grid, ms/step" in text
