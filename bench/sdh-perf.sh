#!/usr/bin/env bash
# The SDH kernels on one GPU (at most 70 s on an H200): the GPU exactness tests (one process and ranks),
# fast and tensor at N = 512000 and 2048000 (W = 500, blocks 128 and 256; every kernel's counts checked
# against the first one's and N(N-1)/2 during the run), the tiled peer in the same call, and a short table.
# Usage: bench/sdh-perf.sh OUT_DIR [PEERS_DIR]
set -uo pipefail  # no -e: a failing stage still leaves the others' numbers
out=${1:?usage: bench/sdh-perf.sh OUT_DIR [PEERS_DIR]}
peers=${2:-.peers}
cd "$(dirname "$0")/.."
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
log="$out/sdh-log.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv | tee "$log"

echo "== GPU tests" | tee -a "$log"
timeout 33 $py -m pytest -q -m gpu tests/test_sdh_gpu.py tests/test_mpi_sdh.py tests/test_sdh_scene.py \
    -p no:cacheprovider > "$out/sdh-pytest-gpu.txt" 2>&1
tail -n 4 "$out/sdh-pytest-gpu.txt" | tee -a "$log"

echo "== fast and tensor, 512000 and 2048000 atoms, W = 500 (at ${SECONDS} s)" | tee -a "$log"
timeout 28 $py main.py bench sdh -n 512000,2048000 --kernel fast,tensor --block 128,256 \
    --json "$out/sdh-gpu.json" >> "$log" 2>&1
echo "== peer (at ${SECONDS} s)" | tee -a "$log"
timeout 15 $py bench/peer.py "$peers/peer_sdh.py" --sizes 512000 --naive-max 0 --json "$out/peer-sdh.json" >> "$log" 2>&1

echo "== summary (at ${SECONDS} s)" | tee -a "$log"
$py - "$out" <<'PY' | tee -a "$log"
import json, os, sys
out = sys.argv[1]
load = lambda name: json.load(open(os.path.join(out, name))) if os.path.exists(os.path.join(out, name)) else None
peer = load("peer-sdh.json")
tiled = [r for r in (peer or {}).get("results", []) if r["kernel"] == "tiled" and r["n"] == 512000]
peer_ms = tiled[0]["kernel_ms"] if tiled else None
print(f"peer tiled 512000: {peer_ms:.1f} ms" if peer_ms else "peer: no 512000 row (see sdh-log.txt)")
rep = load("sdh-gpu.json")
if not rep:
    print("sdh-gpu.json: missing (see sdh-log.txt)")
    sys.exit(0)
print(f"{'n':>8} {'kernel':>7} {'block':>5} {'ms':>9} {'T pairs/s':>9} {'x peer':>6}  (* fastest)")
for n in dict.fromkeys(r["n"] for r in rep["results"]):
    rows = sorted((r for r in rep["results"] if r["n"] == n), key=lambda r: r["kernel_ms"])
    for k, r in enumerate(rows):
        ratio = f"{peer_ms / r['kernel_ms']:.2f}" if peer_ms and n == 512000 else "-"
        print(f"{n:>8} {r['kernel']:>7} {r['block']:>5} {r['kernel_ms']:>9.2f} {r['pairs_per_s'] / 1e12:>9.3f} "
              f"{ratio:>6}{'' if k else '  *'}{'' if r.get('exact', True) else '  WRONG COUNTS'}")
print("targets: 512000 <= 87 ms and >= 3.5x the peer; 2048000 >= 1.7 T pairs/s")
PY
