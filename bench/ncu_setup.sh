# Sourced by ncu_models.sh and ncu_stalls.sh from the repository root: `source bench/ncu_setup.sh OUT_DIR NAME`
# sets out (OUT_DIR, else $OUT, else /tmp/out), py and dir (OUT_DIR/NAME, made), and stops the script when
# Nsight Compute is not on PATH.
out=${1:-${OUT:-/tmp/out}}
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
dir="$out/$2"
mkdir -p "$dir"
command -v ncu >/dev/null || { echo "ncu (Nsight Compute) not found on PATH" >&2; exit 2; }
ncu --version | tail -1
