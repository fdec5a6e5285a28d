#!/usr/bin/env bash
# The regression gate: every workload's headline configuration, and its peer, in one GPU call, then
# bench/regress.py's table against the newest committed figures of the same GPU model. Exit 1 when a
# figure is more than 7% slower beyond the error (the benches' and the peers' timings all come from
# sim.measure: median ± 95% error), 2 when one could not be measured. Run it after every change a GPU path
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

step "balls 10M grid" $py main.py bench balls --backend gpu --preset block -n 10000000 --variant grid --block 128 \
    --steps 120 --json "$out/balls.json"
step "peer balls 10M" $py bench/peer.py "$peers/peer_balls.py" --sizes 10000000 --steps 60 --json "$out/peer-balls.json"
step "particles 10M plain" $py main.py bench particles --backend gpu --sizes 10000000 --variant plain --block 128 \
    --steps 1000 --json "$out/particles.json"
step "peer particles 10M" $py bench/peer.py "$peers/peer_particles.py" --sizes 10000000 --methods counting --steps 1000 \
    --json "$out/peer-particles.json"
step "sdh 512000 tensor" $py main.py bench sdh -n 512000 --kernel tensor --block 256 --json "$out/sdh.json"
step "peer sdh 512000" $py bench/peer.py "$peers/peer_sdh.py" --sizes 512000 --naive-max 0 --json "$out/peer-sdh.json"
step "heat 10000^2 temporal" $py main.py bench heat --sizes 10000 --kernel temporal --block 32x8 --k 8 --steps 200 \
    --json "$out/heat.json"
step "peer heat 10000^2" $py bench/peer.py "$peers/peer_heat.py" --n 10000 --json "$out/peer-heat.json"
step "durbin 200000 and 100000x32" $py main.py bench durbin --sizes 200000 --kernel persistent-grid \
    --batch 100000x32 --json "$out/durbin.json"
step "peer durbin" $py bench/peer.py "$peers/peer_durbin.py" --sizes 200000 --scipy-max 0 --json "$out/peer-durbin.json"
# The frames with the panel's sections all open (the frame bench's default --panel all), as a user has the window.
for run in 1 2; do  # a frame is mostly host work: its best of two processes counts (bench/regress.py)
  suffix=$([ $run = 1 ] || echo -run$run)
  step "frame 1M balls 1920x1080, picking (run $run)" $py -m viewer.bench.frame -n 1000000 --size 1920x1080 \
      --backend gpu --headless --frames 60 --pick --json "$out/frame$suffix.json"
  step "frame heat 10000^2 1920x1080 (run $run)" $py -m viewer.bench.frame --scene heat --preset large \
      -n 100000000 --size 1920x1080 --backend gpu --headless --frames 60 --json "$out/frame-heat$suffix.json"
done

echo "== table (at ${SECONDS} s)" | tee -a "$log"
$py bench/regress.py "$out" | tee -a "$log"
exit "${PIPESTATUS[0]}"
