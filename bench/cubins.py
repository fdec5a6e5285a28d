"""A digest of every product build's cubin (sm_90, this machine's NVRTC), one line a build, in a stable order.

A change to a .cu or .cuh that should not change the code (moving kernels into a header, a comment, a rename
of a local) can be checked without a GPU: the digests before and after are the same line for line.

    python bench/cubins.py > /tmp/before.txt    (then change the source)
    python bench/cubins.py | diff /tmp/before.txt -

Only the code: a cubin built from the same preprocessed tokens is the same byte for byte; a header's #line
markers and comments do not reach it. A different NVRTC may compile the same tokens differently, so compare
digests from one machine. Needs cuda-bindings (the [test] extra); no GPU.
"""

from __future__ import annotations

import hashlib
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sim.gpu import cuda, nvrtc  # noqa: E402
from sim.registry import all_builds  # noqa: E402

ARCH = "sm_90"


def digest(build: cuda.Build) -> str:
    """The first 16 hex digits of the SHA-256 of the build's cubin; ``failed: ...`` with NVRTC's first line."""
    out = nvrtc.run_here(cuda.source_text(build.source), build.source, build.all_options(), ARCH)
    if not out.ok:
        return "failed: " + (out.log.strip().splitlines() or ["(no log)"])[0]
    return hashlib.sha256(out.binary).hexdigest()[:16]


def lines(builds) -> list[str]:
    builds = sorted(set(builds), key=lambda b: (b.source, b.options))
    with ThreadPoolExecutor(max_workers=len(os.sched_getaffinity(0))) as pool:
        digests = list(pool.map(digest, builds))
    return [f"{d}  {b.source} {' '.join(b.options)}".rstrip() for d, b in zip(digests, builds, strict=True)]


def main() -> int:
    found = lines(all_builds())
    print("\n".join(found))
    return 1 if any(" failed: " in f or f.startswith("failed: ") for f in found) else 0


if __name__ == "__main__":
    sys.exit(main())
