#!/usr/bin/env bash
# The durbin GPU benchmarks and tests in one device call, beside the yardstick on the same GPU: the
# bench (single systems, exchange probes, the 100000 x 32 batch), .peers/peer_durbin.py, the GPU tests,
# the grid barrier's watchdog test (apart: it plants a fault), then a short table of the targets.
# Every phase has its own time limit (about 235 s in all), so a hang loses one phase, not the call.
#   bench/durbin.sh OUT_DIR        (bench/device.sh durbin runs it with $OUT)
set -uo pipefail
out=${1:-${OUT:-/tmp/out}}
cd "$(dirname "$0")/.."
mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
$py -c "import cupy, scipy, numba, cuda.bindings as b; print('cupy', cupy.__version__, 'scipy', scipy.__version__, \
'numba', numba.__version__, 'cuda-bindings', b.__version__)"

echo "== bench"
timeout 75 $py -m sim.durbin.bench --sizes 4000,20000,65536,200000 \
    --kernel two-kernel,persistent,persistent-cluster,persistent-grid --block 128,256,512 \
    --batch 100000x32 --json "$out/durbin.json" 2>&1 | tee "$out/durbin-bench.log" | tail -60
timeout 25 $py -m sim.durbin.bench --sizes 20000,200000 --kernel persistent-cluster,persistent-grid --block 256 \
    --precision fp32 --json "$out/durbin-fp32.json" 2>&1 | grep -v "^n=\\|^probe" | tail -14

echo "== peer"
timeout 60 $py bench/peer.py .peers/peer_durbin.py --sizes 4000,20000,200000 --batch 100000x32 --json "$out/peer-durbin.json" 2>&1 \
    | tail -12

echo "== GPU tests"
timeout 80 $py -m pytest -q -m gpu -p no:cacheprovider tests/test_durbin_gpu.py -k "not silent" 2>&1 \
    | tee "$out/durbin-pytest-gpu.log" | tail -15
timeout 15 $py -m pytest -q -m gpu -p no:cacheprovider tests/test_durbin_gpu.py -k silent 2>&1 | tail -3

echo "== commands"
timeout 20 $py main.py durbin 200000 --version 4 --input ar --backend gpu --kernel all --compare 2>&1 | tail -6
timeout 20 $py main.py durbin --dataset GIGA --backend gpu --kernel all --hash 2>&1 | tail -6
timeout 25 $py - <<'EOF' 2>&1 | tail -8
import subprocess, sys, wave, numpy as np
from scipy.signal import lfilter
x = 0.05 * lfilter([1.0], [1.0, -1.3, 0.8, -0.2, 0.05], np.random.default_rng(1).normal(size=16000 * 600))
with wave.open("/tmp/speech.wav", "wb") as w:
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
    w.writeframes((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes())
for backend in ("gpu", "cpu"):
    out = subprocess.run([sys.executable, "main.py", "lpc", "/tmp/speech.wav", "--order", "32", "--backend", backend,
                          "--compare"], capture_output=True, text=True)
    print(out.stdout.strip(), out.stderr.strip()[-300:])
EOF

echo "== targets"
$py - "$out" <<'EOF'
import json, sys, os
out = sys.argv[1]
try:
    ours = json.load(open(os.path.join(out, "durbin.json")))["results"]
    peer = json.load(open(os.path.join(out, "peer-durbin.json")))["results"]
except (OSError, ValueError) as exc:
    sys.exit(f"no table: {exc}")
def best(n, prefix):
    rows = [r for r in ours if r.get("n") == n and r["kind"] == "single" and r["method"].startswith(prefix) and "s" in r]
    return min(rows, key=lambda r: r["s"]) if rows else None
p2 = {r["n"]: r["s"] for r in peer if r.get("method") == "two-kernel"}
print(f"{'n':>8} {'peer 2-kernel s':>15} {'our 2-kernel s':>15} {'ratio':>6} {'persistent s':>13} {'us/step':>8} {'x peer':>7}")
for n in sorted(p2):
    two, per = best(n, "two-kernel"), best(n, "persistent")
    print(f"{n:>8} {p2[n]:>15.4f} {two['s'] if two else float('nan'):>15.4f} {two['s'] / p2[n] if two else float('nan'):>6.2f} "
          f"{per['s'] if per else float('nan'):>13.4f} {per['us_per_step'] if per else float('nan'):>8.3f} "
          f"{p2[n] / per['s'] if per else float('nan'):>7.1f}  {per['path'] if per else ''}")
vec = [r["s"] for r in peer if r.get("method") == "cupy-vectorised"]
sci = [r["s"] for r in peer if r.get("method") == "scipy-batched"]
bat = [r for r in ours if r["kind"] == "batch" and r["method"].startswith("batched") and "s" in r]
if bat:
    b = min(bat, key=lambda r: r["s"])
    print(f"batch 100000x32: {b['method']} block {b['block']} {b['s'] * 1e3:.4f} ms; peer vectorised "
          f"{vec[0] * 1e3 if vec else float('nan'):.3f} ms (x{vec[0] / b['s'] if vec else float('nan'):.0f}); "
          f"scipy batched {sci[0] if sci else float('nan'):.3f} s (x{sci[0] / b['s'] if sci else float('nan'):.0f})")
EOF
