#!/usr/bin/env bash
# The speed-of-light models (sim.gpu.roofline, each scene's kernels.models) against Nsight Compute: every GPU
# stage's headline configuration, one window of the stage profiled (DRAM bytes read and written, SASS
# instructions and FLOP counts), then the table of model vs ncu per stage (bench/ncu_models.py).
# Usage: bash bench/ncu_models.sh [OUT_DIR]   (default $OUT, else /tmp/out; bench/device.sh passes /tmp/out)
# NCU_STAGES="balls.proximity heat.step": those stages only (as `python3 bench/ncu_models.py list` names them).
# Writes OUT_DIR/ncu/<stage>.csv (ncu's raw page), <stage>.model.json, <stage>.log and OUT_DIR/ncu-models.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/ncu_setup.sh "${1:-}" ncu  # out, py, dir; ncu checked
profile() {  # stage metrics
  ncu --profile-from-start off --target-processes all --csv --page raw --print-units base --metrics "$2" \
      --log-file "$dir/$1.csv" "$py" bench/ncu_models.py run "$1" "$dir" >"$dir/$1.log" 2>&1
}
for stage in ${NCU_STAGES:-$("$py" bench/ncu_models.py list)}; do
  echo "ncu: $stage ..."
  if ! profile "$stage" "$("$py" bench/ncu_models.py metrics)" || ! grep -q '^"[0-9]' "$dir/$stage.csv"; then
    echo "ncu: $stage again without the DMMA count (see $dir/$stage.log)"
    profile "$stage" "$("$py" bench/ncu_models.py metrics --no-tensor)" || echo "ncu: $stage failed" >&2
  fi
done
"$py" bench/ncu_models.py table "$dir" | tee "$out/ncu-models.txt"
