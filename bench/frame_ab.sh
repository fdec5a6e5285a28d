#!/usr/bin/env bash
# The frame figure (1M balls at 1920x1080, picking) of this tree and of an older commit's tree, taken in
# turns on one machine: what tells a change in the frame's path from another machine's host CPU (a 1M-ball
# frame is mostly host work). Make the older tree here, then carry it with the wheels:
#   rm -rf .base && mkdir .base && git archive BASE sim viewer shaders assets | tar -x -C .base
#   bench/device.sh frame_ab            (carry .whl, .gl and .base; ROUNDS=4 for more turns, default 2)
set -uo pipefail
out=${1:-/tmp/out}
if [ ! -d .base/viewer ]; then
  echo "no older tree in .base/: make it with git archive (see the top of bench/frame_ab.sh)" >&2
  exit 2
fi
lscpu | grep -E "^Model name" | tr -s ' '
for round in $(seq "${ROUNDS:-2}"); do
  for tree in .base .; do
    label=$([ "$tree" = . ] && echo "this tree" || echo "older tree")
    (cd "$tree" && python3 -m viewer.bench.frame -n 1000000 --size 1920x1080 --backend gpu --headless --frames 60 \
       --pick --json "$out/frame-ab-$round-${label// /-}.json") 2>&1 | grep -E "^(whole frame|split|picking)" \
       | cut -c1-160 | sed "s#^#$label, round $round: #"
  done
done
