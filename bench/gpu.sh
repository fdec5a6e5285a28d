#!/usr/bin/env bash
# The GPU benchmarks behind bench/results/: the product's benches and the peer yardsticks, in one
# call on the same GPU. Usage: bench/gpu.sh OUT_DIR [PEERS_DIR]
#   OUT_DIR    where the JSON files and logs go
#   PEERS_DIR  folder with peer_balls.py and peer_particles.py (default ../shared/peers)
set -euo pipefail
out=${1:?usage: bench/gpu.sh OUT_DIR [PEERS_DIR]}
peers=${2:-../shared/peers}
cd "$(dirname "$0")/.."
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1

# balls: the seed's lattices, every variant and block size
$py main.py bench balls --backend gpu --preset T,t --variant all --block 32,64,128,256,512,1024 \
    --steps 600 --json "$out/balls-gpu-lattices.json"
# balls: large drops (the block preset widens the trough past 27k balls), every variant
$py main.py bench balls --backend gpu --preset block -n 100000,1000000,10000000 --variant all --block 128 \
    --steps 120 --json "$out/balls-gpu-large.json"
# balls: block sizes at 1M for the grid and the fastest z-sweep
$py main.py bench balls --backend gpu --preset block -n 1000000 --variant grid,shared \
    --block 32,64,128,256,512,1024 --steps 120 --json "$out/balls-gpu-blocks.json"
$py bench/peer.py "$peers/peer_balls.py" --sizes 100000,1000000,10000000 --steps 60 --json "$out/peer-balls.json"

# particles: the report's sizes, every variant, fp64 (the course's precision) and fp32
$py main.py bench particles --backend gpu --sizes 5000,20000,80000,320000,1280000,5120000,10000000 \
    --variant all --block 128,256 --steps 1000 --json "$out/particles-gpu.json"
$py main.py bench particles --backend gpu --sizes 1000000,10000000 --variant plain --precision fp32 \
    --steps 1000 --json "$out/particles-gpu-fp32.json"
$py bench/peer.py "$peers/peer_particles.py" --sizes 1000000,5120000,10000000 --steps 1000 --json "$out/peer-particles.json"
