#!/usr/bin/env bash
# Balls on one GPU: the balls GPU tests, then the design (grid, block 128) at 1M and 10M into
# balls-gpu.json beside the peer at the same sizes, same call, and a short table.
# Usage: bench/balls-perf.sh OUT_DIR   (at most 85 s; about 55 s on an H200)
set -uo pipefail
out=${1:?usage: bench/balls-perf.sh OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
py=${PYTHON:-python3}
peers=${PEERS:-.peers}
export PYTHONUNBUFFERED=1

timeout 50 $py -m pytest -q -m gpu -p no:cacheprovider tests/test_balls_gpu.py tests/test_balls_designs_gpu.py \
    tests/test_picking.py tests/test_picking_window.py > "$out/pytest-balls.log" 2>&1
echo "pytest (rc $?): $(tail -1 "$out/pytest-balls.log")"

timeout 17 $py main.py bench balls --backend gpu --preset block -n 1000000,10000000 --variant grid --block 128 \
    --steps 120 --json "$out/balls-gpu.json" > "$out/bench-balls.log" 2>&1
echo "balls 1M and 10M (rc $?)"
timeout 30 $py bench/peer.py "$peers/peer_balls.py" --sizes 1000000,10000000 --json "$out/peer-balls.json" \
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
print(f"{'n':>10} {'sort':>6} {'prox':>6} {'forces':>6} {'step ms':>8} {'peer ms':>8} {'x peer':>6}")
for r in load("balls-gpu.json"):
    st, ms, p = r["stage_ms"], r["step_ms"], peer.get(r["n"])
    print(f"{r['n']:>10,} {st.get('sort', 0):6.3f} {st.get('proximity', 0):6.3f} {st.get('forces+integrate', 0):6.3f} "
          f"{ms:8.3f} {p if p else float('nan'):8.3f} {f'{p / ms:.2f}' if p else '-':>6}")
PY
