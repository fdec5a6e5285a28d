"""The speed-of-light models against Nsight Compute: each GPU stage's headline configuration, one stage
window profiled, the model's DRAM bytes and arithmetic beside what ncu counted.

    python3 bench/ncu_models.py list                  the stages bench/ncu_models.sh profiles, one a line
    python3 bench/ncu_models.py metrics [--no-tensor] ncu's --metrics (without the DMMA count)
    python3 bench/ncu_models.py run STAGE DIR         (under ncu) build, warm up, profile one window of STAGE
                                                      between cudaProfilerStart/Stop; DIR/STAGE.model.json
    python3 bench/ncu_models.py table DIR             model vs ncu per stage (DIR/STAGE.csv from ncu)

A window is the first time the stage runs in a frame (a balls proximity pass, one particles step, one
histogram, one heat frame of k steps), or a whole frame where the scene adds the stage's time itself
(durbin's recursion); the batched Durbin solve is one call of the batched kernel.
"""

from __future__ import annotations

import csv
import json
import sys
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

M = 1_000_000
# stage id -> (scene, stage, preset, count, variant, block, options, toggles, steps a frame, steps a window)
HEADLINES = {
    "balls.sort": ("balls", "sort", "block", 10 * M, "grid", 128, {}, {}, 6, 6),
    "balls.proximity": ("balls", "proximity", "block", 10 * M, "grid", 128, {}, {}, 6, 6),
    "balls.forces+integrate": ("balls", "forces+integrate", "block", 10 * M, "grid", 128, {}, {}, 6, 1),
    "particles.bin": ("particles", "bin", "2020", 10 * M, "plain", 128, {}, {"statistics": False}, 10, 1),
    "particles.forces+move": ("particles", "forces+move", "2020", 10 * M, "plain", 128, {}, {"statistics": False},
                              10, 1),
    "sdh.histogram": ("sdh", "histogram", "course", 512_000, "tensor", 256, {}, {}, 1, 1),
    "heat.step": ("heat", "step", "large", 100 * M, "temporal", (32, 8), {"k": "8"}, {}, 8, 8),
    "durbin.recursion": ("durbin", "recursion", "large", 200_000, "persistent", 256, {}, {}, 1000, 1000),
}
WHOLE_FRAME = {"durbin.recursion"}  # the scene adds this stage's time itself (no timer.stage to hook)
BATCHED = "durbin.batched"  # 100000 systems of order 32, the register kernel
BATCH = (100_000, 32)
SASS = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
FLOP_METRICS = {  # ncu's per-thread SASS counts of each kind and their FLOP: an FMA is 2, a DMMA m8n8k4 512
    "fp32": ((SASS.format("fadd"), 1), (SASS.format("fmul"), 1), (SASS.format("ffma"), 2)),
    "fp64": ((SASS.format("dadd"), 1), (SASS.format("dmul"), 1), (SASS.format("dfma"), 2)),
    "fp64-tensor": (("sm__inst_executed_pipe_tensor_op_dmma.sum", 512),),
    "int": ((SASS.format("integer"), 1),),
}


def metrics(tensor: bool = True) -> str:
    """The metrics ncu collects (bench/ncu_models.sh passes them to --metrics); without ``tensor`` the DMMA
    count is left out (for an ncu that does not know it)."""
    names = ["dram__bytes_read.sum", "dram__bytes_write.sum", "smsp__inst_executed.sum"]
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
    from sim import registry
    from sim.roofline import Setup, models

    if stage_id == BATCHED:
        return run_batched(folder)
    name, stage, preset, count, variant, block, options, toggles, frame, window = HEADLINES[stage_id]
    scene = registry.create_scene(name, preset=preset, n=count, backend="gpu", variant=variant, block=block,
                                  **options)
    for toggle, on in toggles.items():
        scene.set_toggle(toggle, on)
    if name == "durbin":
        scene.set_param("speed", frame)
    for _ in range(3):  # compiles, fills the pools, settles the clocks
        scene.run_frame(frame)
    scene.finish()
    if stage_id in WHOLE_FRAME:
        with profiled(True):
            scene.run_frame(frame)
    else:
        scene.timer = ProfiledStage(scene.timer, stage)
        scene.run_frame(frame)
    model = models(scene.spec, Setup.of_scene(scene, window))[stage]
    write_model(folder, stage_id, model)


def run_batched(folder: Path) -> None:
    import cupy

    from sim.durbin import SPEC, batched_gpu
    from sim.durbin.batch_bench import batch_input
    from sim.roofline import Setup, models

    systems, order = BATCH
    r = cupy.asarray(batch_input(systems, order))
    for _ in range(3):
        batched_gpu.batched(r, "register", 128)
    with profiled(True):
        batched_gpu.batched(r, "register", 128)
    model = models(SPEC, Setup(systems * order, preset="lpc", stats={"frames": systems}))["recursion"]
    write_model(folder, BATCHED, model)


def write_model(folder: Path, stage_id: str, model) -> None:
    figures = {"bytes": model.total_bytes, "bytes_min": model.bytes_min * model.units, "flops": model.total_flops,
               "flop_kind": model.flop_kind, "note": model.note}
    (folder / f"{stage_id}.model.json").write_text(json.dumps(figures, indent=2) + "\n")


def ncu_totals(path: Path) -> dict[str, float]:
    """Every metric of ncu's raw CSV page (--print-units base) summed over the profiled kernels."""
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    rows = list(csv.reader(lines))
    if not rows:
        return {}
    header, totals = rows[0], {}
    for row in rows[1:]:
        if not row or not row[0].isdigit():  # the units row
            continue
        for name, value in zip(header, row, strict=False):
            try:
                totals[name] = totals.get(name, 0.0) + float(value.replace(",", ""))
            except ValueError:
                pass
        totals["kernels"] = totals.get("kernels", 0) + 1
    return totals


def ratio(model: float, measured: float) -> str:
    return f"{model / measured:.2f}" if measured > 0 else "-"


def table(folder: Path) -> str:
    lines = [f"{'stage':<24}{'kernels':>8}{'model GB':>11}{'ncu GB':>10}{'ratio':>7}{'model GFLOP':>13}"
             f"{'ncu GFLOP':>11}{'ratio':>7}{'ncu Ginst':>11}  kind"]
    for stage_id in [*HEADLINES, BATCHED]:
        model_file, ncu_file = folder / f"{stage_id}.model.json", folder / f"{stage_id}.csv"
        if not model_file.exists() or not ncu_file.exists():
            lines.append(f"{stage_id:<24}  not profiled (see {stage_id}.log)")
            continue
        model, ncu = json.loads(model_file.read_text()), ncu_totals(ncu_file)
        dram = ncu.get("dram__bytes_read.sum", 0.0) + ncu.get("dram__bytes_write.sum", 0.0)
        flops = sum(ncu.get(name, 0.0) * weight for name, weight in FLOP_METRICS[model["flop_kind"]])
        lines.append(f"{stage_id:<24}{int(ncu.get('kernels', 0)):>8}{model['bytes'] / 1e9:>11.4f}{dram / 1e9:>10.4f}"
                     f"{ratio(model['bytes'], dram):>7}{model['flops'] / 1e9:>13.3f}{flops / 1e9:>11.3f}"
                     f"{ratio(model['flops'], flops):>7}{ncu.get('smsp__inst_executed.sum', 0.0) / 1e9:>11.4f}"
                     f"  {model['flop_kind']}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["list"]:
        print("\n".join([*HEADLINES, BATCHED]))
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
