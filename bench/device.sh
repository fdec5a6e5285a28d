#!/usr/bin/env bash
# One device call: set up the viewer's wheels and EGL libraries (carried as .whl and .gl), then run
# what is asked: `tests` (pytest -m gpu, every GPU test), `regress` (bench/regress.sh: every workload's
# headline figure beside its peer and the last committed figures), or any other bench script under bench/.
# Logs and JSON go to /tmp/out, and back through $OUT as results.tar.gz with the logs.
#   KERNEL_LAB_COMMIT=$(git rev-parse --short=12 HEAD) bench/device.sh tests regress
# (the commit the JSON records: the copied tree's git may describe another one)
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
out=/tmp/out  # the figures and logs; what comes back goes to $OUT at the end (the tool brings back 8 files)
mkdir -p "$out"
if [ -d .gl ]; then for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for what in "$@"; do
  case "$what" in
    tests)
      python3 -m pytest -q -m gpu -p no:cacheprovider 2>&1 | tee "$out/pytest-gpu.log" | tail -25 ;;
    regress)
      bash bench/regress.sh "$out" .peers ;;
    *)
      bash "bench/$what.sh" "$out" ;;
  esac
done
# The device tool brings back a few files: everything in one archive, and the logs beside it.
if [ -n "${OUT:-}" ]; then
  (cd "$out" && tar czf "$OUT/results.tar.gz" -- *) 2>/dev/null
  cp "$out"/*.log "$out"/regress-log.txt "$out"/regress.json "$OUT"/ 2>/dev/null
fi
