"""The distance histogram over ranks: exactly the one-process histogram.

The pairs i < j form a triangle; row i holds the n - 1 - i pairs (i, j > i). Every kernel already
walks that triangle in tiles: a block (or a numba part) owns a run of rows and streams every later
atom past them. A rank takes a band of whole tile rows, [first, last), cut where the pairs before
it reach k/R of the total (so the first band is short and wide, the last tall and narrow: equal
pair counts, not equal row ranges), and runs the existing kernel on it: the atoms from ``first``
on, launched with only the band's blocks. Each rank's 64-bit counts are summed by one all-reduce
(NCCL on the GPU, MPI on the CPU); every pair is counted once, by one rank, with the same
arithmetic, so the result is the one-process histogram bit for bit.
"""

from __future__ import annotations

import dataclasses
import sys
import time

import numpy as np

from sim import resources
from sim.cli import UsageError


def pairs_before(n: int, r: int) -> int:
    """Pairs in rows [0, r) of the triangle of n atoms."""
    return r * (n - 1) - r * (r - 1) // 2


def bands(n: int, parts: int, unit: int = 1) -> list[tuple[int, int]]:
    """Rows [first, last) per part: cuts on multiples of ``unit`` (a kernel's rows per block), each
    at the multiple whose pair count before it is nearest k/parts of the total."""
    total = pairs_before(n, n)
    cuts = [0]
    for k in range(1, parts):
        target = (total * k + parts // 2) // parts
        lo, hi = 0, n  # smallest r with pairs_before(r) >= target
        while lo < hi:
            mid = (lo + hi) // 2
            if pairs_before(n, mid) >= target:
                hi = mid
            else:
                lo = mid + 1
        down = lo // unit * unit
        up = min(n, down + unit)
        cut = down if target - pairs_before(n, down) <= pairs_before(n, up) - target else up
        cuts.append(max(cut, cuts[-1]))
    cuts.append(n)
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def band_pairs(n: int, band: tuple[int, int]) -> int:
    return pairs_before(n, band[1]) - pairs_before(n, band[0])


def rows_per_block(kernel: str, block: int) -> int:
    from sim.sdh.kernels import ATOMS

    return ATOMS * block if kernel == "fast" else block


def band_cpu(points: np.ndarray, width: float, buckets: int, band: tuple[int, int], progress=None) -> np.ndarray:
    """Counts (int64) of the pairs of rows [first, last), with sdh.cpu's tile kernel, in chunks of
    rows sized to about CHUNK_SECONDS each (Ctrl-C within a second, even progress)."""
    import numba

    from sim.sdh import cpu

    p = np.ascontiguousarray(points, np.float64)
    n = p.shape[0]
    parts = 4 * numba.get_num_threads()
    hist = np.zeros((parts, buckets), np.int64)
    pace = cpu.PAIRS_PER_SECOND_PER_THREAD * numba.get_num_threads() / 8  # cautious until measured
    i, last = band
    while i < last:
        rows = min(last - i, max(parts, int(pace * cpu.CHUNK_SECONDS) // max(1, n - 1 - i)))
        start = time.perf_counter()
        cpu._tile(p, i, i + rows, 0, n, width, hist)
        pairs = cpu.tile_pairs(n, i, i + rows, 0, n)
        seconds = time.perf_counter() - start
        if seconds > 1e-3:
            pace = min(pairs / seconds, 4 * pace)
        if progress is not None:
            progress.advance(pairs)
        i += rows
    return hist.sum(axis=0)


class GpuBand:
    """One rank's band on its GPU: sdh.cu's kernel on the atoms from ``first`` on, with the band's blocks."""

    def __init__(self, points, width: float, buckets: int, kernel: str, block: int, band: tuple[int, int],
                 device: int):
        import cupy

        from sim import cuda
        from sim.sdh import gpu, kernels

        self.device = device
        first, last = band
        sub = points[first:]
        m = sub.shape[0]
        _, self.shared, lanes = gpu.launch_shape(kernel, m, block, buckets, device)
        self.blocks = -(-(last - first) // rows_per_block(kernel, block))
        self.block = block
        with cupy.cuda.Device(device):
            p = cupy.ascontiguousarray(cupy.asarray(sub), dtype=cupy.float64)
            x, y, z = (cupy.ascontiguousarray(p[:, k]) for k in range(3))
            self.args = (x, y, z, np.int64(m), np.float64(width), np.int32(buckets))
            if kernel == "fast":  # as sdh/gpu.py: float32 copies in bucket units
                xf = cupy.zeros((m, 4), cupy.float32)
                xf[:, :3] = p * (1.0 / width)
                self.args = (xf, *self.args, np.int32(buckets + gpu.spare_slots_for(buckets)))
            del p
            self.fn = cuda.kernel(kernels.histogram(kernel, block, lanes), device)
            if self.shared > 48 * 1024:
                self.fn.max_dynamic_shared_size_bytes = self.shared
            self.hist = cupy.zeros(buckets, cupy.uint64)
            self._events = (cupy.cuda.Event(), cupy.cuda.Event())

    def launch(self) -> None:
        """Queue the band's kernel on the current stream (counts zeroed first)."""
        import cupy

        with cupy.cuda.Device(self.device):
            self.hist.fill(0)
            self._events[0].record()
            if self.blocks > 0:
                self.fn((self.blocks,), (self.block,), (*self.args, self.hist), shared_mem=self.shared)
            self._events[1].record()

    def kernel_ms(self) -> float:
        import cupy

        self._events[1].synchronize()
        return float(cupy.cuda.get_elapsed_time(*self._events))


@dataclasses.dataclass
class DistributedResult:
    counts: np.ndarray | None  # int64 histogram (every rank)
    wall_ms: float  # from the common start to the summed histogram, as rank 0 saw it
    rank_ms: np.ndarray  # per rank: its own part (kernel events on the GPU, host clock on the CPU)


def histogram(comm, link, points, width: float, buckets: int, backend: str, kernel: str = "fast",
              block: int = 256, device: int = 0, progress=None) -> DistributedResult:
    """The histogram of all pairs over ``comm``'s ranks (each rank holds every atom)."""
    n = points.shape[0]
    unit = rows_per_block(kernel, block) if backend == "gpu" else 1
    band = bands(n, comm.size, unit)[comm.rank]
    if backend == "gpu":
        import cupy

        job = GpuBand(points, width, buckets, kernel, block, band, device)
        with cupy.cuda.Device(device):
            cupy.cuda.Device(device).synchronize()
            comm.barrier()
            start = time.perf_counter()
            job.launch()
            if comm.size > 1:
                link.allreduce(job.hist, "sum")
            counts = cupy.asnumpy(job.hist).astype(np.int64)
            wall = time.perf_counter() - start
            own = job.kernel_ms()
    else:
        comm.barrier()
        start = time.perf_counter()
        part = band_cpu(points, width, buckets, band, progress)
        own = (time.perf_counter() - start) * 1e3
        counts = comm.allreduce(part, "sum")
        wall = time.perf_counter() - start
    rank_ms = comm.allgather(np.array([own]))[:, 0]
    wall_ms = float(comm.allreduce(np.array([wall * 1e3]), "max")[0])
    return DistributedResult(counts, wall_ms, rank_ms)


def run(args, buckets: int, kernels: list[str], block: int, need: resources.Estimate) -> int:
    """``sdh`` on every rank of an MPI launch: the same printout as one process, from rank 0."""
    from sim import dist
    from sim.dist.links import HostLink, gpu_link
    from sim.sdh import data
    from sim.sdh.output import format_histogram

    comm = dist.world()
    share = comm.size if args.backend == "gpu" else comm.hosts
    resources.check(dataclasses.replace(need, seconds=need.seconds / share))
    device = 0
    if args.backend == "gpu":
        from sim.sdh import gpu

        device = dist.gpu_of(comm)
        try:
            for kernel in kernels:
                gpu.launch_shape(kernel, args.atoms, block, buckets, device)
        except gpu.KernelError as exc:
            raise UsageError(str(exc)) from None
    points = data.atoms(args.atoms)
    dist.begin()
    link = gpu_link(comm, device) if args.backend == "gpu" else HostLink(comm)
    root = comm.is_root
    if root:
        where = f"GPU {device} of each" if args.backend == "gpu" else "the CPU"
        print(f"  {comm.size} ranks on {comm.hosts} host(s), {where}; messages: {link.describe()}",
              file=sys.stderr, flush=True)
    pairs = data.pair_count(args.atoms)
    show = need.long and root

    def cpu_counts(label: str) -> DistributedResult:
        with resources.Progress(label, band_pairs(args.atoms, bands(args.atoms, comm.size)[comm.rank]), "pairs",
                                show=show) as progress:
            return histogram(comm, link, points, args.width, buckets, "cpu", progress=progress)

    if args.backend == "cpu":
        result = cpu_counts("CPU histogram (rank 0's band)")
        dist.end()
        if root:
            seconds = result.wall_ms / 1e3
            print(f"Running time for CPU version: {int(seconds)}.{int(seconds % 1 * 1e6):06d}")
            print(format_histogram(result.counts), end="")
        return 0
    results = {}
    for kernel in kernels:
        result = histogram(comm, link, points, args.width, buckets, "gpu", kernel, block, device)
        results[kernel] = result.counts
        if root:
            label = "" if len(kernels) == 1 else f" ({kernel})"
            print(f"Running time for GPU version{label}: {result.wall_ms:0.5f} ms", flush=True)
            print(f"  kernel ms per rank: {', '.join(f'{ms:.3f}' for ms in result.rank_ms)}; whole run (start to the "
                  f"summed histogram on rank 0): {result.wall_ms:.3f} ms", file=sys.stderr, flush=True)
    reference = cpu_counts("CPU histogram for --compare (rank 0's band)").counts if args.compare else None
    link.close()
    dist.end()
    return _print_gpu(results, kernels, reference, pairs) if root else 0


def _print_gpu(results: dict, kernels: list[str], reference, pairs: int) -> int:
    """What sdh.cli prints after the GPU kernels ran (same lines, same exit code)."""
    from sim.sdh.output import format_histogram

    counts = results[kernels[0]]
    print(format_histogram(counts), end="")
    status = 0
    for kernel, other in results.items():
        if not np.array_equal(other, counts):
            print(f"kernel {kernel} disagrees with {kernels[0]}", file=sys.stderr)
            status = 1
    if int(counts.sum()) != pairs:
        print(f"the histogram holds {int(counts.sum())} pairs, not {pairs}", file=sys.stderr)
        status = 1
    if reference is not None:
        difference = counts - reference
        print("\nDifference histogram (GPU - CPU):", end="")
        print(format_histogram(difference), end="")
        if difference.any():
            print(f"{int(np.count_nonzero(difference))} buckets differ", file=sys.stderr)
            status = 1
    return status
