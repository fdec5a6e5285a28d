"""The speed-of-light models against Nsight Compute: each GPU stage's headline configuration, one stage
window profiled, the model's DRAM bytes, arithmetic and warp instructions (where it counts them) beside what
ncu counted.

    python3 bench/ncu_models.py list                  the stages bench/ncu_models.sh profiles, one a line
    python3 bench/ncu_models.py metrics [--no-tensor] ncu's --metrics (without the DMMA count)
    python3 bench/ncu_models.py run STAGE DIR         (under ncu) build, warm up, profile one window of STAGE
                                                      between cudaProfilerStart/Stop; DIR/STAGE.model.json
    python3 bench/ncu_models.py table DIR             model vs ncu per stage (DIR/STAGE.csv from ncu)

The stages and their configurations are the scenes' own (``SceneSpec.ncu``: each scene's ``bench_cases``). A
window is the first time the stage runs in a frame (a balls proximity pass, one particles step, one
histogram, one heat frame of k steps), or a whole frame where the scene adds the stage's time itself
(durbin's recursion), or what the case profiles itself (the batched Durbin solve: one call of the batched
kernel).
"""

from __future__ import annotations

import csv
import json
import sys
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sim.contract import NcuCase, SceneSpec, load  # noqa: E402
from sim.registry import SCENES  # noqa: E402

# "<scene>.<case>" -> (the scene, its case), the scenes in the registry's order
HEADLINES: dict[str, tuple[SceneSpec, NcuCase]] = {
    f"{spec.name}.{case.id}": (spec, case) for spec in SCENES.values() if spec.ncu for case in load(spec.ncu)
}
SASS = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
DURATION = "gpu__time_duration.sum"
# How busy the kernels kept the limits a stage can reach: the schedulers' issue slots (every instruction,
# arithmetic or not, takes one), DRAM, and L1's data pipe (one wavefront a clock an SM: a shared-memory access
# takes one wavefront per bank conflict round, a global load one per 128-byte line its lanes touch). The nearest
# to 100% is the stage's real limit; all low means latency (dependent loads, a chain of steps). Averaged over
# the kernels, weighted by their time.
BUSY = {
    "issue": "smsp__issue_active.avg.pct_of_peak_sustained_elapsed",
    "dram": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1": "l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed",
}
# L1's data-pipe wavefronts: all, and those of shared-memory atomics (a histogram's counters)
WAVEFRONTS = ("l1tex__data_pipe_lsu_wavefronts.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum")
FLOP_METRICS = {  # ncu's per-thread SASS counts of each kind and their FLOP: an FMA is 2, a DMMA m8n8k4 512
    "fp32": ((SASS.format("fadd"), 1), (SASS.format("fmul"), 1), (SASS.format("ffma"), 2)),
    "fp64": ((SASS.format("dadd"), 1), (SASS.format("dmul"), 1), (SASS.format("dfma"), 2)),
    "fp64-tensor": (("sm__inst_executed_pipe_tensor_op_dmma.sum", 512),),
    "int": ((SASS.format("integer"), 1),),
}


def metrics(tensor: bool = True) -> str:
    """The metrics ncu collects (bench/ncu_models.sh passes them to --metrics); without ``tensor`` the DMMA
    count is left out (for an ncu that does not know it)."""
    names = ["dram__bytes_read.sum", "dram__bytes_write.sum", "smsp__inst_executed.sum", DURATION, *BUSY.values()]
    names += WAVEFRONTS
    kinds = [kind for name, kind in FLOP_METRICS.items() if tensor or name != "fp64-tensor"]
    names += [name for kind in kinds for name, _ in kind]
    return ",".join(names)


class ProfiledStage:
    """A stage timer standing in for the scene's: the profiler runs over the first window of ``stage``."""

    def __init__(self, timer, stage: str):
        self.timer, self.stage_name, self.done = timer, stage, False

    def __getattr__(self, name):
        return getattr(self.timer, name)

    @contextmanager
    def stage(self, name: str):
        with profiled(name == self.stage_name and not self.done), self.timer.stage(name):
            yield
        self.done = self.done or name == self.stage_name


@contextmanager
def profiled(on: bool):
    import cupy

    if on:
        cupy.cuda.get_current_stream().synchronize()
        cupy.cuda.profiler.start()
    try:
        yield
    finally:
        if on:
            cupy.cuda.get_current_stream().synchronize()
            cupy.cuda.profiler.stop()


def run_stage(stage_id: str, folder: Path) -> None:
    spec, case = HEADLINES[stage_id]
    model = load(case.profile)(profiled) if case.profile else profile_window(spec, case)
    write_model(folder, stage_id, model)


def profile_window(spec: SceneSpec, case: NcuCase):
    """Build the case's scene on the GPU, warm it up, profile one window of its stage; the stage's model of it."""
    from sim.gpu.roofline import Setup, models

    scene = spec.create(
        preset=case.preset, n=case.count, backend="gpu", variant=case.variant, block=case.block, **dict(case.options)
    )
    for toggle, on in case.toggles:
        scene.controls.set_toggle(toggle, on)
    for name, value in case.params:
        scene.controls.set_param(name, value)
    for _ in range(3):  # compiles, fills the pools, settles the clocks
        scene.run_frame(case.steps)
    scene.finish()
    if case.whole_frame:
        with profiled(True):
            scene.run_frame(case.steps)
    else:
        scene.timer = ProfiledStage(scene.timer, case.stage)
        scene.run_frame(case.steps)
    return models(spec, Setup.of_scene(scene, case.window))[case.stage]


def write_model(folder: Path, stage_id: str, model) -> None:
    figures = {
        "bytes": model.total_bytes,
        "bytes_min": model.bytes_min * model.units,
        "flops": model.total_flops,
        "flop_kind": model.flop_kind,
        "instructions": model.total_instructions,  # 0: the model counts none
        "note": model.note,
    }
    (folder / f"{stage_id}.model.json").write_text(json.dumps(figures, indent=2) + "\n")


def raw_rows(path: Path) -> list[dict[str, str]]:
    """Each profiled kernel's row of ncu's raw CSV page: metric name -> its text (the units row skipped)."""
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.startswith('"')]
    rows = list(csv.reader(lines))
    if not rows:
        return []
    header = rows[0]
    return [dict(zip(header, row, strict=False)) for row in rows[1:] if row and row[0].isdigit()]


def ncu_totals(path: Path) -> dict[str, float]:
    """Every metric of ncu's raw CSV page (--print-units base) summed over the profiled kernels; a percentage
    (``pct_of_peak``) is averaged instead, weighted by each kernel's time."""
    totals: dict[str, float] = {}
    for row in raw_rows(path):
        values = {}
        for name, value in row.items():
            try:
                values[name] = float(value.replace(",", ""))
            except ValueError:
                pass
        weight = values.get(DURATION, 1.0)
        for name, value in values.items():
            totals[name] = totals.get(name, 0.0) + (value * weight if "pct_of_peak" in name else value)
        totals["weights"] = totals.get("weights", 0.0) + weight
        totals["kernels"] = totals.get("kernels", 0) + 1
    for name in totals:
        if "pct_of_peak" in name:
            totals[name] /= totals["weights"]
    return totals


def busy(ncu: dict[str, float], which: str) -> str:
    value = ncu.get(BUSY[which])
    return "-" if value is None else f"{value:.0f}%"


def wavefronts(ncu: dict[str, float], name: str) -> str:
    """G wavefronts of L1's data pipe; a dash where the page lacks the count (written before it was read)."""
    value = ncu.get(name)
    return "-" if value is None else f"{value / 1e9:.4f}"


def ratio(model: float, measured: float) -> str:
    """model / measured in a cell of 7 (no decimals from 100 on: a window far from the model's average)."""
    if measured <= 0:
        return "-"
    r = model / measured
    return f"{r:.2f}" if r < 100 else f"{r:.0f}"


def instruction_cells(model: float, measured: float) -> str:
    """The model's warp instructions (G) and their ratio to ncu's; dashes where the model counts none (as
    files written before it did)."""
    if model <= 0:
        return f"{'-':>13}{'-':>7}"
    return f"{model / 1e9:>13.4f}{ratio(model, measured):>7}"


def table(folder: Path) -> str:
    lines = [
        f"{'stage':<24}{'kernels':>8}{'model GB':>11}{'ncu GB':>10}{'ratio':>7}{'model GFLOP':>13}"
        f"{'ncu GFLOP':>11}{'ratio':>7}{'model Ginst':>13}{'ratio':>7}{'ncu Ginst':>11}{'issue':>7}{'dram':>6}{'l1':>6}"
        f"{'G wavefronts':>14}{'atomics':>9}  kind"
    ]
    for stage_id in HEADLINES:
        model_file, ncu_file = folder / f"{stage_id}.model.json", folder / f"{stage_id}.csv"
        if not model_file.exists() or not ncu_file.exists():
            lines.append(f"{stage_id:<24}  not profiled (see {stage_id}.log)")
            continue
        model, ncu = json.loads(model_file.read_text()), ncu_totals(ncu_file)
        dram = ncu.get("dram__bytes_read.sum", 0.0) + ncu.get("dram__bytes_write.sum", 0.0)
        flops = sum(ncu.get(name, 0.0) * weight for name, weight in FLOP_METRICS[model["flop_kind"]])
        instructions = ncu.get("smsp__inst_executed.sum", 0.0)
        lines.append(
            f"{stage_id:<24}{int(ncu.get('kernels', 0)):>8}{model['bytes'] / 1e9:>11.4f}{dram / 1e9:>10.4f}"
            f"{ratio(model['bytes'], dram):>7}{model['flops'] / 1e9:>13.3f}{flops / 1e9:>11.3f}"
            f"{ratio(model['flops'], flops):>7}{instruction_cells(model.get('instructions', 0.0), instructions)}"
            f"{instructions / 1e9:>11.4f}{busy(ncu, 'issue'):>7}{busy(ncu, 'dram'):>6}{busy(ncu, 'l1'):>6}"
            f"{wavefronts(ncu, WAVEFRONTS[0]):>14}{wavefronts(ncu, WAVEFRONTS[1]):>9}  {model['flop_kind']}"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["list"]:
        print("\n".join(HEADLINES))
    elif argv[:1] == ["metrics"]:
        print(metrics(tensor="--no-tensor" not in argv))
    elif argv[:1] == ["run"] and len(argv) == 3:
        run_stage(argv[1], Path(argv[2]))
    elif argv[:1] == ["table"] and len(argv) == 2:
        print(table(Path(argv[1])))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
