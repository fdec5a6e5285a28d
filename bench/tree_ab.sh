#!/usr/bin/env bash
# A product benchmark of several trees in turns on one machine: what tells a change in a kernel from
# call-to-call noise. Make the other trees here, then carry them with the wheels:
#   rm -rf .base && mkdir .base && git archive BASE main.py sim assets | tar -x -C .base
#   BENCH="particles --sizes 10000000 --variant plain --block 128 --steps 1000" bench/device.sh tree_ab
# (carry .whl, .gl and .base; TREES=".base . .other" for more trees, ROUNDS=3 (default) turns of every tree;
# BENCH: the arguments of `main.py bench` after --backend gpu, default the gate's particles figure).
# Each run's stage medians go to OUT/tree-ab.log, one line a stage, the tree first.
set -uo pipefail
out=${1:-/tmp/out}
trees=${TREES:-.base .}
bench=${BENCH:-particles --sizes 10000000 --variant plain --block 128 --steps 1000}
for tree in $trees; do
  if [ ! -f "$tree/main.py" ]; then
    echo "no tree in $tree/: make it with git archive (see the top of bench/tree_ab.sh)" >&2
    exit 2
  fi
done
for round in $(seq "${ROUNDS:-3}"); do
  for tree in $trees; do
    # shellcheck disable=SC2086
    if ! (cd "$tree" && timeout 300 python3 main.py bench $bench --backend gpu) >"$out/tree-ab.run" 2>&1; then
      echo "$tree r$round: main.py bench failed:" >&2
      tail -5 "$out/tree-ab.run" >&2  # a bad option or count says why here, not in the log below
    fi
    grep -E '^  [a-z].* ± ' "$out/tree-ab.run" | sed "s|^|$tree r$round |" | tee -a "$out/tree-ab.log"
  done
done
