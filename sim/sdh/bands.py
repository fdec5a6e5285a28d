"""The distance histogram over ranks: exactly the one-process histogram.

The pairs i < j form a triangle; row i holds the n - 1 - i pairs (i, j > i). Every kernel walks it
in block rows: a block owns a run of rows (a numba part likewise) and streams every later atom past
them, so block row k of K holds about K - k units of work. Folded, block row k and its mirror
K - 1 - k hold about the same work for every k; the folded rows are cut into R runs of equal pair
counts (not equal row ranges), so a rank gets a band of long rows from the front and the band of
short rows that mirrors it at the back. The existing kernel runs on each band: the atoms from the
band's first row on, launched with only the band's blocks; the two bands go on two streams, so the
short blocks fill the GPU while the long band's last wave drains. Each rank's 64-bit counts are
summed by one all-reduce (NCCL on the GPU, MPI on the CPU); every pair is counted once, by one rank,
with the same arithmetic: the result is the one-process histogram bit for bit.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from sim.cmdline import interrupts
from sim.gpu import cuda
from sim.gpu.cuda import ceil_div
from sim.sdh import kernels
from sim.sdh.kernels import rows_per_block


def pairs_before(n: int, r):
    """Pairs in rows [0, r) of the triangle of n atoms (r an int or an int64 array)."""
    return r * (n - 1) - r * (r - 1) // 2


def shares(n: int, parts: int, unit: int = 1) -> list[list[tuple[int, int]]]:
    """Each part's rows as one or two bands [first, last), each starting on a multiple of ``unit`` (a
    kernel's rows per block): folded block rows cut into ``parts`` runs, each cut where the pairs
    before it are nearest k/parts of the total."""
    blocks = ceil_div(n, unit)
    folded = (blocks + 1) // 2  # block row j with its mirror blocks - 1 - j (the middle one alone)
    edges = np.minimum(np.arange(blocks + 1, dtype=np.int64) * unit, n)
    rows = np.diff(pairs_before(n, edges))  # pairs of each block row
    mirror = rows[blocks - 1 - np.arange(folded)]
    mirror[np.arange(folded) == blocks - 1 - np.arange(folded)] = 0
    work = np.concatenate([[0], np.cumsum(rows[:folded] + mirror)])
    cuts = [0]
    for k in range(1, parts):
        target = (int(work[-1]) * k + parts // 2) // parts
        j = int(np.searchsorted(work, target))
        j = j - 1 if j > 0 and target - work[j - 1] <= work[min(j, folded)] - target else j
        cuts.append(min(max(j, cuts[-1]), folded))
    cuts.append(folded)
    out = []
    for j0, j1 in zip(cuts[:-1], cuts[1:], strict=True):
        front = (int(edges[j0]), int(edges[j1]))
        back = (int(edges[max(blocks - j1, j1)]), int(edges[blocks - j0]))
        bands = [b for b in (front, back) if b[1] > b[0]]
        if len(bands) == 2 and bands[0][1] == bands[1][0]:
            bands = [(bands[0][0], bands[1][1])]
        out.append(bands)
    return out


def share_pairs(n: int, bands: list[tuple[int, int]]) -> int:
    return sum(pairs_before(n, last) - pairs_before(n, first) for first, last in bands)


def share_cpu(
    points: np.ndarray, width: float, buckets: int, bands: list[tuple[int, int]], progress=None
) -> np.ndarray:
    """Counts (int64) of the pairs of the bands' rows, with sdh_cpu's tile kernel, in chunks of rows
    sized to about CHUNK_SECONDS each (Ctrl-C within a second, even progress)."""
    import numba

    from sim.sdh import sdh_cpu

    p = np.ascontiguousarray(points, np.float64)
    n = p.shape[0]
    parts = 4 * numba.get_num_threads()
    hist = np.zeros((parts, buckets), np.int64)
    pace = sdh_cpu.PAIRS_PER_SECOND_PER_THREAD * numba.get_num_threads() / 8  # cautious until measured
    for i, last in bands:
        while i < last:
            rows = min(last - i, max(parts, int(pace * sdh_cpu.CHUNK_SECONDS) // max(1, n - 1 - i)))
            start = time.perf_counter()
            sdh_cpu._tile(p, i, i + rows, 0, n, width, hist)
            pairs = sdh_cpu.tile_pairs(n, i, i + rows, 0, n)
            seconds = time.perf_counter() - start
            if seconds > 1e-3:
                pace = min(pairs / seconds, 4 * pace)
            if progress is not None:
                progress.advance(pairs)
            i += rows
            interrupts.check()
    return hist.sum(axis=0)


class GpuShare:
    """One rank's bands on its GPU: sdh.cu's kernel on the atoms from each band's first row on, with the
    band's blocks, each band on a stream of its own, all counting into one histogram. The kernel's inputs
    are made once from every atom (sdh/gpu.py arguments: the tensor kernel's centre, error bound and
    counters are those of the one-process run) and each band launches on views from its first row."""

    def __init__(
        self, points, width: float, buckets: int, kernel: str, block: int, bands: list[tuple[int, int]], device: int
    ):
        import cupy

        from sim.sdh import gpu

        self.device, self.block = device, block
        n = points.shape[0]
        self.jobs = []
        with cupy.cuda.Device(device):
            p = cupy.ascontiguousarray(cupy.asarray(points), dtype=cupy.float64)
            args, slots, one_add = gpu.arguments(kernel, p, width, buckets)
            del p
            _, self.shared, lanes = gpu.launch_shape(kernel, n, block, buckets, device, slots)
            for first, last in bands:
                blocks = ceil_div(last - first, rows_per_block(kernel, block))
                self.jobs.append((blocks, gpu.from_row(args, first), cupy.cuda.Stream(non_blocking=True)))
            self.fn = cuda.kernel(kernels.histogram(kernel, block, lanes, one_add), device)
            if self.shared > 48 * 1024:
                self.fn.max_dynamic_shared_size_bytes = self.shared
            self.hist = cupy.zeros(buckets, cupy.uint64)
            self._events = (cupy.cuda.Event(), cupy.cuda.Event())

    def launch(self) -> None:
        """Queue the bands' kernels after the current stream's work (counts zeroed first); the current
        stream waits for them."""
        import cupy

        with cupy.cuda.Device(self.device):
            main = cupy.cuda.get_current_stream()
            self.hist.fill(0)
            self._events[0].record(main)
            for blocks, args, stream in self.jobs:
                with stream:
                    stream.wait_event(self._events[0])
                    if blocks > 0:
                        self.fn((blocks,), (self.block,), (*args, self.hist), shared_mem=self.shared)
                    done = stream.record()
                main.wait_event(done)
            self._events[1].record(main)

    def kernel_ms(self) -> float:
        import cupy

        self._events[1].synchronize()
        return float(cupy.cuda.get_elapsed_time(*self._events))


@dataclasses.dataclass
class DistributedResult:
    counts: np.ndarray  # int64 histogram (every rank)
    wall_ms: float  # from the common start to the summed histogram, as rank 0 saw it
    rank_ms: np.ndarray  # per rank: its own part (kernel events on the GPU, host clock on the CPU)


def histogram(
    comm,
    link,
    points,
    width: float,
    buckets: int,
    backend: str,
    kernel: str = "fast",
    block: int = 256,
    device: int = 0,
    progress=None,
) -> DistributedResult:
    """The histogram of all pairs over ``comm``'s ranks (each rank holds every atom)."""
    n = points.shape[0]
    unit = rows_per_block(kernel, block) if backend == "gpu" else 1
    mine = shares(n, comm.size, unit)[comm.rank]
    if backend == "gpu":
        import cupy

        job = GpuShare(points, width, buckets, kernel, block, mine, device)
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
        part = share_cpu(points, width, buckets, mine, progress)
        own = (time.perf_counter() - start) * 1e3
        counts = comm.allreduce(part, "sum")
        wall = time.perf_counter() - start
    rank_ms = comm.allgather(np.array([own]))[:, 0]
    wall_ms = float(comm.allreduce(np.array([wall * 1e3]), "max")[0])
    return DistributedResult(counts, wall_ms, rank_ms)
