// Proximity pass on the GPU: the twin of proximity_cpu.py (z-sweep) and grid_cpu.py (grid).
//
// One source, four variants chosen at compile time:
//   VARIANT_GLOBAL   z-sweep, plain loads of float4 position (xyz + radius) and velocity (xyz; w is
//                    the spin's x, gpu.py)
//   VARIANT_TEXTURE  z-sweep, loads through texture objects over the same linear memory
//   VARIANT_SHARED   z-sweep, each block stages the idx1 balls its threads scan in shared memory
//   VARIANT_GRID     hashed uniform grid, counting sort, 27 neighbour cells (exact distance and
//                    speed bounds reject most pairs before the full test, grid.cuh)
// The state is already in the order the kernels walk (sorted by z_max, or by cell), so a ball's
// array index is its sorted index. Partners go into per-ball lists of capacity K stored slot-major
// (partners[slot * stride + ball]); counts keep counting past K so the host sees an overflow and
// rebuilds with room: a pair is never dropped.
//
// Build with --fmad=false: the predicate must round each operation on its own, like the CPU twin.
// PLANT_MARGIN (tests only) replaces the margin, to prove that verification catches a wrong kernel.

#define INF __int_as_float(0x7f800000)

// summary[]: what the host reads once per pass
#define FALLEN 0   // balls below the platform, sorted last, then dropped
#define LONGEST 1  // the longest partner list when one overflowed its capacity, else 0
#define TESTS 2    // predicate evaluations
#define PAIRS 3    // pairs found (z-sweep: once each; grid: once from each side)

// The launch's block size, so the compiler fits registers to it (the grid search needs many).
#ifndef BLOCK
#define BLOCK 1024
#endif

// Grid search: neighbour positions loaded BATCH together (one round of independent loads, not one
// dependent load per test); the tests still run one by one in index order. Measured at 10M on an
// H200 with 40 registers (grid.cuh): 2 beats 4 (647 against 682 us a pass) and 8 (occupancy).
#define BATCH 2

#ifdef PLANT_MARGIN
#define MARGIN(m) (PLANT_MARGIN)
#else
#define MARGIN(m) (m)
#endif

// |p1 - p9| - T*|v1 - v9| <= margin*(r1 + r9), each operation rounded on its own; in two parts so
// that the grid search can reject a pair from its positions alone (the speed bound in grid.cuh).
__device__ __forceinline__ float distance_squared(float4 p1, float4 p9)
{
    float dx = p1.x - p9.x, dy = p1.y - p9.y, dz = p1.z - p9.z;
    return dx * dx + dy * dy + dz * dz;
}
__device__ __forceinline__ float distance(float4 p1, float4 p9) { return sqrtf(distance_squared(p1, p9)); }
__device__ __forceinline__ float reach(float4 p1, float4 p9, float margin) { return MARGIN(margin) * (p1.w + p9.w); }
__device__ __forceinline__ bool approaches(float dist, float4 v1, float4 v9, float t, float within)
{
    float ux = v1.x - v9.x, uy = v1.y - v9.y, uz = v1.z - v9.z;
    float speed = sqrtf(ux * ux + uy * uy + uz * uz);
    return dist - t * speed <= within;
}
__device__ __forceinline__ bool in_proximity(float4 p1, float4 v1, float4 p9, float4 v9, float t, float margin)
{
    return approaches(distance(p1, p9), v1, v9, t, reach(p1, p9, margin));
}

// A ball's partner list gets `other`; past the capacity, the longest list is reported instead.
__device__ __forceinline__ void add_partner(int* count, int* partners, int stride, int k, int ball, int other,
                                            unsigned long long* summary)
{
    int slot = atomicAdd(&count[ball], 1);
    if (slot < k)
        partners[(size_t)slot * stride + ball] = other;
    else
        atomicMax(&summary[LONGEST], (unsigned long long)slot + 1);
}

// Totals of the pass, summed over the block first (one atomic per block, not per thread or warp:
// millions of atomics on two addresses would serialise). Every thread of the block must call it.
__device__ __forceinline__ void add_totals(unsigned long long* summary, unsigned long long tests,
                                           unsigned long long pairs)
{
    __shared__ unsigned long long warp_tests[32], warp_pairs[32];
    for (int offset = 16; offset > 0; offset >>= 1) {
        tests += __shfl_down_sync(0xffffffffu, tests, offset);
        pairs += __shfl_down_sync(0xffffffffu, pairs, offset);
    }
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) { warp_tests[warp] = tests; warp_pairs[warp] = pairs; }
    __syncthreads();
    if (warp == 0) {
        int warps = blockDim.x >> 5;
        tests = lane < warps ? warp_tests[lane] : 0;
        pairs = lane < warps ? warp_pairs[lane] : 0;
        for (int offset = 16; offset > 0; offset >>= 1) {
            tests += __shfl_down_sync(0xffffffffu, tests, offset);
            pairs += __shfl_down_sync(0xffffffffu, pairs, offset);
        }
        if (lane == 0) {
            atomicAdd(&summary[TESTS], tests);
            atomicAdd(&summary[PAIRS], pairs);
        }
    }
}

extern "C" __global__ void sweep_keys(const float4* pos, const float4* vel, int n, float t, float fallen_y,
                                      float* z_max, float* z_min, unsigned long long* summary)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 p = pos[i];
    float reach = fabsf(vel[i].z) * t;
    bool fallen = p.y < fallen_y;  // sorts last and scans nothing; the host then drops it
    if (fallen) atomicAdd(&summary[FALLEN], 1ull);
    z_max[i] = fallen ? INF : (p.z + reach) + p.w;
    z_min[i] = fallen ? INF : (p.z - reach) - p.w;
}

// Gather the state into the order of `order` (sorted index -> old index).
extern "C" __global__ void reorder(const long long* order, int n, const float4* pos, const float4* vel,
                                   const float2* spin_yz, float4* pos_out, float4* vel_out, float2* spin_yz_out)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    long long i = order[k];
    pos_out[k] = pos[i];
    vel_out[k] = vel[i];
    spin_yz_out[k] = spin_yz[i];
}

#if defined(VARIANT_GLOBAL) || defined(VARIANT_TEXTURE)

#ifdef VARIANT_TEXTURE
#define POS(i) tex1Dfetch<float4>(tex_pos, (i))
#define VEL(i) tex1Dfetch<float4>(tex_vel, (i))
#else
#define POS(i) pos[i]
#define VEL(i) vel[i]
#endif

// One thread per sorted ball idx9: scan idx1 = idx9-1, idx9-2, ... while z_max[idx1] >= z_min[idx9].
extern "C" __global__ void __launch_bounds__(BLOCK) sweep(const float4* __restrict__ pos, const float4* __restrict__ vel,
                                 cudaTextureObject_t tex_pos, cudaTextureObject_t tex_vel,
                                 const float* __restrict__ z_max, const float* __restrict__ z_min, int n,
                                 float t, float margin, int k, int stride, int* count, int* partners,
                                 unsigned long long* summary)
{
    int idx9 = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned scanned = 0, found = 0;
    float lo = idx9 < n ? z_min[idx9] : INF;
    if (lo != INF) {
        float4 p9 = POS(idx9), v9 = VEL(idx9);
        for (int idx1 = idx9 - 1; idx1 >= 0 && z_max[idx1] >= lo; --idx1) {
            ++scanned;
            if (in_proximity(POS(idx1), VEL(idx1), p9, v9, t, margin)) {
                add_partner(count, partners, stride, k, idx9, idx1, summary);
                add_partner(count, partners, stride, k, idx1, idx9, summary);
                ++found;
            }
        }
    }
    add_totals(summary, scanned, found);
}
#endif

#ifdef VARIANT_SHARED
// The block's threads scan overlapping windows below the block: stage them tile by tile, each tile
// the block's width, from just below the block's top downward, until every thread has stopped.
extern "C" __global__ void __launch_bounds__(BLOCK) sweep(const float4* __restrict__ pos, const float4* __restrict__ vel,
                                 cudaTextureObject_t, cudaTextureObject_t,
                                 const float* __restrict__ z_max, const float* __restrict__ z_min, int n,
                                 float t, float margin, int k, int stride, int* count, int* partners,
                                 unsigned long long* summary)
{
    extern __shared__ float4 tile[];
    float4* tile_pos = tile;
    float4* tile_vel = tile + blockDim.x;
    float* tile_zmax = (float*)(tile + 2 * blockDim.x);

    int first = blockIdx.x * blockDim.x;
    int idx9 = first + threadIdx.x;
    bool scanning = idx9 < n && z_min[idx9] != INF;
    float lo = 0.f;
    float4 p9, v9;
    if (scanning) { lo = z_min[idx9]; p9 = pos[idx9]; v9 = vel[idx9]; }
    int idx1 = idx9 - 1;
    unsigned scanned = 0, found = 0;
    int top = min(first + (int)blockDim.x, n) - 2;  // highest idx1 of any thread in the block
    while (__syncthreads_or(scanning) && top >= 0) {
        int bottom = top - (int)blockDim.x + 1;
        int j = bottom + (int)threadIdx.x;
        if (j >= 0) { tile_pos[threadIdx.x] = pos[j]; tile_vel[threadIdx.x] = vel[j]; tile_zmax[threadIdx.x] = z_max[j]; }
        __syncthreads();
        for (; scanning && idx1 >= 0 && idx1 >= bottom; --idx1) {
            int s = idx1 - bottom;
            if (tile_zmax[s] < lo) { scanning = false; break; }
            ++scanned;
            if (in_proximity(tile_pos[s], tile_vel[s], p9, v9, t, margin)) {
                add_partner(count, partners, stride, k, idx9, idx1, summary);
                add_partner(count, partners, stride, k, idx1, idx9, summary);
                ++found;
            }
        }
        if (idx1 < 0) scanning = false;
        top = bottom - 1;
    }
    add_totals(summary, scanned, found);
}
#endif

#ifdef VARIANT_GRID
#include "balls/grid.cuh"
#endif
