#!/usr/bin/env bash
# Multi-GPU scaling in one call: the distance histogram (N = 2M and 10M, W = 500, fast kernel, every
# histogram checked against the one-GPU histogram) and the particles (100M strong, 50M per GPU weak,
# 1000 steps, fp64) for R = 1, 2, 4 ranks, up to the machine's GPUs (at most 4), one MPI rank per GPU.
#
#   bench/multigpu.sh [OUT_DIR] [tests] [sdh] [particles]   on a GPU machine (default OUT_DIR: $OUT or /tmp/out;
#                                                            default parts: sdh particles)
#   bench/multigpu.sh --cpu [OUT_DIR] [sdh] [particles]      CPU ranks and small sizes: the same tables anywhere
# tests: pytest -m gpu on the multi-rank tests (tests/test_mpi_*.py), with this script's MPI.
# On a copied tree (the device tool's) set KERNEL_LAB_COMMIT=<sha12>: git there may describe another commit,
# and the JSON records would name it. On a GPU machine the wheels carried in .whl/ are installed first, as
# bench/device.sh installs them (bench/wheels.sh), so the script runs on a fresh machine by itself.
#
# MPI: mpiexec beside the Python (a venv with the [mpi] extra) or on the PATH, if mpi4py runs over it;
# otherwise the mpich and mpi4py wheels carried in .whl/mpi/ (installed under /tmp/mpi). NVLink
# multicast is never used: NCCL_NVLS_ENABLE=0 is exported for every rank.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # Open MPI's mpiexec, run as root
command -v ssh > /dev/null || export OMPI_MCA_plm=^rsh  # one host without ssh: Open MPI starts ranks locally
mode=gpu
if [ "${1:-}" = --cpu ]; then mode=cpu; shift; fi
[ "$mode" = gpu ] && source bench/wheels.sh  # the carried wheels (bench/device.sh's), on PYTHONPATH
out=${OUT:-/tmp/out}
if [ $# -gt 0 ] && [ "$1" != sdh ] && [ "$1" != particles ] && [ "$1" != tests ]; then out=$1; shift; fi
parts=${*:-sdh particles}
mkdir -p "$out"
py=${PYTHON:-python3}
[ -x .venv/bin/python ] && [ -z "${PYTHON:-}" ] && [ "$mode" = cpu ] && py=.venv/bin/python

mpi_works() {  # $1: an mpiexec; two ranks of $py must see each other
  "$1" -n 2 "$py" -c "from mpi4py import MPI; import sys; sys.exit(MPI.COMM_WORLD.Get_size() != 2)" >/dev/null 2>&1
}
mpiexec=""
for candidate in "$(dirname "$(command -v "$py")")/mpiexec" "$(command -v mpiexec || true)"; do
  if [ -x "$candidate" ] && mpi_works "$candidate"; then mpiexec=$candidate; break; fi
done
if [ -z "$mpiexec" ] && ls .whl/mpi/*.whl >/dev/null 2>&1; then
  echo "no working MPI here: installing the carried wheels ($(ls .whl/mpi | tr '\n' ' '))"
  "$py" -m pip install -q --no-index --no-deps --no-compile --prefix /tmp/mpi .whl/mpi/*.whl || exit 1
  site=$(echo /tmp/mpi/lib/python3*/site-packages)
  export PATH=/tmp/mpi/bin:$PATH LD_LIBRARY_PATH=/tmp/mpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
  mpi_works /tmp/mpi/bin/mpiexec && mpiexec=/tmp/mpi/bin/mpiexec
fi
if [ -z "$mpiexec" ]; then
  echo "no MPI: install the [mpi] extra (pip install -e '.[mpi]'), or carry the mpich and mpi4py wheels in .whl/mpi/"
  exit 1
fi
echo "MPI: $mpiexec ($("$py" -c 'from mpi4py import MPI; print(MPI.Get_library_version().splitlines()[0].strip())'))"

if [ "$mode" = gpu ]; then
  gpus=$(nvidia-smi -L | wc -l)
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader
  nvidia-smi topo -m 2>/dev/null | head -$((gpus + 1))
  ranks=$((gpus < 4 ? gpus : 4))
  tag=$(echo "$name" | tr 'A-Z' 'a-z' | sed 's/nvidia //; s/[^a-z0-9]//g')x$ranks  # e.g. h200x2
  sdh_args=(--sizes 2M,10M --kernel fast --width 500)
  particle_args=(--backend gpu --sizes 50M,100M --steps 1000 --variant plain)
  [ "$ranks" -lt 2 ] && echo "only $gpus GPU here: the tables have the one-GPU row only"
else
  ranks=4  # on any machine; mpich's hydra runs more ranks than cores
  tag=cpux$ranks
  sdh_args=(--backend cpu --sizes 20000,40000 --width 500)
  particle_args=(--backend cpu --sizes 20000,40000 --steps 100)
fi
echo "ranks: up to $ranks ($mode); results: $out/$tag-*.json"
echo "the records' commit: ${KERNEL_LAB_COMMIT:-as git describes this tree (KERNEL_LAB_COMMIT is not set)}"
status=0
start=$SECONDS
if [[ " $parts " == *" tests "* ]]; then
  "$py" -m pytest -q -m gpu -p no:cacheprovider tests/test_mpi_*.py 2>&1 | tee "$out/$tag-pytest-mpi-gpu.txt" \
    | tail -15 || status=1
  echo "tests: $((SECONDS - start)) s"
fi
if [[ " $parts " == *" sdh "* ]]; then
  "$mpiexec" -n "$ranks" "$py" main.py bench sdh "${sdh_args[@]}" --json "$out/$tag-sdh-scaling.json" \
    2>&1 | tee "$out/$tag-sdh-scaling.log" | grep -v '^  \(strong\|weak\) n=' || status=1
  echo "sdh: $((SECONDS - start)) s"
fi
if [[ " $parts " == *" particles "* ]]; then
  "$mpiexec" -n "$ranks" "$py" main.py bench particles "${particle_args[@]}" \
    --json "$out/$tag-particles-scaling.json" 2>&1 | tee "$out/$tag-particles-scaling.log" \
    | grep -v '^  \(strong\|weak\) n=' || status=1
  echo "particles: $((SECONDS - start)) s"
fi

# The summary, last: speedups, efficiencies, exactness, halo against the force kernel
"$py" - "$out" "$tag" <<'EOF' || status=1
import json, pathlib, sys
out, tag = pathlib.Path(sys.argv[1]), sys.argv[2]
bad = False
speedup = lambda r: f"speedup {r['speedup']:5.2f}x" if r["speedup"] else " " * 14
for part in ("sdh", "particles"):
    path = out / f"{tag}-{part}-scaling.json"
    if not path.exists():
        continue
    rep = json.loads(path.read_text())
    print(f"\n{part}: {rep['device']}, {rep['ranks']} ranks, {rep['transport']}")
    for r in rep["results"]:
        if part == "sdh":
            ok = r["histogram_equals_one_rank"]
            bad |= not ok
            print(f"  {r['scaling']:6} n={r['n']:>11,} R={r['ranks']}: {r['total_ms']:10.1f} ms  "
                  f"{speedup(r)}  efficiency {r['efficiency']:6.1%}  exact {'yes' if ok else 'NO'}")
        else:
            forces = max(p["stage_ms"]["forces+move"] for p in r["per_rank"])
            exchange = max(p["exchange_ms"] for p in r["per_rank"])
            bad |= r["identical_to_one_rank"] is False
            print(f"  {r['scaling']:6} n={r['n']:>11,} R={r['ranks']}: {r['step_ms']:8.3f} ms/step  "
                  f"{speedup(r)}  efficiency {r['efficiency']:6.1%}  "
                  f"halo {r['halo_bytes_per_step'] / 1e3:8.1f} KB/step  exchange {exchange:.3f} ms "
                  f"vs forces {forces:.3f} ms")
sys.exit(1 if bad else 0)
EOF
echo "total: $((SECONDS - start)) s; exit $status"
exit $status
