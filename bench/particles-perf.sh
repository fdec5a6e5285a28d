#!/usr/bin/env bash
# The particles design on one GPU (at most 100 s): the GPU tests (every variant against the CPU twin,
# the course's checker, the MPI ranks' step), 1000 steps fp64 at 1M and 10M for every variant as the
# bench runs it (each frame of ten steps replayed as one CUDA graph, the default block of 128), the peer in
# the same call, then while time is left plain at block 256 for comparison.
# Prints the pytest summary line and a short table against the targets (10M <= 0.63 s, 1M <= 0.07 s);
# everything else goes to OUT_DIR/particles-log.txt.
# Usage: bench/particles-perf.sh OUT_DIR   (bash bench/device.sh particles-perf)
set -uo pipefail  # no -e: a failing stage still leaves the others' numbers
out=${1:?usage: bench/particles-perf.sh OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
sizes=1000000,10000000
budget=98  # seconds for the whole script
log="$out/particles-log.txt"
left() { echo $((budget - SECONDS > 1 ? budget - SECONDS : 1)); }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > "$log" 2>&1

echo "== GPU tests" >> "$log"
timeout 58 $py -m pytest -q -rP -m gpu -p no:cacheprovider tests/test_particles_gpu.py tests/test_mpi_gpu_standin.py \
    > "$out/particles-pytest-gpu.txt" 2>&1
grep -h "^course check" "$out/particles-pytest-gpu.txt" | sort -u >> "$log"
summary=$(grep -E "[0-9]+ (passed|failed|errors?|skipped|deselected)|no tests ran" "$out/particles-pytest-gpu.txt" | tail -n 1)
echo "GPU tests: ${summary:-no summary (timed out? see particles-pytest-gpu.txt)}" | tee -a "$log"

echo "== every variant, 1000 steps ($SECONDS s so far)" >> "$log"
timeout 20 $py main.py bench particles --backend gpu --sizes $sizes --steps 1000 --variant all \
    --json "$out/particles-gpu.json" >> "$log" 2>&1
echo "== peer ($SECONDS s so far)" >> "$log"
timeout 30 $py bench/peer.py .peers/peer_particles.py --sizes $sizes --steps 1000 --json "$out/peer-particles.json" >> "$log" 2>&1
echo "== plain at block 256 ($SECONDS s so far)" >> "$log"
timeout "$(left)" $py main.py bench particles --backend gpu --sizes $sizes --steps 1000 --variant plain \
    --block 256 --json "$out/particles-blocks.json" >> "$log" 2>&1

echo "== summary ($SECONDS s)" >> "$log"
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
rows = load("particles-gpu.json") + load("particles-blocks.json")
print(f"{'n':>9} {'variant':>9} {'block':>5} {'1000 steps s':>12} {'x peer':>6} {'target':>6}")
for r in sorted(rows, key=lambda r: (r["n"], r["wall_s"] / r["steps"])):
    s = r["wall_s"] * 1000 / r["steps"]
    ratio = f"{peer[r['n']] / s:.2f}" if r["n"] in peer else "-"
    goal = target.get(r["n"])
    print(f"{r['n']:>9} {str(r['variant']):>9} {str(r['block']):>5} {s:>12.4f} {ratio:>6} "
          f"{('met' if s <= goal else f'{goal:.2f}') if goal else '-':>6}")
print("peer: " + ", ".join(f"{n}: {s:.3f} s" for n, s in sorted(peer.items()))
      + "; CUDA graph " + ("on" if rows and all(r.get("cuda_graph") for r in rows) else "NOT on for every row"))
PY
