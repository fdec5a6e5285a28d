// CS 267 particles on the GPU: the twin of binning_cpu.py (same forces, same walls).
//
// Bins at least a cutoff wide, numbered row by row; in a numbering's order the 9 neighbour bins of a
// particle are three contiguous runs (start[]: each bin's first slot).
//
// One GPU: the particles are binned afresh only when they have moved too far from their bins.
//   step         forces from the 9 bins, move, reflect; the state written at the thread's own row. Right
//                after a binning it reads each slot's particle through perm (the state leaves in bin
//                order); otherwise by row: the rows are in the numbering's order and each particle has
//                moved less than `margin` (a bin less the cutoff, less 1% for rounding) along either
//                axis since, so every particle within the cutoff of mine now is in the 9 bins of the
//                numbering around my bin now. The step keeps the largest move along an axis. On a step
//                that rebin_place foresaw binning (calm[4]) it counts each moved particle into its bin,
//                as rebin_count would: the binning saves a pass over the state (10M on an H200: 43 us
//                in the step against 106 in rebin_count).
//   rebin_count  whether the moves since the numbering (their sum of step maxima) may pass the margin, or
//                the step counted; if binning and the step did not count, each particle counted into its
//                bin (the atomic's old value: its offset there)
//   scan         prefix sum of the counts (common/scan.cuh's three launches, or the report's scan_blocks,
//                scan_totals, add_sums: blockscan), only when binning (calm[1] is the scan's length); it
//                clears the counts as it reads them, in whole lines (clearing each particle's bin in
//                rebin_place, scattered, took 60% of that kernel: 195 against 80 us at 10M on an H200)
//   rebin_place  each slot's source row (perm) and the ids in slot order; the next step reads through
//                perm. Otherwise it adds the step's move to the drift. Either way it foresees whether
//                the next step bins (the drift and 9/8 of this step's move pass the margin): if so that
//                step counts. A wrong guess costs little: a binning it missed is counted by
//                rebin_count, one it foresaw in vain comes a step early.
// calm[5] (int): [0] the next step reads through perm, [1] this step's binning (the bins' count or 0),
// [2] the drift since the numbering, [3] the last step's largest move (floats as bits, rounded up;
// non-negative floats order like ints, so atomicMax keeps the largest), [4] the step counts into bins.
// At the 2020 preset a binning comes every 9-10 steps (10M, fp64): most steps are the step kernel alone.
//
// RANKS (an MPI rank's strip of bin rows, sim/particles/ranks_gpu.py): a step that renumbers counts each
// particle into its new bin (count_bins' atomic, fused), then the scan and place (perm only). The others
// keep the numbering (the host decides from the largest moves, every rank's: sim/particles/rank_drift.py);
// a particle that drifted out of the rows of its numbering searches the 9 bins around it now, but no row
// outside the window. Slots are numbered over the rank's window (its rows and two rows each side), and the
// step and place run on a range of slots [slot0, n) (the interior rows while the messages travel, then
// the rows at the ends). Right after a renumbering the step reads through perm, ghost slots (the
// neighbours' boundary rows, before and after mine) pointing at the ghost positions received after the
// state; the steps after it (step_rows) read each slot at its own row, the ghosts received at their slots.
// The rank's own kernels (rank_kernels.cuh) pack what it sends through perm, take in the ghosts, keep
// slots for arriving particles and gather the step's few host numbers for one copy.
// No host synchronisation inside a step (a rank: one small read per step).
//
// The force: one fp64 reciprocal square root and multiplications per interacting pair instead of
// the course's square root and three divisions (a few ulps apart, measured faster: the GPU checks
// against the CPU are tolerances). The cutoff test is on the squared distance, before any of it.
//
// REAL is double (the course's precision) or float. STATS adds the starters' distance statistics.
// TILED copies the slots each block reads to shared memory first (neighbours.cuh's Tile).
// TEXTURE reads positions and velocities through texture objects over the same linear buffers
// (fp64 pairs as int4 texels, reassembled with __hiloint2double; fp32 pairs as float2).

#include "common/scan.cuh"

#ifndef REAL
#define REAL double
#endif
// positions and velocities are (x, y) pairs: one 16-byte (fp64) or 8-byte load per particle
typedef struct __align__(2 * sizeof(REAL)) { REAL x, y; } REAL2;
#define CUTOFF ((REAL)0.01)
#define MIN_R ((REAL)(0.01 / 100))
#define MASS ((REAL)0.01)
#define DT ((REAL)0.0005)

#ifndef BLOCK
#define BLOCK 256
#endif

#ifdef TEXTURE
typedef cudaTextureObject_t SRC2;
__device__ __forceinline__ void texel(SRC2 t, int i, double& x, double& y)
{
    int4 v = tex1Dfetch<int4>(t, i);  // a double's low word comes first in memory
    x = __hiloint2double(v.y, v.x);
    y = __hiloint2double(v.w, v.z);
}
__device__ __forceinline__ void texel(SRC2 t, int i, float& x, float& y)
{
    float2 v = tex1Dfetch<float2>(t, i);
    x = v.x;
    y = v.y;
}
__device__ __forceinline__ REAL2 load2(SRC2 t, int i)
{
    REAL2 r;
    texel(t, i, r.x, r.y);
    return r;
}
#else
typedef const REAL2* __restrict__ SRC2;
__device__ __forceinline__ REAL2 load2(SRC2 p, int i) { return p[i]; }
#endif
#if !defined(STATS) && !defined(TILED)
// registers for 2048 threads an SM (uncapped one GPU's kept 40 and lost, a rank's 34 and 36; with the
// statistics 32 registers spill)
#define STEP_BOUNDS __launch_bounds__(BLOCK, 2048 / BLOCK > 32 ? 32 : 2048 / BLOCK)
#elif defined(TILED) && !defined(STATS)
// 40 registers (1536 threads an SM): uncapped it keeps 48 and loses (0.571 against 0.526 ms a step at 10M)
#define STEP_BOUNDS __launch_bounds__(BLOCK, 1536 / BLOCK)
#else
#define STEP_BOUNDS __launch_bounds__(BLOCK)
#endif
#ifdef RANKS
#define FIRST slot0  // the launch's first slot (a rank steps its interior rows and boundary rows apart)
#define ROW_LO row_lo  // the window's rows: a particle that drifted out of my strip searches no row beyond
#define ROW_HI row_hi
// go: the probe's verdict for a launch queued before the host read it (null: launched knowing)
#define RANGE_ARGS , int slot0, const int* go
#else
#define FIRST 0
#define ROW_LO 0
#define ROW_HI (nb - 1)
#define RANGE_ARGS
#endif

// Slot j's row: through perm right after a numbering, else the slot is the row.
__device__ __forceinline__ int row_of(bool through, const int* __restrict__ perm, int j)
{
    return through ? perm[j] : j;
}

// The acceleration factor of a pair at squared distance r2 (already clamped to min_r^2): the course's
// (1 - cutoff / r) / r2 / mass with one reciprocal square root.
__device__ __forceinline__ REAL coef_of(REAL r2)
{
    REAL s = rsqrt(r2);  // 1 / r
    return (1 - CUTOFF * s) * (s * s) * ((REAL)1 / MASS);
}

// A position's bin column and row; bin_of numbers the bin row by row. (A step takes the column and row from
// here: splitting a bin number back takes an integer division, dozens of instructions a thread.)
__device__ __forceinline__ int2 bin_xy(REAL x, REAL y, REAL inv_width, int nb)
{
    return int2{min(max((int)(x * inv_width), 0), nb - 1), min(max((int)(y * inv_width), 0), nb - 1)};
}

__device__ __forceinline__ int bin_of(REAL x, REAL y, REAL inv_width, int nb)
{
    int2 b = bin_xy(x, y, inv_width, nb);
    return b.y * nb + b.x;
}

// Count particle i at p into its bin (returned); the atomic's old value is its offset inside the bin.
__device__ __forceinline__ int count_into_bin(REAL2 p, int i, REAL inv_width, int nb, int* bin, int* offset,
                                              int* count)
{
    int b = bin_of(p.x, p.y, inv_width, nb);
    bin[i] = b;
    offset[i] = atomicAdd(&count[b], 1);
    return b;
}

// The largest of the block's moves into *most (a float's bits): one atomic a warp, and only where the warp
// beats what is there (the maximum settles early; an atomic a warp on one word would serialise).
__device__ __forceinline__ void keep_largest(int* most, float move)
{
    for (int offset = 16; offset > 0; offset >>= 1) move = fmaxf(move, __shfl_xor_sync(0xffffffffu, move, offset));
    if ((threadIdx.x & 31) == 0 && move > __int_as_float(*(volatile int*)most)) atomicMax(most, __float_as_int(move));
}

#ifdef RANKS
extern "C" __global__ void count_bins(const REAL2* pos, int n, REAL inv_width, int nb, int* bin, int* offset,
                                      int* count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) count_into_bin(pos[i], i, inv_width, nb, bin, offset, count);
}

// Slot start[bin] + offset of the bin order reads the particle the step left at index i (the scan
// has cleared the counts for the next step, as one GPU's does). Indices [slot0, n), the slots the step
// wrote; nothing when *go is 0 (the window outgrew perm).
extern "C" __global__ void place(const int* bin, const int* offset, const int* start, int n, int* perm RANGE_ARGS)
{
    if (go && !*go) return;
    int i = FIRST + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    perm[start[bin[i]] + offset[i]] = i;
}
#else
// One GPU (see the top): whether the rows may have left their bins by more than the margin since the numbering.
__device__ __forceinline__ bool must_rebin(const int* calm, float margin)
{
    return __fadd_ru(__int_as_float(calm[2]), __int_as_float(calm[3])) > margin;
}

// After each step (a grid of at most a few blocks an SM, striding): the verdict (calm[1]: the scan's length,
// bins or 0) and, when binning and the step did not count, each particle counted into its bin.
extern "C" __global__ void rebin_count(const REAL2* pos, int n, REAL inv_width, int nb, int* bin, int* offset,
                                       int* count, int* calm, float margin, int bins)
{
    bool counted = calm[4] != 0;
    bool rebin = counted || must_rebin(calm, margin);
    if (blockIdx.x == 0 && threadIdx.x == 0) calm[1] = rebin ? bins : 0;
    if (!rebin || counted) return;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        count_into_bin(pos[i], i, inv_width, nb, bin, offset, count);
}

// After the scan: when binning, slot start[bin] + offset reads row i (perm), the ids in slot order
// (id_sorted: the next step copies them back to id as it writes its rows there); the next step reads
// through perm and the drift starts again. Otherwise the drift grows by the move.
// Whether the next step counts: its move taken as 9/8 of this one's (the largest move changes slowly).
#define FORESIGHT 1.125f
extern "C" __global__ void rebin_place(const int* bin, const int* offset, const int* start, int n, int* perm,
                                       const int* id, int* id_sorted, int* calm, float margin)
{
    bool rebin = calm[1] != 0;
    if (blockIdx.x == 0 && threadIdx.x == 0) {  // (no block reads calm[0], [2], [3], [4])
        float moved = __int_as_float(calm[3]);
        float drift = rebin ? 0.0f : __fadd_ru(__int_as_float(calm[2]), moved);
        calm[0] = rebin;
        calm[2] = __float_as_int(drift);
        calm[3] = 0;
        calm[4] = __fadd_ru(drift, __fmul_ru(moved, FORESIGHT)) > margin;
    }
    if (!rebin) return;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int slot = start[bin[i]] + offset[i];
        perm[slot] = i;
        id_sorted[slot] = id[i];
    }
}

#endif

#include "particles/report_scan.cuh"  // the blockscan variant's three launches

#ifdef STATS
#include "particles/stats.cuh"  // the starters' distance statistics
#endif

#include "particles/neighbours.cuh"  // a particle's sums over the 9 bins around it

// The step's parameters, one list for each entry below.
#ifdef RANKS
#define LAST_PARAMS                                                                                      \
    int slot0, int row_lo, int row_hi, int s0, int s1, int* __restrict__ stray, const int* __restrict__ range
#define LAST_ARGS slot0, row_lo, row_hi, s0, s1, stray, range
#else
#define LAST_PARAMS int* __restrict__ calm
#define LAST_ARGS calm
#endif
#define STEP_PARAMS                                                                                              \
    SRC2 pos, SRC2 vel, const int* __restrict__ start, int n, REAL size, REAL inv_width, int nb,                 \
        REAL2* __restrict__ pos2, REAL2* __restrict__ vel2, int* __restrict__ bin, int* __restrict__ offset,     \
        int* __restrict__ count, unsigned long long* stats,                                                      \
        const int* __restrict__ perm, const int* __restrict__ id, int* __restrict__ id2, LAST_PARAMS
#define STEP_ARGS pos, vel, start, n, size, inv_width, nb, pos2, vel2, bin, offset, count, stats, perm, id, id2, LAST_ARGS

// One step for slot i: forces of its 9 neighbour bins (three runs of slots), move, reflect; the moved
// state (and id) written at row i. Through perm (right after a numbering) the particle and its neighbours
// are read at their rows and the ids copied through perm from id to id2; otherwise slot i is row i, and
// the ids stay where they are.
// One GPU (step): through when calm[0] (rebin_place's ids are in slot order, so perm is not needed for
// them). The step's largest move along an axis goes to calm[3]; when calm[4], each moved particle is
// counted into its bin for the binning that follows.
// RANKS: step reads through perm, step_rows by row (each a kernel of its own: one that reads through perm
// when asked keeps more registers than either). With count, each particle is counted into its new bin for
// the renumbering. Slots [slot0, n); rows [row_lo, row_hi] are the rank's window (its rows and two each
// side: the rows searched). In a renumbering step, a particle that lands outside bins [s0, s1) (its rows
// and one each side: it jumped past the row its neighbour takes leavers from) sets stray[0], and the rank
// takes the slow way this step (in the other steps such a particle has moved a bin since its numbering,
// past the drift margin: the host's test, rank_drift.py). The step's largest move along an axis goes to
// stray[1]. With range (the probe's spec: first, end, go), the slots come from the device: the rank queues
// the next step's interior before it reads the probe; nothing when go is 0.
__device__ __forceinline__ void step_slots(bool through, STEP_PARAMS)
{
#ifdef RANKS
    if (range) {
        if (!range[2]) return;
        slot0 = range[0];
        n = range[1];
    }
#endif
    int i = FIRST + blockIdx.x * blockDim.x + threadIdx.x;
    bool live = i < n;
#ifndef RANKS
    bool counting = calm[4] != 0;  // (read first: its answer is ready when the particle has moved)
#endif
    REAL2 own = live ? load2(pos, row_of(through, perm, i)) : REAL2{0, 0};
    REAL xi = own.x, yi = own.y;
#ifdef TILED
    __shared__ Tile tile;
    if (threadIdx.x == 0) {
        int first = FIRST + blockIdx.x * blockDim.x, last = min(first + (int)blockDim.x, n) - 1;
        REAL2 p = load2(pos, row_of(through, perm, first)), q = load2(pos, row_of(through, perm, last));
        tile.plan(bin_xy(p.x, p.y, inv_width, nb), bin_xy(q.x, q.y, inv_width, nb), start, nb, ROW_LO, ROW_HI);
    }
    __syncthreads();
    tile.fill(pos, perm, through);
    __syncthreads();
    const Tile* staged = &tile;
#else
    const Tile* staged = nullptr;
#endif
    Pairs acc;
    float moved = 0;  // along either axis, rounded up
    if (live) {
        int2 b = bin_xy(xi, yi, inv_width, nb);
        int bx = b.x, by = b.y;
        if (through)
            sum_neighbours(acc, start, Neighbours<true>{pos, perm, staged}, bx, by, nb, ROW_LO, ROW_HI, i, xi, yi);
        else
            sum_neighbours(acc, start, Neighbours<false>{pos, perm, staged}, bx, by, nb, ROW_LO, ROW_HI, i, xi, yi);
        REAL2 w = load2(vel, row_of(through, perm, i));
#ifdef RANKS
        if (through) id2[i] = id[perm[i]];  // (by row the ids stay: the rank swaps its two id arrays)
#else
        if (through) id2[i] = id[i];
#endif
        REAL u = w.x + acc.ax * DT, v = w.y + acc.ay * DT;
        REAL px = xi + u * DT, py = yi + v * DT;
        while (px < 0 || px > size) { px = px < 0 ? -px : 2 * size - px; u = -u; }
        while (py < 0 || py > size) { py = py < 0 ? -py : 2 * size - py; v = -v; }
        pos2[i] = REAL2{px, py};
        vel2[i] = REAL2{u, v};
#ifdef RANKS
        if (count && (unsigned)(count_into_bin(REAL2{px, py}, i, inv_width, nb, bin, offset, count) - s0) >=
                         (unsigned)(s1 - s0))
            stray[0] = 1;
#else
        if (counting) count_into_bin(REAL2{px, py}, i, inv_width, nb, bin, offset, count);
#endif
        moved = __double2float_ru(fmax(fabs((double)px - xi), fabs((double)py - yi)));
    }
#ifdef RANKS
    keep_largest(&stray[1], moved);
#else
    keep_largest(&calm[3], moved);
#endif
#ifdef STATS
    add_stats(stats, acc.dmin, acc.dsum, acc.pairs);
#endif
}

#ifdef RANKS
extern "C" __global__ void STEP_BOUNDS step(STEP_PARAMS) { step_slots(true, STEP_ARGS); }
extern "C" __global__ void STEP_BOUNDS step_rows(STEP_PARAMS) { step_slots(false, STEP_ARGS); }
#else
extern "C" __global__ void STEP_BOUNDS step(STEP_PARAMS) { step_slots(calm[0] != 0, STEP_ARGS); }
#endif

#ifdef RANKS
#include "particles/rank_kernels.cuh"  // an MPI rank's own kernels
#endif
