#!/usr/bin/env bash
# The regression gate: every workload's headline configuration, and its peer, in one GPU call, then
# bench/regress.py's table against the newest committed figures of the same GPU model. Exit 1 when a
# figure is more than 7% slower beyond the error (the benches' and the peers' timings all come from
# sim.gpu.measure: median ± 95% error), 2 when one could not be measured. Run it after every change a GPU path
# can reach (the CUDA layer, a launcher, a shared header, the render path) and commit OUT_DIR/regress.json
# as bench/results/<model>-regress.json.
#   bench/regress.sh OUT_DIR [PEERS_DIR]     (bench/device.sh regress: with the carried wheels and EGL)
set -uo pipefail  # no -e: a failing bench still leaves the others' figures
out=${1:?usage: bench/regress.sh OUT_DIR [PEERS_DIR]}
peers=${2:-../shared/peers}
[ -d "$peers" ] || peers=.peers
cd "$(dirname "$0")/.."
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
log="$out/regress-log.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv | tee "$log"
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv | tee -a "$log"  # anything else on the GPU
step() { echo "== $1 (at ${SECONDS} s)" | tee -a "$log"; shift; timeout 240 "$@" >> "$log" 2>&1 || echo "   failed: exit $?" | tee -a "$log"; }

# The steps are the scenes' own (each scene's bench_cases: its bench and peer, then the frames with the panel's
# sections all open, each frame in two processes, the best counting): bench/regress.py --commands lists them,
# a label and a tab before each command, with $py, $out and $peers left for this script.
steps=$($py bench/regress.py --commands) || { echo "regress: the gate's steps could not be listed" | tee -a "$log"; exit 2; }
while IFS=$'\t' read -r -u 3 label command; do
  eval "step \"\$label\" $command"
done 3<<< "$steps"

echo "== table (at ${SECONDS} s)" | tee -a "$log"
$py bench/regress.py "$out" | tee -a "$log"
exit "${PIPESTATUS[0]}"
