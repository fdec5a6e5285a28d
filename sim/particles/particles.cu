// CS 267 particles on the GPU: the twin of binning_cpu.py (same forces, same walls).
//
// The state stays sorted by bin (bins at least a cutoff wide, numbered row by row), so the 9
// neighbour bins of a particle are three contiguous runs of the sorted arrays. One step:
//   step     forces from the 9 bins, move, reflect, and count the particle into its new bin:
//            the atomic's old value is its offset in the bin (the report's binning)
//   scan     prefix sum of the bin counts: CuPy's cumsum, or the report's three launches
//            (scan_blocks, scan_sums, add_sums)
//   scatter  write each particle to bin_start[bin] + offset (with its id, to map back)
// No host synchronisation inside a step.
//
// REAL is double (the course's precision) or float. STATS adds the starters' distance statistics.
// TILED stages each block's neighbourhood (a contiguous slab of the sorted arrays) in shared memory.
// SKIN re-bins only when needed: bins are a skin wider than the cutoff, particles stay listed in
// the bin they were sorted into, and the device re-sorts once some particle has moved half a skin
// (no pair within the cutoff can then be missed); the host never decides, so a run of steps can
// be one CUDA graph.
//
// nvrtc-variants: -DREAL=double -DSTATS | -DREAL=double -DTILED -DBLOCK=1024 | -DREAL=float | -DREAL=float -DTILED -DSTATS | -DREAL=double -DSKIN -DSTATS | -DREAL=float -DSKIN

#ifndef REAL
#define REAL double
#endif
#define CUTOFF ((REAL)0.01)
#define MIN_R ((REAL)(0.01 / 100))
#define MASS ((REAL)0.01)
#define DT ((REAL)0.0005)

#ifndef BLOCK
#define BLOCK 256
#endif
#define TILE (4 * BLOCK > 2048 ? 2048 : 4 * BLOCK)

__device__ __forceinline__ int bin_of(REAL x, REAL y, REAL inv_width, int nb)
{
    int bx = min(max((int)(x * inv_width), 0), nb - 1);
    int by = min(max((int)(y * inv_width), 0), nb - 1);
    return by * nb + bx;
}

// Count each particle into its bin; the atomic's old value is its offset inside the bin.
extern "C" __global__ void count_bins(const REAL* x, const REAL* y, int n, REAL inv_width, int nb, int* bin,
                                      int* offset, int* count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int b = bin_of(x[i], y[i], inv_width, nb);
    bin[i] = b;
    offset[i] = atomicAdd(&count[b], 1);
}

extern "C" __global__ void scatter(const int* bin, const int* offset, const int* start, int n,
                                   const REAL* x, const REAL* y, const REAL* vx, const REAL* vy, const int* id,
                                   REAL* x2, REAL* y2, REAL* vx2, REAL* vy2, int* id2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int k = start[bin[i]] + offset[i];
    x2[k] = x[i];
    y2[k] = y[i];
    vx2[k] = vx[i];
    vy2[k] = vy[i];
    id2[k] = id[i];
}

// The report's scan, launch 1: each block scans 2 * blockDim counts in shared memory (inclusive,
// written to start + 1) and leaves its total in sums[block].
// The counts are zeroed as they are read, ready for the next binning. `when` (may be null): skip
// unless *when is set (the skin variant re-bins only when a particle may have left its bin).
extern "C" __global__ void scan_blocks(int* count, int m, int* start, int* sums, const int* when)
{
    if (when && !*when) return;
    extern __shared__ int part[];
    int base = 2 * blockIdx.x * blockDim.x, t = threadIdx.x, width = 2 * blockDim.x;
    part[2 * t] = base + 2 * t < m ? count[base + 2 * t] : 0;
    part[2 * t + 1] = base + 2 * t + 1 < m ? count[base + 2 * t + 1] : 0;
    if (base + 2 * t < m) count[base + 2 * t] = 0;
    if (base + 2 * t + 1 < m) count[base + 2 * t + 1] = 0;
    for (int stride = 1; stride < width; stride *= 2) {  // Hillis-Steele over the block's slice
        __syncthreads();
        int a = 2 * t, b = 2 * t + 1;
        int va = a >= stride ? part[a - stride] : 0, vb = b >= stride ? part[b - stride] : 0;
        __syncthreads();
        part[a] += va;
        part[b] += vb;
    }
    __syncthreads();
    if (base + 2 * t < m) start[base + 2 * t + 1] = part[2 * t];
    if (base + 2 * t + 1 < m) start[base + 2 * t + 2] = part[2 * t + 1];
    if (t == blockDim.x - 1) sums[blockIdx.x] = part[width - 1];
}

// Launch 2: one block turns the block totals into exclusive offsets, a chunk of blockDim at a time.
extern "C" __global__ void scan_sums(int* sums, int blocks, const int* when)
{
    if (when && !*when) return;
    __shared__ int warp_total[32];
    __shared__ int carry;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) carry = 0;
    __syncthreads();
    for (int chunk = 0; chunk < blocks; chunk += blockDim.x) {
        int i = chunk + threadIdx.x;
        int own = i < blocks ? sums[i] : 0, v = own;
        for (int offset = 1; offset < 32; offset *= 2) {  // inclusive scan within the warp
            int u = __shfl_up_sync(0xffffffffu, v, offset);
            if (lane >= offset) v += u;
        }
        if (lane == 31) warp_total[warp] = v;
        __syncthreads();
        int before = carry;
        for (int w = 0; w < warp; ++w) before += warp_total[w];
        if (i < blocks) sums[i] = before + v - own;
        __syncthreads();  // every thread has read carry and the warp totals
        if (threadIdx.x == blockDim.x - 1) carry = before + v;
        __syncthreads();
    }
}

// Launch 3: add each block's offset to its slice.
extern "C" __global__ void add_sums(int* start, int m, const int* sums, const int* when)
{
    if (when && !*when) return;
    int base = 2 * blockIdx.x * blockDim.x, t = threadIdx.x;
    int add = sums[blockIdx.x];
    if (base + 2 * t < m) start[base + 2 * t + 1] += add;
    if (base + 2 * t + 1 < m) start[base + 2 * t + 2] += add;
}

#ifdef STATS
// stats[]: per step, the closest pair (as the bits of a non-negative double, which order like
// integers), the sum of pair distances and their count (in cutoffs, r2 != 0 only).
__device__ __forceinline__ void add_stats(unsigned long long* stats, double dmin, double dsum, unsigned long long count)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        dmin = fmin(dmin, __shfl_down_sync(0xffffffffu, dmin, offset));
        dsum += __shfl_down_sync(0xffffffffu, dsum, offset);
        count += __shfl_down_sync(0xffffffffu, count, offset);
    }
    if ((threadIdx.x & 31) == 0 && count) {
        atomicMin(&stats[0], (unsigned long long)__double_as_longlong(dmin));
        atomicAdd((double*)&stats[1], dsum);
        atomicAdd(&stats[2], count);
    }
}

// After each step: the starters' running absmin / absavg, on the device (no host round trip).
extern "C" __global__ void fold_stats(unsigned long long* stats, double* totals)
{
    double dmin = __longlong_as_double((long long)stats[0]);
    double dsum = __longlong_as_double((long long)stats[1]);
    unsigned long long count = stats[2];
    if (count) { totals[1] += dsum / count; totals[2] += 1.0; }
    totals[0] = fmin(totals[0], dmin);
    stats[0] = (unsigned long long)__double_as_longlong(1.0);
    stats[1] = 0;
    stats[2] = 0;
}
#endif

// One step for the particle at sorted index i: forces of its 9 neighbour bins (three runs of the
// sorted arrays), move, reflect, then count it into its new bin for the next scatter.
extern "C" __global__ void __launch_bounds__(BLOCK) step(
    const REAL* __restrict__ x, const REAL* __restrict__ y, const REAL* __restrict__ vx,
    const REAL* __restrict__ vy, const int* __restrict__ start, int n, REAL size, REAL inv_width, int nb,
    REAL* __restrict__ x2, REAL* __restrict__ y2, REAL* __restrict__ vx2, REAL* __restrict__ vy2,
    int* __restrict__ bin, int* __restrict__ offset, int* __restrict__ count, unsigned long long* stats)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool live = i < n;
    REAL xi = live ? x[i] : 0, yi = live ? y[i] : 0;
#ifdef TILED
    // The block's neighbourhood is the slab of sorted particles from the first bin below-left of
    // its first particle to the last bin above-right of its last one.
    __shared__ REAL tile_x[TILE], tile_y[TILE];
    __shared__ int slab_first, slab_last;
    if (threadIdx.x == 0) {
        int first = blockIdx.x * blockDim.x, last = min(first + (int)blockDim.x, n) - 1;
        slab_first = start[max(bin_of(x[first], y[first], inv_width, nb) - nb - 1, 0)];
        slab_last = start[min(bin_of(x[last], y[last], inv_width, nb) + nb + 2, nb * nb)];
    }
    __syncthreads();
    int slab = min(slab_last - slab_first, TILE);  // a larger slab reads the rest from memory
    for (int k = threadIdx.x; k < slab; k += blockDim.x) {
        tile_x[k] = x[slab_first + k];
        tile_y[k] = y[slab_first + k];
    }
    __syncthreads();
#define XJ(j) ((unsigned)((j) - slab_first) < (unsigned)slab ? tile_x[(j) - slab_first] : x[j])
#define YJ(j) ((unsigned)((j) - slab_first) < (unsigned)slab ? tile_y[(j) - slab_first] : y[j])
#else
#define XJ(j) x[j]
#define YJ(j) y[j]
#endif
#ifdef STATS
    double dmin = 1.0, dsum = 0.0;
    unsigned long long pairs = 0;
#endif
    if (live) {
        REAL ax = 0, ay = 0;
        int b = bin_of(xi, yi, inv_width, nb), bx = b % nb, by = b / nb;
        int x0 = max(bx - 1, 0), x1 = min(bx + 1, nb - 1);
        for (int cy = max(by - 1, 0); cy <= min(by + 1, nb - 1); ++cy) {
            int end = start[cy * nb + x1 + 1];
            for (int j = start[cy * nb + x0]; j < end; ++j) {
                REAL dx = XJ(j) - xi, dy = YJ(j) - yi;
                REAL r2 = dx * dx + dy * dy;
                if (r2 > CUTOFF * CUTOFF) continue;
#ifdef STATS
                if (r2 != 0) {
                    double d = sqrt((double)r2) / 0.01;
                    dmin = fmin(dmin, d);
                    dsum += d;
                    ++pairs;
                }
#endif
                r2 = r2 > MIN_R * MIN_R ? r2 : MIN_R * MIN_R;
                REAL r = sqrt(r2);
                REAL coef = (1 - CUTOFF / r) / r2 / MASS;
                ax += coef * dx;
                ay += coef * dy;
            }
        }
        REAL u = vx[i] + ax * DT, v = vy[i] + ay * DT;
        REAL px = xi + u * DT, py = yi + v * DT;
        while (px < 0 || px > size) { px = px < 0 ? -px : 2 * size - px; u = -u; }
        while (py < 0 || py > size) { py = py < 0 ? -py : 2 * size - py; v = -v; }
        x2[i] = px;
        y2[i] = py;
        vx2[i] = u;
        vy2[i] = v;
        int nb_new = bin_of(px, py, inv_width, nb);
        bin[i] = nb_new;
        offset[i] = atomicAdd(&count[nb_new], 1);
    }
#ifdef STATS
    add_stats(stats, dmin, dsum, pairs);
#endif
}

#ifdef SKIN
// ctl[]: which of the two state buffers holds the state, whether to re-sort before the next step,
// and the largest squared move since the last sort (float bits, which order like ints).
#define CURRENT 0
#define REBIN 1
#define DRIFT 2

struct Buffers {  // in device memory: the kernels pick a set by ctl[CURRENT]
    REAL *x[2], *y[2], *vx[2], *vy[2];
    int* id[2];
};

// One step: forces from the 9 bins the particles were sorted into, move, walls; the state goes to
// the other buffer, at the same index; the largest move since the sort is kept in ctl[DRIFT].
extern "C" __global__ void __launch_bounds__(BLOCK) step_skin(
    const Buffers* buffers, const REAL* __restrict__ x0, const REAL* __restrict__ y0, const int* __restrict__ bin,
    const int* __restrict__ start, int n, REAL size, int nb, int* ctl, unsigned long long* stats)
{
    const Buffers buf = *buffers;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int cur = ctl[CURRENT];
    const REAL *x = buf.x[cur], *y = buf.y[cur];
    float moved = 0.f;
#ifdef STATS
    double dmin = 1.0, dsum = 0.0;
    unsigned long long pairs = 0;
#endif
    if (i < n) {
        REAL xi = x[i], yi = y[i], ax = 0, ay = 0;
        int b = bin[i], bx = b % nb, by = b / nb;
        int x0b = max(bx - 1, 0), x1b = min(bx + 1, nb - 1);
        for (int cy = max(by - 1, 0); cy <= min(by + 1, nb - 1); ++cy) {
            int end = start[cy * nb + x1b + 1];
            for (int j = start[cy * nb + x0b]; j < end; ++j) {
                REAL dx = x[j] - xi, dy = y[j] - yi;
                REAL r2 = dx * dx + dy * dy;
                if (r2 > CUTOFF * CUTOFF) continue;
#ifdef STATS
                if (r2 != 0) {
                    double d = sqrt((double)r2) / 0.01;
                    dmin = fmin(dmin, d);
                    dsum += d;
                    ++pairs;
                }
#endif
                r2 = r2 > MIN_R * MIN_R ? r2 : MIN_R * MIN_R;
                REAL r = sqrt(r2);
                REAL coef = (1 - CUTOFF / r) / r2 / MASS;
                ax += coef * dx;
                ay += coef * dy;
            }
        }
        REAL u = buf.vx[cur][i] + ax * DT, v = buf.vy[cur][i] + ay * DT;
        REAL px = xi + u * DT, py = yi + v * DT;
        while (px < 0 || px > size) { px = px < 0 ? -px : 2 * size - px; u = -u; }
        while (py < 0 || py > size) { py = py < 0 ? -py : 2 * size - py; v = -v; }
        int out = 1 - cur;
        buf.x[out][i] = px;
        buf.y[out][i] = py;
        buf.vx[out][i] = u;
        buf.vy[out][i] = v;
        buf.id[out][i] = buf.id[cur][i];
        float ddx = (float)(px - x0[i]), ddy = (float)(py - y0[i]);
        moved = ddx * ddx + ddy * ddy;
    }
    for (int offset = 16; offset > 0; offset >>= 1) moved = fmaxf(moved, __shfl_down_sync(0xffffffffu, moved, offset));
    if ((threadIdx.x & 31) == 0) atomicMax(&ctl[DRIFT], __float_as_int(moved));
#ifdef STATS
    add_stats(stats, dmin, dsum, pairs);
#endif
}

// After a step: re-sort if some particle may have left the reach of its bin's neighbours. The
// drift is measured in float; the limit keeps a margin of 1% of a skin for that rounding.
extern "C" __global__ void decide(int* ctl, float limit2)
{
    int rebin = ctl[DRIFT] > __float_as_int(limit2);
    ctl[REBIN] = rebin;
    if (!rebin) ctl[CURRENT] = 1 - ctl[CURRENT];  // the step's output is the state
}

extern "C" __global__ void count_skin(const Buffers* buffers, int n, REAL inv_width, int nb, int* bin_new,
                                      int* offset, int* count, const int* ctl)
{
    const Buffers buf = *buffers;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || !ctl[REBIN]) return;
    int src = 1 - ctl[CURRENT];
    int b = bin_of(buf.x[src][i], buf.y[src][i], inv_width, nb);
    bin_new[i] = b;
    offset[i] = atomicAdd(&count[b], 1);
}

extern "C" __global__ void scatter_skin(const Buffers* buffers, const int* bin_new, const int* offset,
                                        const int* start, int n, REAL* x0, REAL* y0, int* bin, const int* ctl)
{
    const Buffers buf = *buffers;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || !ctl[REBIN]) return;
    int dst = ctl[CURRENT], src = 1 - dst;
    int b = bin_new[i], k = start[b] + offset[i];
    REAL px = buf.x[src][i], py = buf.y[src][i];
    buf.x[dst][k] = px;
    buf.y[dst][k] = py;
    buf.vx[dst][k] = buf.vx[src][i];
    buf.vy[dst][k] = buf.vy[src][i];
    buf.id[dst][k] = buf.id[src][i];
    x0[k] = px;
    y0[k] = py;
    bin[k] = b;
}

extern "C" __global__ void settle(int* ctl)
{
    if (ctl[REBIN]) { ctl[DRIFT] = 0; ctl[REBIN] = 0; }
}
#endif
