// Spatial distance histogram on the GPU: the twin of sim/sdh/sdh_cpu.py. Every kernel is exact: a
// pair's bucket is (int)(sqrt(dx*dx + dy*dy + dz*dz) / w) in float64 as the course computes it
// (build with --fmad=false), clamped to the last bucket; counts are 64-bit.
//
// One source, five kernels chosen at compile time:
//   NAIVE       one thread per atom i, j > i, atomicAdd on the global histogram
//   NAIVE_PRIV  the same, counting into a per-block histogram in shared memory, merged at the end
//   TILED       Tu et al. Algorithm 3: structure-of-arrays inputs; a block keeps its atoms in
//               registers and streams later blocks' atoms through shared memory; its own pairs last
//   TILED_PRIV  TILED counting into a per-block shared histogram
//   FAST        TILED's shape with ATOMS atoms per thread, float32 distances, counters per lane (or
//               per warp) in shared memory, and a float64 recheck of every pair whose float32
//               distance lies within MARGIN of a bucket edge (float32's error here is below 0.03,
//               see sdh/gpu.py)
//   TENSOR      squared distances from the float64 tensor cores, counted by their integer part in bucket
//               units (no square root per pair), float64 recheck within a proven bound (sdh/tensor.cuh)

typedef unsigned long long u64;

__device__ __forceinline__ int bucket64(double dx, double dy, double dz, double w, int nb)
{
    return min((int)(sqrt(dx * dx + dy * dy + dz * dz) / w), nb - 1);
}

#if defined(NAIVE_PRIV) || defined(TILED_PRIV)
#define PRIVATE 1
#endif

#ifdef PRIVATE
#define COUNT(b) atomicAdd(&local[b], 1ull)
#define HISTOGRAM_START                                                                    \
    extern __shared__ u64 local[];                                                         \
    for (int b = threadIdx.x; b < nb; b += blockDim.x) local[b] = 0;                       \
    __syncthreads();
#define HISTOGRAM_END                                                                      \
    __syncthreads();                                                                       \
    for (int b = threadIdx.x; b < nb; b += blockDim.x)                                     \
        if (local[b]) atomicAdd(&hist[b], local[b]);
#else
#define COUNT(b) atomicAdd(&hist[b], 1ull)
#define HISTOGRAM_START
#define HISTOGRAM_END
#endif

#if defined(NAIVE) || defined(NAIVE_PRIV)
extern "C" __global__ void sdh(const double* x, const double* y, const double* z, long long n, double w, int nb,
                               u64* hist)
{
    HISTOGRAM_START
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) {
        double xi = x[i], yi = y[i], zi = z[i];
        for (long long j = i + 1; j < n; ++j) COUNT(bucket64(xi - x[j], yi - y[j], zi - z[j], w, nb));
    }
    HISTOGRAM_END
}
#endif

#if defined(TILED) || defined(TILED_PRIV)
extern "C" __global__ void sdh(const double* x, const double* y, const double* z, long long n, double w, int nb,
                               u64* hist)
{
    extern __shared__ u64 shared_words[];
    // shared memory: [histogram (PRIVATE)] then the streamed tile's x, y, z
    double* tile = (double*)shared_words;
#ifdef PRIVATE
    u64* local = shared_words;
    tile = (double*)(shared_words + nb);
    for (int b = threadIdx.x; b < nb; b += blockDim.x) local[b] = 0;
#endif
    double* tx = tile;
    double* ty = tile + blockDim.x;
    double* tz = tile + 2 * blockDim.x;
    long long base = blockIdx.x * (long long)blockDim.x;
    long long i = base + threadIdx.x;
    bool mine = i < n;
    double xi = mine ? x[i] : 0, yi = mine ? y[i] : 0, zi = mine ? z[i] : 0;
    for (long long tile_base = base + blockDim.x; tile_base < n; tile_base += blockDim.x) {
        __syncthreads();
        long long j = tile_base + threadIdx.x;
        if (j < n) { tx[threadIdx.x] = x[j]; ty[threadIdx.x] = y[j]; tz[threadIdx.x] = z[j]; }
        __syncthreads();
        int count = (int)min((long long)blockDim.x, n - tile_base);
        if (mine)
            for (int t = 0; t < count; ++t) COUNT(bucket64(xi - tx[t], yi - ty[t], zi - tz[t], w, nb));
    }
    __syncthreads();  // the block's own pairs: its atoms as the tile
    tx[threadIdx.x] = xi;
    ty[threadIdx.x] = yi;
    tz[threadIdx.x] = zi;
    __syncthreads();
    int count = (int)min((long long)blockDim.x, n - base);
    if (mine)
        for (int t = threadIdx.x + 1; t < count; ++t) COUNT(bucket64(xi - tx[t], yi - ty[t], zi - tz[t], w, nb));
    HISTOGRAM_END
}
#endif

#ifdef FAST
#ifndef ATOMS
#define ATOMS 4  // i-side atoms per thread: each streamed atom is read from shared memory once for them
#endif
#ifndef MARGIN
#define MARGIN 0.1  // recheck in float64 when the float32 distance is this close to a bucket edge
#endif
#ifndef BLOCK
#define BLOCK 1024
#endif

// xf: float4 (x, y, z, -) float32 copies; x, y, z: the float64 originals for rechecks.
// A block owns ATOMS * blockDim consecutive atoms and pairs them with every later atom.
// LANE_COUNTS: every lane of every warp owns a column of counters (counter b of lane l at
// b * 32 + l: no bank conflicts, and a shared atomic that nothing waits on); otherwise a histogram
// per warp (for bucket counts whose lane columns would not fit in shared memory).
// xf holds the coordinates divided by w, so a float32 distance is directly in buckets; `slots`
// counters per column (nb plus the few buckets a far-corner pair can reach past the last one, folded
// into the last bucket at the end) spare a clamp per pair.
extern "C" __global__ void __launch_bounds__(BLOCK) sdh(const float4* __restrict__ xf, const double* __restrict__ x,
                               const double* __restrict__ y, const double* __restrict__ z, long long n, double w,
                               int nb, int slots, u64* hist)
{
    extern __shared__ unsigned counters[];
    int warps = blockDim.x >> 5, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#ifdef LANE_COUNTS
    long long words = (long long)warps * slots * 32;
    unsigned* mine = counters + (long long)warp * slots * 32 + lane;
#define COUNT_FAST(b) atomicAdd(&mine[(b) * 32], 1u)  // no conflicts; no load-add-store chain to wait on
#else
    long long words = (long long)warps * slots;
    unsigned* mine = counters + warp * slots;
#define COUNT_FAST(b) atomicAdd(&mine[b], 1u)
#endif
    float4* tile = (float4*)(counters + ((words + 3) & ~3ll));
    for (long long b = threadIdx.x; b < words; b += blockDim.x) counters[b] = 0;

    const float lo = (float)(MARGIN / w);
    long long span = (long long)ATOMS * blockDim.x;
    long long base = blockIdx.x * span;
    float4 a[ATOMS];
    int ia[ATOMS];  // this thread's atoms, relative to base; past n: never counted
#pragma unroll
    for (int k = 0; k < ATOMS; ++k) {
        ia[k] = k * blockDim.x + threadIdx.x;
        a[k] = base + ia[k] < n ? xf[base + ia[k]] : make_float4(0.f, 0.f, 0.f, 0.f);
    }
    for (long long tile_base = base; tile_base < n; tile_base += blockDim.x) {
        __syncthreads();
        long long j = tile_base + threadIdx.x;
        tile[threadIdx.x] = j < n ? xf[j] : make_float4(0.f, 0.f, 0.f, 0.f);
        __syncthreads();
        int count = (int)min((long long)blockDim.x, n - tile_base);
        int first_j = (int)(tile_base - base);  // the tile's first atom, relative to base
#define PAIR(k, t)                                                                                      \
    {                                                                                                   \
        float dx = a[k].x - b4.x, dy = a[k].y - b4.y, dz = a[k].z - b4.z;                               \
        float d2 = __fmaf_rn(dz, dz, __fmaf_rn(dy, dy, __fmul_rn(dx, dx)));                            \
        float f = __fmul_rn(d2, rsqrtf(d2)); /* in buckets; d2 = 0 gives NaN: rechecked */             \
        /* floor(f) without conversions: adding 1.5 * 2^23 leaves round(f) in the low mantissa bits */  \
        /* (f < 2^22: the bucket counts that fit in shared memory keep it so); near = f - round(f) */   \
        float rounded = __fadd_rn(f, 12582912.0f);                                                      \
        float near = __fsub_rn(f, __fsub_rn(rounded, 12582912.0f));                                     \
        int bucket = __float_as_int(rounded) - 0x4B400000 - (near < 0.f);                               \
        if (!(fabsf(near) >= lo)) { /* near an edge (or NaN): the course's float64 decides */           \
            long long i = base + ia[k], jt = tile_base + (t);                                           \
            bucket = bucket64(x[i] - x[jt], y[i] - y[jt], z[i] - z[jt], w, nb);                         \
        }                                                                                               \
        COUNT_FAST(bucket);                                                                             \
    }
        if (first_j >= span && base + span <= n) {  // a later tile, every own atom real: no checks
            for (int t = 0; t < count; ++t) {
                float4 b4 = tile[t];
#pragma unroll
                for (int k = 0; k < ATOMS; ++k) PAIR(k, t)
            }
        } else {  // the block's own tiles count only j > i; atoms past n count nothing
            int limit[ATOMS];
#pragma unroll
            for (int k = 0; k < ATOMS; ++k)
                limit[k] = base + ia[k] >= n ? count : max(0, min(count, ia[k] + 1 - first_j));
            for (int t = 0; t < count; ++t) {
                float4 b4 = tile[t];
#pragma unroll
                for (int k = 0; k < ATOMS; ++k)
                    if (t >= limit[k]) PAIR(k, t)
            }
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < nb; b += blockDim.x) {
        u64 total = 0;
        for (int s = b; s < (b == nb - 1 ? slots : b + 1); ++s) {  // the last bucket takes the spare slots
#ifdef LANE_COUNTS
            for (int c = 0; c < warps * 32; ++c) total += counters[(long long)(c >> 5) * slots * 32 + s * 32 + (c & 31)];
#else
            for (int v = 0; v < warps; ++v) total += counters[v * slots + s];
#endif
        }
        if (total) atomicAdd(&hist[b], total);
    }
}
#endif

#ifdef TENSOR
#ifndef BLOCK
#define BLOCK 1024
#endif
#include "sdh/tensor.cuh"
#endif
