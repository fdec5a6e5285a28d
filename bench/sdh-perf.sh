#!/usr/bin/env bash
# The SDH kernels toward the hardware (one GPU, at most 2 minutes): the GPU exactness tests, every
# candidate beside `fast` at N = 512000 (block sizes 128, 256, 1024) and N = 2M (block 256; W = 500, every kernel's
# counts checked against the others and N(N-1)/2 during the run), the peer in the same call, a
# short profile of the tensor kernel, and a table.
# Usage: bench/sdh-perf.sh OUT_DIR [PEERS_DIR]
set -uo pipefail  # no -e: a failing stage still leaves the others' numbers
out=${1:?usage: bench/sdh-perf.sh OUT_DIR [PEERS_DIR]}
peers=${2:-.peers}
cd "$(dirname "$0")/.."
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
candidates=fast,tensor,tensor-r8  # fast first: the reference every other kernel's counts must equal
log="$out/sdh-log.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv | tee "$log"

echo "== GPU tests" | tee -a "$log"
timeout 50 $py -m pytest -q -m gpu tests/test_sdh_gpu.py -p no:cacheprovider > "$out/sdh-pytest-gpu.txt" 2>&1
tail -n 8 "$out/sdh-pytest-gpu.txt" | tee -a "$log"

echo "== 512000 atoms, W = 500" | tee -a "$log"
timeout 22 $py main.py bench sdh -n 512000 --kernel $candidates --block 128,256,1024 \
    --json "$out/sdh-512k.json" >> "$log" 2>&1
echo "== 2048000 atoms, W = 500" | tee -a "$log"
timeout 22 $py main.py bench sdh -n 2048000 --kernel $candidates --block 256 \
    --json "$out/sdh-2m.json" >> "$log" 2>&1
echo "== peer" | tee -a "$log"
timeout 10 $py "$peers/peer_sdh.py" --sizes 512000 --naive-max 0 --json "$out/peer-sdh.json" >> "$log" 2>&1

if command -v ncu > /dev/null; then
    echo "== profile: tensor, 131072 atoms, block 256" | tee -a "$log"
    timeout 14 ncu -k regex:'^sdh$' -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
        --section InstructionStats --section WarpStateStats --section Occupancy \
        $py main.py bench sdh -n 131072 --kernel tensor --block 256 > "$out/sdh-ncu.txt" 2>&1
    grep -E "Duration|Executed Ipc|Issue Slots Busy|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|highest-utilized|Executed Instructions  " \
        "$out/sdh-ncu.txt" | head -n 20 | tee -a "$log"
fi

echo "== summary" | tee -a "$log"
$py - "$out" <<'EOF' | tee -a "$log"
import json, os, sys
out = sys.argv[1]
load = lambda name: json.load(open(os.path.join(out, name))) if os.path.exists(os.path.join(out, name)) else None
peer = load("peer-sdh.json")
peer_ms = None
if peer:
    tiled = [r for r in peer["results"] if r["kernel"] == "tiled" and r["n"] == 512000]
    peer_ms = tiled[0]["kernel_ms"] if tiled else None
    print(f"peer tiled 512000: {peer_ms:.1f} ms" if peer_ms else "peer: no 512000 row")
print(f"{'n':>8} {'kernel':>10} {'block':>5} {'ms':>9} {'T pairs/s':>9} {'x peer':>6}  (* best block)")
for name in ("sdh-512k.json", "sdh-2m.json"):
    rep = load(name)
    if not rep:
        print(f"{name}: missing (see sdh-log.txt)")
        continue
    for kernel in dict.fromkeys(r["kernel"] for r in rep["results"]):
        rows = sorted((r for r in rep["results"] if r["kernel"] == kernel), key=lambda r: r["kernel_ms"])
        for k, r in enumerate(rows):
            ratio = f"{peer_ms / r['kernel_ms']:.2f}" if peer_ms and r["n"] == 512000 else "-"
            print(f"{r['n']:>8} {kernel:>10} {r['block']:>5} {r['kernel_ms']:>9.2f} {r['pairs_per_s'] / 1e12:>9.3f} "
                  f"{ratio:>6}{'' if k else '  *'}{'' if r.get('exact', True) else '  WRONG COUNTS'}")
print("targets: 512000 <= 87 ms (1.5 T pairs/s); 2048000 >= 1.7 T pairs/s")
EOF
