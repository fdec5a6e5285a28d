#!/usr/bin/env bash
# Where a stage's warps wait: Nsight Compute's full set over one window of each stage (as ncu_models.sh
# profiles it), kept as a report, its raw page and its SASS source page (stall samples per instruction), and
# a summary per kernel: issue slots, eligible warps, occupancy, active lanes, the stall reasons, the busiest
# pipes (bench/ncu_stalls.py).
# Usage: NCU_STAGES="particles.forces+move balls.proximity" bash bench/ncu_stalls.sh [OUT_DIR]
# (the stages as `python3 bench/ncu_models.py list` names them; default the two below 70% of their model)
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/ncu_setup.sh "${1:-}" ncu-stalls  # out, py, dir; ncu checked
for stage in ${NCU_STAGES:-particles.forces+move balls.proximity}; do
  name=${stage//+/_}  # a '+' in a file name does not come back from the device
  echo "ncu: $stage (full set) ..."
  ncu --profile-from-start off --target-processes all --set full --import-source no -f -o "$dir/$name" \
      "$py" bench/ncu_models.py run "$stage" "$dir" >"$dir/$name.log" 2>&1 || { echo "ncu: $stage failed" >&2; continue; }
  ncu -i "$dir/$name.ncu-rep" --csv --page raw --print-units base >"$dir/$name.raw.csv" 2>>"$dir/$name.log"
  ncu -i "$dir/$name.ncu-rep" --csv --page source --print-source sass >"$dir/$name.sass.csv" 2>>"$dir/$name.log"
  "$py" bench/ncu_stalls.py "$dir/$name.raw.csv" "$dir/$name.sass.csv" | tee "$dir/$name.txt"
done
cat "$dir"/*.txt >"$out/ncu-stalls.txt" 2>/dev/null
