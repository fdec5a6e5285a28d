#!/usr/bin/env bash
# One device call: set up the viewer's wheels and EGL libraries (carried as .whl and .gl), then run
# what is asked: `tests` (pytest -m gpu, every GPU test; those that make a kernel fault on purpose in a run of
# their own after every other step), `regress` (bench/regress.sh: every workload's
# headline figure beside its peer and the last committed figures), or any other bench script under bench/.
# Logs and JSON go to /tmp/out, and back through $OUT as results.tar.gz with the logs, after each step
# (a call cut short still brings back what finished).
#   KERNEL_LAB_COMMIT=8afb642b1c2d bench/device.sh regress tests
# (the commit written out where the call is made: on the device, git may describe an older commit than the
# copied tree, so a $(git rev-parse HEAD) evaluated there records the wrong one)
#   GPU_TESTS="tests/test_[a-p]*.py" bench/device.sh tests     (half of the GPU tests)
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
out=/tmp/out  # the figures and logs; what comes back goes to $OUT after each step (the tool brings back 8 files)
mkdir -p "$out"
if [ -d .gl ]; then for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
source bench/wheels.sh  # the carried wheels, on PYTHONPATH
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
bring_back() {  # the device tool brings back a few files: everything in one archive, and the logs beside it
  [ -n "${OUT:-}" ] || return 0
  (cd "$out" && tar czf "$OUT/results.tar.gz" -- *) 2>/dev/null
  cp "$out"/*.log "$out"/regress-log.txt "$out"/regress.json "$OUT"/ 2>/dev/null
  return 0
}
faults=  # the GPU tests that make a kernel fault on purpose: a pytest run of their own, the call's last step
gpu_tests() {  # LOG_NAME PYTEST_ARGS...: one pytest run, its log written where it comes back as it grows
  local name=$1 log; shift
  log="${OUT:-$out}/$name"
  python3 -m pytest -v -p no:cacheprovider -ra "$@" > "$log" 2>&1
  echo "pytest exit $?" >> "$log"
  [ "$log" -ef "$out/$name" ] || cp "$log" "$out/$name"
  grep -E "^(FAILED|ERROR)|passed|failed|pytest exit" "$log" | tail -30
}
for what in "$@"; do
  case "$what" in
    tests)  # GPU_TESTS: the files to run (default all: 352 s on an H100 at 8afb642, the gate 140 s more). The
            # tests marked gpu_fault (a kernel that faults on purpose) run after every other step: after an MMU
            # fault the driver makes later GL draws of CUDA-written data on that GPU stall (tests/conftest.py)
      # On a machine of several GPUs, one pytest worker a GPU (tests/conftest.py gives each its own)
      gpus=$(nvidia-smi -L | wc -l)
      spread=()
      if [ "$gpus" -gt 1 ] && python3 -c "import xdist" 2>/dev/null; then
        export KERNEL_LAB_TEST_GPUS=$gpus
        spread=(-n "$gpus" --dist loadfile)
      fi
      # shellcheck disable=SC2086
      gpu_tests pytest-gpu.log -m gpu --durations=25 "${spread[@]}" ${GPU_TESTS:-tests}
      faults=${GPU_TESTS:-tests} ;;
    regress)
      bash bench/regress.sh "$out" .peers ;;
    *)
      bash "bench/$what.sh" "$out" ;;
  esac
  bring_back  # after each step: a call cut short by its time limit still brings back what finished
done
if [ -n "$faults" ]; then
  # shellcheck disable=SC2086
  gpu_tests pytest-gpu-fault.log -m gpu_fault $faults
  bring_back
fi
