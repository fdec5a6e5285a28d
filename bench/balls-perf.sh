#!/usr/bin/env bash
# Balls at 10M on one GPU: the GPU tests of the balls pipeline and its design options, then one bench
# per design (neighbour loads batched 1/4/8 x grid prefilter none/speed x first step fused into the
# grid search off/on) beside the peer, same call. Today's design is batch 1, prefilter none, fuse off.
# Usage: bench/balls-perf.sh OUT_DIR   (about two minutes on an H200)
set -uo pipefail
out=${1:?usage: bench/balls-perf.sh OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
py=${PYTHON:-python3}
peers=${PEERS:-.peers}
export PYTHONUNBUFFERED=1

timeout 50 $py -m pytest -q -m gpu -p no:cacheprovider tests/test_balls_gpu.py tests/test_balls_designs_gpu.py \
    > "$out/pytest-balls.log" 2>&1
echo "pytest (rc $?): $(tail -1 "$out/pytest-balls.log")"

# Three short bench calls (a call writes its JSON only at its end): the load batching and the
# prefilter, each stage timed on its own, then the first step taken by the grid search.
bench="$py main.py bench balls --backend gpu --preset block -n 10000000 --variant grid --block 128 --steps 120"
timeout 20 $bench --batch 1,4 --prefilter none,speed --fuse off --json "$out/balls-a.json" > "$out/bench-a.log" 2>&1
echo "bench a (rc $?)"
timeout 14 $bench --batch 8 --prefilter speed --fuse off,on --json "$out/balls-b.json" > "$out/bench-b.log" 2>&1
echo "bench b (rc $?)"
timeout 10 $bench --batch 4 --prefilter speed --fuse on --json "$out/balls-c.json" > "$out/bench-c.log" 2>&1
echo "bench c (rc $?)"
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
print(f"{'batch':>5} {'prefilter':>9} {'fuse':>4} {'sort':>6} {'prox':>6} {'forces':>6} {'step ms':>8} {'x peer':>6}")
runs = [r for name in ("balls-a.json", "balls-b.json", "balls-c.json") for r in (load(name) or {}).get("results", [])]
for r in runs:
    st, o = r["stage_ms"], r["options"]
    ratio = f"{peer_ms / r['step_ms']:.2f}" if peer_ms else "-"
    print(f"{o.get('batch'):>5} {o.get('prefilter'):>9} {o.get('fuse'):>4} {st.get('sort', 0):6.3f} "
          f"{st.get('proximity', 0):6.3f} {st.get('forces+integrate', 0):6.3f} {r['step_ms']:8.3f} {ratio:>6}")
PY
