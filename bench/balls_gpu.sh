#!/usr/bin/env bash
# The balls GPU benchmarks behind bench/results/: the product's bench and the peer yardstick in one
# call on the same GPU. Usage: bench/balls_gpu.sh OUT_DIR [PEER_SCRIPT]
#   OUT_DIR      where the JSON files go
#   PEER_SCRIPT  path to peer_balls.py (the yardstick; default ../shared/peers/peer_balls.py)
set -euo pipefail
out=${1:?usage: bench/balls_gpu.sh OUT_DIR [PEER_SCRIPT]}
peer=${2:-../shared/peers/peer_balls.py}
cd "$(dirname "$0")/.."
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
# the seed's lattices, every variant and block size
$py main.py bench balls --backend gpu --preset T,t --variant all --block 32,64,128,256,512,1024 \
    --steps 600 --json "$out/balls-gpu-lattices.json"
# large drops (the block preset widens the trough past 27k balls), every variant
$py main.py bench balls --backend gpu --preset block -n 100000,1000000,10000000 --variant all --block 128 \
    --steps 120 --json "$out/balls-gpu-large.json"
# block sizes at 1M for the grid and the fastest z-sweep
$py main.py bench balls --backend gpu --preset block -n 1000000 --variant grid,shared \
    --block 32,64,128,256,512,1024 --steps 120 --json "$out/balls-gpu-blocks.json"
$py "$peer" --sizes 100000,1000000,10000000 --steps 60 --json "$out/peer-balls.json"
