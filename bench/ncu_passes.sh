#!/usr/bin/env bash
# Every proximity pass of the balls' headline bench under Nsight Compute: each grid search's warp instructions,
# time and clock at the GPU's own clock and caches, beside the pass's tests (the bench's record), the timed
# passes' average, and the line through them that the balls' model takes (bench/ncu_passes.py;
# GRID_INSTRUCTIONS_A_BALL and _A_TEST in sim/balls/kernels.py). Run it after a change to the grid search.
# Usage: bash bench/ncu_passes.sh [OUT_DIR]   (bench/device.sh ncu_passes; about 20 s on an H200)
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/ncu_setup.sh "${1:-}" ncu-passes  # out, py, dir; ncu checked
ncu --target-processes all --cache-control none --clock-control none -k regex:^sweep$ \
    --metrics smsp__inst_executed.sum,gpu__time_duration.sum,launch__grid_size,smsp__cycles_elapsed.avg.per_second \
    --csv --print-units base --log-file "$dir/sweeps.csv" \
    "$py" main.py bench balls --backend gpu --preset block -n 10000000 --variant grid --block 128 --steps 240 \
    --quiet --json "$dir/bench.json" > "$dir/bench.log" 2>&1 \
  || { echo "ncu_passes: the bench failed" >&2; tail -5 "$dir/bench.log" >&2; exit 1; }
"$py" bench/ncu_passes.py "$dir" | tee "$out/ncu-passes.txt"
