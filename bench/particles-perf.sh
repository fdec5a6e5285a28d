#!/usr/bin/env bash
# The particles step toward the hardware (one GPU, at most 150 s): the GPU tests (every variant and
# candidate against the CPU twin), 1000 steps fp64 at 1M and 10M for each candidate — plain and
# texture x re-sorting (scatter, gather) x force arithmetic (course, batch-rsqrt; rsqrt and batch
# alone at 10M) — the peer in the same call, and a short table against the targets (10M <= 0.63 s,
# 1M <= 0.07 s). Extras, each beyond the 150 s: `bins` (bin sides 1.5 and 3 cutoffs for the gather,
# batch-rsqrt candidate at 10M, about 20 s), `graph` (each frame's ten steps replayed as one CUDA graph,
# about 30 s), `ncu` (a profile of the step kernel at 10M, about 50 s).
# Usage: bench/particles-perf.sh OUT_DIR [bins] [graph] [ncu]
#   or   PARTICLES_EXTRA="bins graph" bash bench/device.sh particles-perf
set -uo pipefail  # no -e: a failing stage still leaves the others' numbers
out=${1:?usage: bench/particles-perf.sh OUT_DIR [graph] [ncu]}
extra=" ${*:2} ${PARTICLES_EXTRA:-} "  # extras as arguments, or in PARTICLES_EXTRA (bench/device.sh passes none)
cd "$(dirname "$0")/.."
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
sizes=1000000,10000000
log="$out/particles-log.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv | tee "$log"

echo "== GPU tests" | tee -a "$log"
timeout 55 $py -m pytest -q -m gpu -p no:cacheprovider tests/test_particles_gpu.py > "$out/particles-pytest-gpu.txt" 2>&1
tail -n 8 "$out/particles-pytest-gpu.txt" | tee -a "$log"

echo "== plain and texture: reorder x force, 1000 steps" | tee -a "$log"
timeout 60 $py main.py bench particles --backend gpu --sizes $sizes --steps 1000 --variant plain,texture \
    --reorder scatter,gather --force course,batch-rsqrt --json "$out/particles-main.json" >> "$log" 2>&1
echo "== plain, gather: rsqrt alone, batch alone, 10M" | tee -a "$log"
timeout 15 $py main.py bench particles --backend gpu --sizes 10000000 --steps 1000 --variant plain \
    --reorder gather --force rsqrt,batch --json "$out/particles-parts.json" >> "$log" 2>&1
echo "== peer" | tee -a "$log"
timeout 20 $py .peers/peer_particles.py --sizes $sizes --steps 1000 --json "$out/peer-particles.json" >> "$log" 2>&1

if [[ "$extra" == *" bins "* ]]; then
    echo "== bin sides 1.5 and 3 cutoffs, gather, batch-rsqrt, 10M" | tee -a "$log"
    timeout 20 $py main.py bench particles --backend gpu --sizes 10000000 --steps 1000 --variant plain \
        --reorder gather --force batch-rsqrt --bins 1.5,3 --json "$out/particles-bins.json" >> "$log" 2>&1
fi
if [[ "$extra" == *" graph "* ]]; then  # the scene's "CUDA graph" switch: a frame's ten steps, one graph
    echo "== CUDA graph per frame, 1000 steps" | tee -a "$log"
    timeout 30 $py - "$out" <<'PY' >> "$log" 2>&1
import json, os, sys
from sim import create_scene
from sim.bench import run
rows = []
for n in (1000000, 10000000):
    for reorder, force in (("scatter", "course"), ("gather", "batch-rsqrt")):
        scene = create_scene("particles", n=n, backend="gpu", reorder=reorder, force=force)
        scene.set_toggle("graph", True)
        r = run(scene, 1000, progress=lambda *_: None)
        r["variant"] = "graph"
        print(n, reorder, force, f"{r['wall_s']:.3f} s", flush=True)
        rows.append(r)
json.dump({"results": rows}, open(os.path.join(sys.argv[1], "particles-graph.json"), "w"), indent=1)
PY
fi
if [[ "$extra" == *" ncu "* ]] && command -v ncu > /dev/null; then
    echo "== profile: step kernel, 10M, plain (scatter, course) and (gather, batch-rsqrt)" | tee -a "$log"
    for opts in "--reorder scatter --force course" "--reorder gather --force batch-rsqrt"; do
        name="$out/particles-ncu${opts//[ -]/_}.txt"
        timeout 25 ncu -k regex:'^step$' -s 40 -c 1 --section SpeedOfLight --section WarpStateStats \
            --section InstructionStats $py main.py bench particles --backend gpu -n 10000000 --steps 60 \
            --variant plain $opts > "$name" 2>&1
        echo "-- $opts" | tee -a "$log"
        grep -E "Duration|Memory Throughput|Compute \(SM\) Throughput|Executed Ipc A|Warp Cycles Per Issued|Avg. Active Threads|Executed Instructions  " \
            "$name" | head -n 14 | tee -a "$log"
    done
fi

echo "== summary" | tee -a "$log"
$py - "$out" <<'PY' | tee -a "$log"
import json, os, sys
out = sys.argv[1]
def load(name, quiet=False):
    path = os.path.join(out, name)
    try:
        return json.load(open(path))["results"]
    except (OSError, ValueError, KeyError):
        if not quiet:
            print(f"{name}: missing (see particles-log.txt)")
        return []
peer = {}
for r in load("peer-particles.json"):  # the faster of the peer's two sorts, per size
    s = r["ms_per_step"] * r["steps"] / 1000
    peer[r["n"]] = min(peer.get(r["n"], s), s)
target = {1000000: 0.07, 10000000: 0.63}
print(f"{'n':>9} {'variant':>8} {'reorder':>8} {'force':>12} {'bins':>4} {'1000 steps s':>12} {'forces ms':>9} "
      f"{'bin ms':>7} {'x peer':>6} {'target':>6}")
rows = load("particles-main.json") + load("particles-parts.json")
rows += load("particles-bins.json", quiet=True) + load("particles-graph.json", quiet=True)
for r in sorted(rows, key=lambda r: (r["n"], r["wall_s"] / r["steps"])):
    s = r["wall_s"] * 1000 / r["steps"]
    o, st = r["options"], r["stage_ms"]
    ratio = f"{peer[r['n']] / s:.2f}" if r["n"] in peer else "-"
    goal = target.get(r["n"])
    print(f"{r['n']:>9} {r['variant']:>8} {o.get('reorder', '-'):>8} {o.get('force', '-'):>12} {o.get('bins', '-'):>4} "
          f"{s:>12.3f} "
          f"{st.get('forces+move', float('nan')):>9.3f} {st.get('bin', float('nan')):>7.3f} {ratio:>6} "
          f"{('met' if s <= goal else f'{goal:.2f}') if goal else '-':>6}")
for n, s in sorted(peer.items()):
    print(f"peer {n}: {s:.3f} s for 1000 steps")
PY
