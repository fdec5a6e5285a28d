#!/usr/bin/env bash
# The particles design on one GPU (at most 120 s): the GPU tests (every variant against the CPU twin,
# the course's checker, the MPI rank's step), 1000 steps fp64 at 1M and 10M for every variant as the
# bench runs it (the CUDA graph per frame on), the peer in the same call, then while time is left the
# same without the graph (plain) and the candidate batch-rsqrt (plain, texture), and a short table
# against the targets (10M <= 0.63 s, 1M <= 0.07 s).
# Usage: bench/particles-perf.sh OUT_DIR   (bash bench/device.sh particles-perf)
set -uo pipefail  # no -e: a failing stage still leaves the others' numbers
out=${1:?usage: bench/particles-perf.sh OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
sizes=1000000,10000000
budget=118  # seconds for the whole script
log="$out/particles-log.txt"
left() { echo $((budget - SECONDS > 1 ? budget - SECONDS : 1)); }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv | tee "$log"

echo "== GPU tests" | tee -a "$log"
timeout 55 $py -m pytest -q -rP -m gpu -p no:cacheprovider tests/test_particles_gpu.py tests/test_dist_gpu_standin.py \
    > "$out/particles-pytest-gpu.txt" 2>&1
grep -h "^course check" "$out/particles-pytest-gpu.txt" | sort -u | tee -a "$log"
grep -E "passed|failed|error" "$out/particles-pytest-gpu.txt" | tail -n 8 | tee -a "$log"

echo "== every variant, 1000 steps ($SECONDS s so far)" | tee -a "$log"
timeout 40 $py main.py bench particles --backend gpu --sizes $sizes --steps 1000 --variant all \
    --json "$out/particles-gpu.json" >> "$log" 2>&1
echo "== peer ($SECONDS s so far)" | tee -a "$log"
timeout 22 $py .peers/peer_particles.py --sizes $sizes --steps 1000 --json "$out/peer-particles.json" >> "$log" 2>&1

echo "== plain without the CUDA graph ($SECONDS s so far)" | tee -a "$log"
timeout "$(left)" $py - "$out" <<'PY' >> "$log" 2>&1
import dataclasses, json, os, sys
from sim import create_scene
from sim.bench import run
rows = []
for n in (1000000, 10000000):
    scene = create_scene("particles", n=n, backend="gpu")
    scene.spec = dataclasses.replace(scene.spec, bench_toggles=(("statistics", False),))  # the graph stays off
    r = run(scene, 1000, progress=lambda *_: None)
    print(n, f"plain, no graph: {r['wall_s']:.3f} s", flush=True)
    rows.append(r)
    json.dump({"results": rows}, open(os.path.join(sys.argv[1], "particles-eager.json"), "w"), indent=1)
PY
echo "== candidate batch-rsqrt ($SECONDS s so far)" | tee -a "$log"
timeout "$(left)" $py main.py bench particles --backend gpu --sizes $sizes --steps 1000 --variant plain,texture \
    --force batch-rsqrt --json "$out/particles-batch.json" >> "$log" 2>&1

echo "== summary ($SECONDS s)" | tee -a "$log"
$py - "$out" <<'PY' | tee -a "$log"
import json, os, sys
out = sys.argv[1]
def load(name):
    try:
        return json.load(open(os.path.join(out, name)))["results"]
    except (OSError, ValueError, KeyError):
        print(f"{name}: missing (see particles-log.txt)")
        return []
peer = {}
for r in load("peer-particles.json"):  # the faster of the peer's two sorts, per size
    s = r["ms_per_step"] * r["steps"] / 1000
    peer[r["n"]] = min(peer.get(r["n"], s), s)
target = {1000000: 0.07, 10000000: 0.63}
print(f"{'n':>9} {'variant':>9} {'force':>12} {'graph':>5} {'1000 steps s':>12} {'forces ms':>9} {'bin ms':>7} "
      f"{'x peer':>6} {'target':>6}")
rows = load("particles-gpu.json") + load("particles-eager.json") + load("particles-batch.json")
for r in sorted(rows, key=lambda r: (r["n"], r["wall_s"] / r["steps"])):
    s = r["wall_s"] * 1000 / r["steps"]
    o, st = r["options"], r["stage_ms"]
    ratio = f"{peer[r['n']] / s:.2f}" if r["n"] in peer else "-"
    goal = target.get(r["n"])
    graph = "on" if r.get("cuda_graph") else "off"
    print(f"{r['n']:>9} {str(r['variant']):>9} {o.get('force', '-'):>12} {graph:>5} {s:>12.3f} "
          f"{st.get('forces+move', float('nan')):>9.3f} {st.get('bin', float('nan')):>7.3f} {ratio:>6} "
          f"{('met' if s <= goal else f'{goal:.2f}') if goal else '-':>6}")
for n, s in sorted(peer.items()):
    print(f"peer {n}: {s:.3f} s for 1000 steps")
PY
