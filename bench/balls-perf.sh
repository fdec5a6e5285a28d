#!/usr/bin/env bash
# Balls at 10M on one GPU: the GPU tests of the balls pipeline and its design options, then one bench
# per design (neighbour loads batched 1/4/8 x grid prefilter none/speed) beside the peer, same call.
# Usage: bench/balls-perf.sh OUT_DIR   (about two minutes on an H200)
set -uo pipefail
out=${1:?usage: bench/balls-perf.sh OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
py=${PYTHON:-python3}
peers=${PEERS:-.peers}
export PYTHONUNBUFFERED=1

timeout 45 $py -m pytest -q -m gpu -p no:cacheprovider tests/test_balls_gpu.py tests/test_balls_designs_gpu.py \
    > "$out/pytest-balls.log" 2>&1
echo "pytest (rc $?): $(tail -1 "$out/pytest-balls.log")"

timeout 50 $py main.py bench balls --backend gpu --preset block -n 10000000 --variant grid --block 128 \
    --steps 120 --batch 1,4,8 --prefilter none,speed --json "$out/balls-designs.json" > "$out/bench-balls.log" 2>&1
echo "bench (rc $?)"
timeout 20 $py "$peers/peer_balls.py" --sizes 10000000 --steps 60 --json "$out/peer-balls.json" \
    > "$out/peer-balls.log" 2>&1
echo "peer (rc $?)"

$py - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
def load(name):
    try:
        return json.loads((out / name).read_text())
    except (OSError, ValueError):
        return None
peer = load("peer-balls.json")
peer_ms = next((r["ms_per_step"] for r in (peer or {}).get("results", []) if r["n"] == 10_000_000), None)
print(f"peer 10M: {peer_ms:.3f} ms/step" if peer_ms else "peer: no result")
print(f"{'batch':>5} {'prefilter':>9} {'sort':>6} {'prox':>6} {'forces':>6} {'step ms':>8} {'x peer':>6}")
for r in (load("balls-designs.json") or {}).get("results", []):
    st, o = r["stage_ms"], r["options"]
    ratio = f"{peer_ms / r['step_ms']:.2f}" if peer_ms else "-"
    print(f"{o.get('batch'):>5} {o.get('prefilter'):>9} {st.get('sort', 0):6.3f} {st.get('proximity', 0):6.3f} "
          f"{st.get('forces+integrate', 0):6.3f} {r['step_ms']:8.3f} {ratio:>6}")
PY
