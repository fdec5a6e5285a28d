#!/usr/bin/env bash
# Balls on one GPU: the balls GPU tests, then one bench call at 10M over every step design being
# measured (world.STEP_DESIGNS; the grid's batch of 4 and speed prefilter are the design now), then
# the fastest of them at 1M and 10M into balls-gpu.json beside the peer at the same sizes, same call.
# Usage: bench/balls-perf.sh OUT_DIR   (about 95 s on an H200)
set -uo pipefail
out=${1:?usage: bench/balls-perf.sh OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
py=${PYTHON:-python3}
peers=${PEERS:-.peers}
export PYTHONUNBUFFERED=1
designs=${BALLS_STEP_DESIGNS:-plain,regs64,regs40,eager,eager-regs64}

timeout 42 $py -m pytest -q -m gpu -p no:cacheprovider tests/test_balls_gpu.py tests/test_balls_designs_gpu.py \
    tests/test_picking.py > "$out/pytest-balls.log" 2>&1
echo "pytest (rc $?): $(tail -1 "$out/pytest-balls.log")"

bench="$py main.py bench balls --backend gpu --preset block --variant grid --block 128 --steps 120"
timeout 28 $bench -n 10000000 --step "$designs" --json "$out/balls-designs.json" > "$out/bench-designs.log" 2>&1
echo "designs at 10M (rc $?)"
best=$($py - "$out/balls-designs.json" <<'PY'
import json, sys
try:
    runs = json.load(open(sys.argv[1]))["results"]
    print(min(runs, key=lambda r: r["step_ms"])["options"]["step"])
except (OSError, ValueError, KeyError):
    print("plain")
PY
)
timeout 12 $bench -n 1000000,10000000 --step "$best" --json "$out/balls-gpu.json" > "$out/bench-final.log" 2>&1
echo "final, step $best, 1M and 10M (rc $?)"
timeout 16 $py "$peers/peer_balls.py" --sizes 1000000,10000000 --json "$out/peer-balls.json" \
    > "$out/peer-balls.log" 2>&1
echo "peer (rc $?)"

$py - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
def load(name):
    try:
        return json.loads((out / name).read_text()).get("results", [])
    except (OSError, ValueError):
        return []
peer = {r["n"]: r["ms_per_step"] for r in load("peer-balls.json")}
print("peer ms/step: " + (", ".join(f"{n:,}: {ms:.3f}" for n, ms in sorted(peer.items())) or "no result"))
print(f"{'run':>6} {'n':>10} {'step design':>12} {'sort':>6} {'prox':>6} {'forces':>6} {'step ms':>8} {'x peer':>6}")
for name, label in (("balls-designs.json", "design"), ("balls-gpu.json", "final")):
    for r in load(name):
        st, ms = r["stage_ms"], r["step_ms"]
        ratio = f"{peer[r['n']] / ms:.2f}" if r["n"] in peer else "-"
        print(f"{label:>6} {r['n']:>10,} {r['options'].get('step', '-'):>12} {st.get('sort', 0):6.3f} "
              f"{st.get('proximity', 0):6.3f} {st.get('forces+integrate', 0):6.3f} {ms:8.3f} {ratio:>6}")
PY
