#!/usr/bin/env bash
# The heat GPU run behind bench/results/*-heat*.json, in one call on one GPU: the GPU tests, the
# command's course check, every variant x block shape (x k) at 10000^2 for a few hundred steps, the
# seed's full 5000-step run of each kernel's best configuration, the peer yardstick, a profile of
# the temporal kernel; a short table last.
# Usage: bench/heat.sh OUT_DIR [PEERS_DIR] [STEPS]
#   OUT_DIR    where the JSON files and logs go (6 files)
#   PEERS_DIR  folder with peer_heat.py (default .peers)
#   STEPS      steps per configuration of the sweep (default 200)
set -uo pipefail  # no -e: a failing stage still leaves the others' numbers
out=${1:?usage: bench/heat.sh OUT_DIR [PEERS_DIR] [STEPS]}
peers=${2:-.peers}
steps=${3:-200}
cd "$(dirname "$0")/.."
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
log="$out/heat-log.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.limit --format=csv | tee "$log"

echo "== GPU tests" | tee -a "$log"
timeout 90 $py -m pytest -q -m gpu tests/test_heat_gpu.py -p no:cacheprovider > "$out/heat-pytest-gpu.txt" 2>&1
tail -n 25 "$out/heat-pytest-gpu.txt" | tee -a "$log"

echo "== sweep: 10000^2, $steps steps, every kernel x block (x k)" | tee -a "$log"
timeout 75 $py -m sim.heat.bench --sizes 10000 --steps "$steps" --kernel all --block all --k all \
    --json "$out/heat-sweep.json" >> "$log" 2>&1
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv | tee -a "$log"

echo "== peer" | tee -a "$log"
timeout 45 $py bench/peer.py "$peers/peer_heat.py" --n 10000 --steps 200 --json "$out/peer-heat.json" 2>&1 | tee -a "$log"

echo "== the seed's run: 10000^2 x 5000 steps, each kernel's best configuration" | tee -a "$log"
timeout 40 $py - "$out/heat-sweep.json" "$out/heat-5000.json" >> "$log" 2>&1 <<'EOF'
import json, sys
from sim.heat import bench
best = {}
for r in json.load(open(sys.argv[1]))["results"]:
    if r["kernel"] not in best or r["ms_per_step"] < best[r["kernel"]]["ms_per_step"]:
        best[r["kernel"]] = r
results, report = [], None
for kernel in ("temporal", "global", "pitched", "shared"):
    if kernel in best:
        r = best[kernel]
        report = bench.run([10000], 5000, [kernel], [tuple(map(int, r["block"].split("x")))], [r["k"] or 1], repeats=1)
        results += report["results"]
        report["results"] = results
        json.dump(report, open(sys.argv[2], "w"), indent=1)
print(bench.table(report))
EOF

echo "== the command" | tee -a "$log"
timeout 20 $py main.py heat --backend gpu --kernel all --compare 2>&1 | tee -a "$log"
timeout 20 $py main.py heat --backend gpu --fma --compare 2>&1 | tee -a "$log"
timeout 20 $py main.py heat --backend gpu --kernel temporal --ni 2000 --nj 1000 --steps 500 --compare --stats 2>&1 | tee -a "$log"

echo "== profile: global 32x8, temporal k=1 64x8, temporal k=7 32x8 at 10000^2" | tee -a "$log"
if command -v ncu > /dev/null; then
    timeout 45 ncu --clock-control none -k regex:step_ -c 3 --section SpeedOfLight --section ComputeWorkloadAnalysis \
        --section Occupancy --section SchedulerStats --section LaunchStats --section WarpStateStats \
        --section MemoryWorkloadAnalysis $py - > "$out/heat-ncu.txt" 2>&1 <<'EOF'
from sim.heat import course, gpu
field = course.initial_field(10000, 10000)
for kernel, block, k in (("global", (32, 8), 1), ("temporal", (64, 8), 1), ("temporal", (32, 8), 7)):
    heat = gpu.HeatGpu(field, 0, kernel, block, k)
    heat.step(k)
    heat.get()
EOF
    grep -E "step_|Duration|DRAM Throughput|Executed Ipc|Issue Slots Busy|Registers Per|Achieved Occupancy|Eligible Warps|Active Warps Per Sched|Warp Cycles Per Issued|L2 Hit Rate|Mem Busy|highest-utilized" \
        "$out/heat-ncu.txt" | head -n 60 | tee -a "$log"
fi

echo "== summary" | tee -a "$log"
$py - "$out" <<'EOF' | tee -a "$log"
import json, os, sys
out = sys.argv[1]
load = lambda name: json.load(open(os.path.join(out, name))) if os.path.exists(os.path.join(out, name)) else None
sweep, full, peer = load("heat-sweep.json"), load("heat-5000.json"), load("peer-heat.json")
if sweep:
    r0 = sweep["results"][0]
    print(f"{sweep['device']}: copy {sweep['copy_TBps']:.2f} TB/s, single-sweep floor {r0['floor_ms_per_step']:.4f} ms/step")
    best = {}
    for r in sweep["results"]:
        if r["kernel"] not in best or r["ms_per_step"] < best[r["kernel"]]["ms_per_step"]:
            best[r["kernel"]] = r
    print(f"{'kernel':>8} {'block':>6} {'k':>2} {'ms/step':>8} {'Gcell/s':>8} {'x floor':>7} {'5000 s':>7} {'T4 s':>6} exact")
    for kernel, r in best.items():
        measured = [f for f in (full or {}).get("results", []) if f["kernel"] == kernel]
        seconds = measured[0]["run_ms"] / 1e3 if measured else r["seed_run_s"]
        print(f"{kernel:>8} {r['block']:>6} {r['k'] or '-':>2} {r['ms_per_step']:>8.4f} {r['gcells_per_s']:>8.1f} "
              f"{r['floor_ratio']:>7.2f} {seconds:>7.3f} {r['seed_t4_s'] or '-':>6} {all(x['exact'] for x in sweep['results'])}")
    single = min((r for r in sweep["results"] if (r["k"] or 1) == 1), key=lambda r: r["ms_per_step"])
    print(f"best one step a launch: {single['kernel']} {single['block']}: {single['ms_per_step']:.4f} ms/step = "
          f"{single['floor_ratio']:.3f} of the floor's speed (target 0.90)")
if peer:
    raw = [r for r in peer["results"] if r["kernel"] == "raw"][0]
    print(f"peer raw: {raw['ms_per_step']:.4f} ms/step ({raw['gcells_per_s']:.0f} Gcell/s), 5000 steps {raw['seed_run_s']:.3f} s; "
          f"peer floor {peer['floor_ms_per_step']:.4f} ms/step")
    if full:
        t = [f for f in full["results"] if f["kernel"] == "temporal"]
        if t:
            print(f"temporal 5000 steps: {t[0]['run_ms'] / 1e3:.3f} s = {raw['seed_run_s'] / (t[0]['run_ms'] / 1e3):.2f} x the peer's raw")
EOF
