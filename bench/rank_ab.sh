#!/usr/bin/env bash
# One GPU rank (no neighbours) of several trees in turns on one machine (bench/rank_one.py): what tells a
# change in a rank's step from call-to-call noise. Make the other trees here, then carry them with the wheels:
#   rm -rf .base && mkdir .base && git archive BASE sim assets | tar -x -C .base
#   bench/device.sh rank_ab       (carry .whl, .gl and .base; TREES=".base . .other" for more trees,
#                                  SIZES="1e7 5e7" (default), ROUNDS=2 (default) turns of every tree)
# About 30 s a round at 10M and 60 s at 50M for two trees, on an H200.
set -uo pipefail
out=${1:-/tmp/out}
trees=${TREES:-.base .}
for tree in $trees; do
  if [ ! -d "$tree/sim" ]; then
    echo "no tree in $tree/: make it with git archive (see the top of bench/rank_ab.sh)" >&2
    exit 2
  fi
done
for n in ${SIZES:-1e7 5e7}; do
  for round in $(seq "${ROUNDS:-2}"); do
    for tree in $trees; do
      timeout 200 python3 bench/rank_one.py "$tree" "$n" 2>&1 | tail -1 | tee -a "$out/rank-ab.log"
    done
  done
done
[ -f "$out/rank-ab.log" ] && python3 bench/rank_one.py --table "$out/rank-ab.log"  # as bench/results/*-ab-*.txt keep them
